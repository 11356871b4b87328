package experiment

import (
	"io"
	"runtime"
	"runtime/pprof"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// BenchResult is one configuration's timing of training iterations.
type BenchResult struct {
	Method   string `json:"method"`
	Dataset  string `json:"dataset"`
	K        int    `json:"k"`
	Batch    int    `json:"batch"`
	StopGrad bool   `json:"stop_grad,omitempty"` // an annealed bound without gradients through the chain's scores
	// Samples is the number of MF samples or independent annealed chains per point (config.Samples;
	// omitted when 1).
	Samples     int     `json:"samples,omitempty"`
	CompileSecs float64 `json:"first_iteration_seconds"`
	MedianSecs  float64 `json:"median_iteration_seconds"`
	MinSecs     float64 `json:"min_iteration_seconds"`
	// HostSecs is the mean time per timed iteration that the step spent on its inputs before its
	// graph ran (train.Trainer.HostSeconds), included in the iteration times: drawing the batch and
	// noise and building the input tensors, or with Prefetch only waiting for the previous step's
	// goroutine to finish them.
	HostSecs float64 `json:"host_seconds_per_iteration"`
	// Prefetch: each step's inputs were prepared on another goroutine while the previous step ran
	// (the default; false builds them in the step).
	Prefetch   bool   `json:"prefetch"`
	Iterations int    `json:"timed_iterations"`
	Backend    string `json:"backend"`
	NumCPU     int    `json:"num_cpu"`
	// MatMulKernels: the pure-Go backend's matrix-product kernels in this process
	// (backend.MatMulKernels: avx512, avx2, portable or generic); timings compare only within one.
	MatMulKernels string `json:"matmul_kernels,omitempty"`
	// MatMulChoice says why those kernels ran (measured, cached, forced by VAISGPLVM_MATMUL, ...),
	// with the probe's seconds when measured, and the CPU model (backend.Chosen).
	MatMulChoice  *backend.KernelChoice `json:"matmul_choice,omitempty"`
	NegELBOAtLast float64               `json:"neg_elbo_per_point_last"`
	// CompiledGraphs counts the training graphs built over all the iterations (1: compiled once).
	CompiledGraphs int `json:"compiled_graphs"`
	// GraphOps and MatMuls count the operations of the training graph, and its matrix products
	// (Dot and DotGeneral).
	GraphOps int `json:"graph_ops"`
	MatMuls  int `json:"matmuls"`
	// Fit says how the expected log-likelihood was evaluated (for the first batch): "projected"
	// (D > M: O(M^2) per latent point, plus O(M D) per point with missing entries; gp.Projected) or
	// "means" ([B, D] predictive means).
	Fit string `json:"fit"`
}

// BenchOptions says how Bench times.
type BenchOptions struct {
	Iters    int  // timed iterations after one warm-up, >= 1
	Prefetch bool // prepare each step's inputs on another goroutine (train.Trainer.NoPrefetch off)
	// AfterWarmUp, when not nil, is called after the warm-up iteration (e.g. to start a profile).
	AfterWarmUp func() error
	// Profile, when not nil, receives a Go CPU profile (runtime/pprof) of the timed iterations:
	// the warm-up, which compiles the graph, stays out of it.
	Profile io.Writer
}

// Bench times the training iterations of cfg on dataset's x [N, D] (mask [N, D] or nil) on
// backend b (train.TimeSteps: one warm-up, then opt.Iters timed; the median is reported).
func Bench(cfg model.Config, dataset string, x, mask [][]float64, b backends.Backend, opt BenchOptions) (*BenchResult, error) {
	m, err := model.New(cfg, x, mask)
	if err != nil {
		return nil, err
	}
	tr, err := train.New(m, b)
	if err != nil {
		return nil, err
	}
	tr.NoPrefetch = !opt.Prefetch
	after := opt.AfterWarmUp
	if opt.Profile != nil {
		after = func() error {
			if opt.AfterWarmUp != nil {
				if err := opt.AfterWarmUp(); err != nil {
					return err
				}
			}
			return pprof.StartCPUProfile(opt.Profile)
		}
		defer pprof.StopCPUProfile()
	}
	first, times, host, err := train.TimeSteps(tr, opt.Iters, after)
	if err != nil {
		return nil, err
	}
	r := &BenchResult{Method: cfg.Method, Dataset: dataset, K: cfg.K, Batch: m.BatchSize(), StopGrad: cfg.StopGrad && m.Method.Annealed(),
		CompileSecs: first, MedianSecs: times[len(times)/2], MinSecs: times[0], HostSecs: host, Prefetch: opt.Prefetch,
		Iterations: opt.Iters, Backend: b.Name(), NumCPU: runtime.NumCPU(), MatMulKernels: backend.KernelsOf(b), MatMulChoice: kernelChoice(b), NegELBOAtLast: tr.Curve[len(tr.Curve)-1],
		CompiledGraphs: tr.CompiledGraphs(), Fit: "means"}
	r.GraphOps, r.MatMuls = tr.GraphOps()
	if cfg.Samples > 1 {
		r.Samples = cfg.Samples
	}
	if bt := train.Inputs(m, cfg.Seed, 0); m.UsesProjectedFit(r.Batch, len(bt.Mask)) {
		r.Fit = "projected"
	}
	return r, nil
}

// BenchData loads a benchmark's data: a tabular dataset as is (standardised with standardize;
// mask nil), or an image dataset on the unit pixel scale with Table 2's hidden pixels (seed 1;
// none when observed). An unknown dataset, or observed for a tabular one, is an *option.Error.
func BenchData(name string, observed, standardize bool) (x, mask [][]float64, err error) {
	b, err := data.Lookup(name)
	if err != nil {
		return nil, nil, option.Of("Dataset", "Dataset: %v", err)
	}
	if !b.Image {
		if observed {
			return nil, nil, option.Of("Observed", "Observed is for the image datasets (%s has no hidden entries)", name)
		}
		ds, err := protocol.LoadTabular(name, standardize)
		if err != nil {
			return nil, nil, err
		}
		return ds.X, nil, nil
	}
	ds, err := b.Load(data.Unit)
	if err != nil {
		return nil, nil, err
	}
	if observed {
		return ds.X, nil, nil
	}
	x, mask, _, err = protocol.HidePixels(ds.X, 1)
	return x, mask, err
}

// kernelChoice is backend.Chosen for the pure-Go backend, nil for any other (XLA).
func kernelChoice(b backends.Backend) *backend.KernelChoice {
	if backend.KernelsOf(b) == "" {
		return nil
	}
	c := backend.Chosen()
	return &c
}

// BenchMethods times each of methods (Bench) on the same data and backend, with the configuration
// configure returns for it; opt.Profile, when set, profiles the first method only (one profile per
// file).
func BenchMethods(methods []string, configure func(method string) (model.Config, error), dataset string, x, mask [][]float64,
	b backends.Backend, opt BenchOptions) ([]*BenchResult, error) {
	var results []*BenchResult
	for i, method := range methods {
		cfg, err := configure(method)
		if err != nil {
			return nil, err
		}
		o := opt
		if i > 0 {
			o.Profile = nil
		}
		r, err := Bench(cfg, dataset, x, mask, b, o)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

package paper

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Row6 is one line of Table 6: the time of MF, IWVI or VAIS with K samples / annealing steps.
type Row6 struct {
	Method        string   `json:"method"`
	K             int      `json:"k"` // 0 for MF (no samples or steps)
	Batch         int      `json:"batch"`
	FirstSecs     float64  `json:"first_iteration_seconds"` // includes graph compilation
	MedianSecs    float64  `json:"median_iteration_seconds"`
	MinSecs       float64  `json:"min_iteration_seconds"`
	HostSecs      float64  `json:"host_seconds_per_iteration"` // mean input preparation on the host, included above
	ItersPerEpoch int      `json:"iterations_per_epoch"`
	EpochSecs     float64  `json:"seconds_per_epoch"` // median iteration x iterations per epoch
	PaperA100     *float64 `json:"paper_a100_seconds_per_epoch,omitempty"`
}

// Result6 is a reproduced Table 6: the machine it ran on and one row per method and K.
type Result6 struct {
	Machine string  `json:"machine"`
	Reps    int     `json:"reps"`
	Rows    []Row6  `json:"rows"`
	Claims  []Claim `json:"claims"`
	// Settings holds how the result was made (the command sets the provenance keys); empty from
	// Table6 itself.
	Settings map[string]any `json:"settings,omitempty"`
}

func init() {
	if err := Register(Spec{Number: 6, Title: "seconds per epoch against K", Datasets: []string{"frey"},
		Methods: []string{"iwvi", "vais"}, Accepts: []string{"mf", "iwvi", "vais"}, Options: func() TableOptions { return &Table6Options{Ks: []int{5, 10, 15, 20, 25}, Reps: 5} },
		Sequential: true, PaperGradient: true, PaperReps: 10, Run: outputOf(Table6)}); err != nil {
		panic(err)
	}
}

// Made returns the result's settings (Output): empty from Table6 itself.
func (r *Result6) Made() map[string]any {
	if r.Settings == nil {
		r.Settings = map[string]any{}
	}
	return r.Settings
}

// Table6 reproduces the paper's Table 6: seconds per training iteration and per epoch (ceil(N / B)
// iterations) of IWVI and VAIS on the Table 2 Frey task for each K in o.Ks, the median of o.Reps
// timed iterations after one warm-up. Cells run one at a time.
func Table6(ctx context.Context, o Table6Options) (*Result6, error) { return table6(ctx, optsOf(&o)) }

func table6(ctx context.Context, o opts) (*Result6, error) {
	o, err := o.withDefaults(6)
	if err != nil {
		return nil, err
	}
	type cell struct {
		method string
		k      int
		cfg    model.Config
	}
	var cells []cell
	for _, method := range o.Methods {
		ks := o.Ks
		if method == "mf" {
			ks = ks[:1] // MF has no K: one row
		}
		for _, k := range ks {
			cfg, err := o.config(6, method, "frey", 1)
			if err != nil {
				return nil, err
			}
			cfg.K = k
			if err := cfg.Validate(); err != nil {
				return nil, option.Within(fmt.Sprintf("%s K = %d", method, k), err)
			}
			cells = append(cells, cell{method, k, cfg})
		}
	}
	o.Jobs = 1
	b, err := o.openBackend(cells[0].cfg.DType, 1)
	if err != nil {
		return nil, err
	}
	ds, err := protocol.LoadImages("frey", "unit")
	if err != nil {
		return nil, err
	}
	x, mask, _, err := protocol.HidePixels(ds.X, 1)
	if err != nil {
		return nil, err
	}
	res := &Result6{Reps: o.Reps, Machine: fmt.Sprintf("%s, %d CPUs (%s/%s), backend %s, %s, mini-batch %d, shared q(u) root %v",
		CPUModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, backend.Label(b), dtypeName(cells[0].cfg.DType),
		cells[0].cfg.Batch, cells[0].cfg.SharedQSqrt)}
	for _, c := range cells {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, err := train.NewFor(c.cfg, x, mask, b)
		if err != nil {
			return nil, err
		}
		first, times, host, err := train.TimeSteps(tr, o.Reps, nil)
		if err != nil {
			return nil, fmt.Errorf("%s K=%d: %w", c.method, c.k, err)
		}
		k := c.k
		if c.method == "mf" {
			k = 0
		}
		per := int(math.Ceil(float64(tr.Model.N) / float64(tr.Model.BatchSize())))
		r := Row6{Method: c.method, K: k, Batch: tr.Model.BatchSize(), FirstSecs: first, MedianSecs: times[len(times)/2],
			MinSecs: times[0], HostSecs: host, ItersPerEpoch: per}
		if v, ok := PaperTable6[c.method][k]; ok {
			r.PaperA100 = &v
		}
		r.EpochSecs = r.MedianSecs * float64(per)
		res.Rows = append(res.Rows, r)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "%s K=%d: %.3f s/iter\n", c.method, r.K, r.MedianSecs)
		}
	}
	res.Claims = claims6(res.Rows)
	return res, nil
}

func dtypeName(d string) string {
	if d == "" {
		return "float64"
	}
	return d
}

// claims6 checks, for every K that both IWVI and VAIS ran and the paper prints, which of the two is
// faster per epoch, in the paper (A100) and here.
func claims6(rows []Row6) []Claim {
	at := map[string]map[int]Row6{}
	for _, r := range rows {
		if at[r.Method] == nil {
			at[r.Method] = map[int]Row6{}
		}
		at[r.Method][r.K] = r
	}
	var ks []int
	for k := range at["vais"] {
		if _, ok := at["iwvi"][k]; ok && at["vais"][k].PaperA100 != nil && at["iwvi"][k].PaperA100 != nil {
			ks = append(ks, k)
		}
	}
	sort.Ints(ks)
	out := []Claim{}
	for _, k := range ks {
		i, v := at["iwvi"][k], at["vais"][k]
		out = append(out, orderClaim(fmt.Sprintf("s/epoch at K = %d", k), []string{"iwvi", "vais"},
			[]float64{*i.PaperA100, *v.PaperA100}, []float64{i.EpochSecs, v.EpochSecs}, true, "%.2f", " (A100)", " (this machine)"))
	}
	return out
}

// Tables returns Table 6 with the paper's A100 column, and the claims checked.
func (r *Result6) Tables() []report.Table {
	t := report.Table{Title: fmt.Sprintf("Table 6 on %s. Frey faces (N = 1965, D = 560, Q = 20, M = 50; the Table 2 missing-data "+
		"task). Seconds per epoch = median seconds per iteration (of %d after one warm-up) x ceil(N / B) iterations. "+
		"host ms/iter: the part of an iteration spent waiting for its inputs on the host (drawn ahead while the previous step runs). "+
		"The paper's column is its A100 GPU figure.", r.Machine, r.Reps),
		Header: []string{"method", "K", "s/iter (median)", "host ms/iter", "s/epoch", "first iteration s", "paper A100 s/epoch"}}
	for _, row := range r.Rows {
		p, k := "-", "-"
		if row.PaperA100 != nil {
			p = fmt.Sprint(*row.PaperA100)
		}
		if row.K > 0 {
			k = strconv.Itoa(row.K)
		}
		t.Rows = append(t.Rows, []string{row.Method, k, fmt.Sprintf("%.3f", row.MedianSecs), fmt.Sprintf("%.2g", 1000*row.HostSecs),
			fmt.Sprintf("%.2f", row.EpochSecs), fmt.Sprintf("%.1f", row.FirstSecs), p})
	}
	return withClaims([]report.Table{t}, r.Claims, nil) // Table 6 times iterations: no protocol of iterations and seeds
}

// Markdown renders Table 6 (Tables) as Markdown.
func (r *Result6) Markdown() string { return withMadeWith(report.Markdown(r.Tables()), r.Settings) }

// CPUModel returns the CPU model name from /proc/cpuinfo, or "unknown CPU".
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

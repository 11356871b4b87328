package main

import (
	"flag"
	"io"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// modelFlags registers the model settings shared by train and reproduce.
type modelFlags struct {
	q, m, k, samples, batch    int
	kernel, schedule           string
	eta, lr, scale0, noise0    float64
	unwhitened, diag, stopGrad bool
	learnEta, standardize      bool
}

func (f *modelFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.q, "q", 0, "latent dimensions Q (0 = the paper's: 10 oilflow, 9 wine)")
	fs.IntVar(&f.m, "m", 50, "inducing points M")
	fs.IntVar(&f.k, "k", 5, "IWVI samples / VAIS annealing steps K")
	fs.IntVar(&f.samples, "samples", 1, "MF samples / VAIS independent chains")
	fs.IntVar(&f.batch, "batch", 0, "mini-batch size B (0 = full batch)")
	fs.StringVar(&f.kernel, "kernel", "se", "kernel: se, matern32, matern52, linear")
	fs.StringVar(&f.schedule, "schedule", "linear", "annealing schedule: linear, sigmoid, power, learned")
	fs.Float64Var(&f.eta, "eta", 1e-3, "Langevin step size eta (initial value when --learn-eta)")
	fs.BoolVar(&f.learnEta, "learn-eta", false, "learn log eta_k")
	fs.Float64Var(&f.lr, "lr", 0.02, "Adam learning rate")
	fs.Float64Var(&f.scale0, "q0-scale", 0.1, "initial standard deviation of q0(h)")
	fs.Float64Var(&f.noise0, "noise0", 0.1, "initial noise variance as a fraction of the mean data variance")
	fs.BoolVar(&f.unwhitened, "unwhitened", false, "parameterise q(u) directly instead of whitened")
	fs.BoolVar(&f.diag, "diag-q0", false, "diagonal q0 covariance")
	fs.BoolVar(&f.stopGrad, "stop-grad", false, "stop gradients through the chain's scores")
	fs.BoolVar(&f.standardize, "standardize", false, "standardise every column (changes the metrics' scale)")
}

func (f *modelFlags) config(method, dataset string, seed uint64) (model.Config, error) {
	q := f.q
	if q == 0 {
		q = map[string]int{"oilflow": 10, "wine": 9}[dataset]
	}
	c := model.DefaultConfig(method, q)
	c.M, c.K, c.Samples, c.Batch, c.Kernel, c.Schedule = f.m, f.k, f.samples, f.batch, f.kernel, f.schedule
	c.Eta, c.LearnEta, c.LR, c.Scale0, c.Noise0 = f.eta, f.learnEta, f.lr, f.scale0, f.noise0
	c.Whitened, c.DiagQ0, c.StopGrad, c.Seed = !f.unwhitened, f.diag, f.stopGrad, seed
	if err := c.Validate(); err != nil {
		return c, usagef("%v", err)
	}
	return c, nil
}

func loadData(name string, standardize bool) (*data.Dataset, error) {
	if name != "oilflow" && name != "wine" {
		return nil, usagef("--dataset %q: want oilflow or wine", name)
	}
	ds, err := data.Load(name)
	if err != nil {
		return nil, err
	}
	if standardize {
		ds.X, _, _ = data.Standardize(ds.X)
	}
	return ds, nil
}

// parse parses flags, turning errors and stray arguments into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(nil)
			fs.PrintDefaults()
			return usagef("help requested")
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

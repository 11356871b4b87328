package cmf

import (
	"context"
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// maxElements bounds S x B x P per evaluation call (the decoder's output), so that K = 1000
// importance samples of 560-pixel images are evaluated a few points at a time.
const maxElements = 1 << 22

// Estimate is a per-point value (nats per data point, averaged over the points) with its Monte
// Carlo standard error.
type Estimate struct {
	PerPoint float64   `json:"per_point"`
	SE       float64   `json:"mc_se"`
	Points   []float64 `json:"-"` // each point's value
}

// evaluate runs the evaluation graph over every point with s draws each and returns, per point
// and draw, the bound and the log importance weight ([N][s] each).
func (m *Model) evaluate(s int) (bound, logW [][]float64, err error) {
	bound, logW = make([][]float64, m.N), make([][]float64, m.N)
	err = m.overPoints(s, false, func(idx []int, out []*tensors.Tensor) {
		bv, wv := vars.Flat64(out[0]), vars.Flat64(out[1]) // [s, b]
		for k := 0; k < s; k++ {
			for j, i := range idx {
				bound[i] = append(bound[i], bv[k*len(idx)+j])
				logW[i] = append(logW[i], wv[k*len(idx)+j])
			}
		}
	})
	return bound, logW, err
}

// overPoints runs the evaluation graph over every point in order, a chunk of points at a time
// with s draws each (zero: the variational means' path), and hands each chunk's indices and
// outputs (bound [s, b], log weights [s, b], z [s, b, Dz]) to use.
func (m *Model) overPoints(s int, zero bool, use func(idx []int, out []*tensors.Tensor)) error {
	m.build()
	return m.inChunks(m.eval, s, maxElements/(s*m.P), zero, nil, use)
}

// inChunks runs exec over every point in order, at most chunk points (and Cfg.Batch) at a time,
// with the inputs of s draws each (Model.inputs) followed by extra(b)'s for a chunk of b points
// (extra may be nil), and hands each chunk's indices and outputs to use.
func (m *Model) inChunks(exec *mlmodel.Exec, s, chunk int, zero bool, extra func(b int) []any,
	use func(idx []int, out []*tensors.Tensor)) error {
	chunk = max(1, min(m.Cfg.Batch, chunk))
	for lo := 0; lo < m.N; lo += chunk {
		idx := make([]int, 0, chunk)
		for i := lo; i < min(lo+chunk, m.N); i++ {
			idx = append(idx, i)
		}
		in, err := m.inputs(idx, s, zero)
		if err != nil {
			return err
		}
		if extra != nil {
			in = append(in, extra(len(idx))...)
		}
		out, err := exec.Exec(in...)
		if err != nil {
			return fmt.Errorf("cmf: evaluating: %w", err)
		}
		use(idx, out)
	}
	return nil
}

// Terms are the bound's terms per point (nats, averaged over the points, with their Monte Carlo
// standard errors): bound = A - B - C.
type Terms struct {
	A Estimate `json:"a_log_lik"`  // E log p(y | z)
	B Estimate `json:"b_kl_prior"` // E KL(q(z | .) || p(z)) (closed form or Monte Carlo, Config.TermB)
	C Estimate `json:"c_aux"`      // E[log q(X) - log r(X | z)] (cmf; 0 for the baselines)
}

// Terms returns the bound's terms A, B and C per point over draws noise draws per point (>= 2).
func (m *Model) Terms(draws int) (*Terms, error) {
	if draws < 2 {
		return nil, fmt.Errorf("cmf: terms need at least 2 draws for their standard errors, got %d", draws)
	}
	per := [3][][]float64{make([][]float64, m.N), make([][]float64, m.N), make([][]float64, m.N)}
	err := m.overPoints(draws, false, func(idx []int, out []*tensors.Tensor) {
		tv, b := vars.Flat64(out[3]), len(idx) // [3, s, b]
		for t := range 3 {
			for k := 0; k < draws; k++ {
				for j, i := range idx {
					per[t][i] = append(per[t][i], tv[(t*draws+k)*b+j])
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var out [3]Estimate
	for t := range out {
		if out[t], err = summarise(per[t], func(v []float64) float64 { return stat.Mean(v, nil) }, draws); err != nil {
			return nil, err
		}
	}
	return &Terms{A: out[0], B: out[1], C: out[2]}, nil
}

// GPSummary describes a trained cmf family's GP: how much it does beyond a per-point Gaussian.
type GPSummary struct {
	KernelVariance float64 `json:"kernel_variance"` // k_ii of the SE kernel
	// ZVariance is s^2 of q(z | .): the shared value, or with Config.PointVar the mean over points
	// and dimensions of s_id^2.
	ZVariance float64 `json:"z_variance"`
	KappaRMS  float64 `json:"kappa_rms"` // root mean square of the whitened q(u) mean kappa~ [M, Dz]
}

// GP returns the GP summary of a cmf model (nil for the baselines).
func (m *Model) GP() (*GPSummary, error) {
	if m.Cfg.Family != "cmf" {
		return nil, nil
	}
	read := func(scope, name string) ([]float64, error) {
		v := m.Ctx.Store().Scope(scope).GetVariable(name)
		if v == nil {
			return nil, fmt.Errorf("cmf: no variable %s/%s (the model has not been built)", scope, name)
		}
		t, err := v.Value()
		if err != nil {
			return nil, err
		}
		return vars.Flat64(t), nil
	}
	origin := [][]float64{make([]float64, m.Cfg.InputDim)} // k_ii is the same at every input (SE)
	kv, err := mlmodel.ExecOnceN(m.Backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, x *Node) []*Node {
		return []*Node{m.kernel.Diag(ctx.At("gp"), x)}
	}, origin)
	if err != nil {
		return nil, err
	}
	zScope := "/gp"
	if m.Cfg.PointVar {
		zScope = "/local"
	}
	zv, err := read(zScope, "raw_z_var")
	if err != nil {
		return nil, err
	}
	kappa, err := read("/gp", "q_mean_whitened")
	if err != nil {
		return nil, err
	}
	softplus := func(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }
	z := 0.0
	for _, v := range zv {
		z += softplus(v) / float64(len(zv))
	}
	return &GPSummary{KernelVariance: vars.Flat64(kv[0])[0], ZVariance: z, KappaRMS: math.Sqrt(floats.Dot(kappa, kappa) / float64(len(kappa)))}, nil
}

// Bound returns the bound per point, averaged over draws noise draws per point (>= 2), with its
// Monte Carlo standard error: the standard deviation over draws of the per-point average, over
// sqrt(draws). For cmf the per-point bounds of a held-out model (Fit) bound each point's log p(y_i)
// on its own. Errors: draws < 2, a non-finite value or a failed evaluation.
func (m *Model) Bound(draws int) (Estimate, error) {
	if draws < 2 {
		return Estimate{}, fmt.Errorf("cmf: bound needs at least 2 draws for its standard error, got %d", draws)
	}
	bound, _, err := m.evaluate(draws)
	if err != nil {
		return Estimate{}, err
	}
	return summarise(bound, func(v []float64) float64 { return stat.Mean(v, nil) }, draws)
}

// IWBound returns the importance-weighted bound per point with k samples per point (k = 1 is
// the bound itself; it rises toward log p(y_i) as k grows): log (1/k) sum_j w_j, averaged over
// reps independent repetitions (>= 2), with the standard error over repetitions.
func (m *Model) IWBound(k, reps int) (Estimate, error) {
	if k < 1 || reps < 2 {
		return Estimate{}, fmt.Errorf("cmf: importance-weighted bound needs k >= 1 and reps >= 2, got %d and %d", k, reps)
	}
	_, logW, err := m.evaluate(k * reps)
	if err != nil {
		return Estimate{}, err
	}
	per := func(v []float64) float64 { return floats.LogSumExp(v) - math.Log(float64(len(v))) }
	// Regroup each point's k*reps weights into reps groups of k.
	grouped := make([][]float64, m.N)
	for i, w := range logW {
		for r := 0; r < reps; r++ {
			grouped[i] = append(grouped[i], per(w[r*k:(r+1)*k]))
		}
	}
	return summarise(grouped, func(v []float64) float64 { return stat.Mean(v, nil) }, reps)
}

// summarise averages vals [N][reps] into an Estimate: each point's value is mean(vals[i]); the
// standard error is sd over r of (mean over i of vals[i][r]) / sqrt(reps).
func summarise(vals [][]float64, point func([]float64) float64, reps int) (Estimate, error) {
	e := Estimate{Points: make([]float64, len(vals))}
	totals := make([]float64, reps)
	for i, v := range vals {
		e.Points[i] = point(v)
		for r := range totals {
			totals[r] += v[r] / float64(len(vals))
		}
	}
	e.PerPoint = stat.Mean(totals, nil)
	e.SE = stat.StdDev(totals, nil) / math.Sqrt(float64(reps))
	if math.IsNaN(e.PerPoint) || math.IsInf(e.PerPoint, 0) || math.IsNaN(e.SE) || math.IsInf(e.SE, 0) {
		return e, option.Divergedf(0, "cmf: diverged: the estimate is %g ± %g", e.PerPoint, e.SE)
	}
	return e, nil
}

// Latents returns each point's latent z on the variational means' path [N, Dz]: for cmf,
// f(phi_i) at u's mean (X = phi, no noise); for the baselines the mean of q(z_i).
func (m *Model) Latents() ([][]float64, error) {
	if m == nil {
		return nil, fmt.Errorf("cmf: nil Model: make one with cmf.New")
	}
	out := make([][]float64, 0, m.N)
	err := m.overPoints(1, true, func(idx []int, res []*tensors.Tensor) {
		z, d := vars.Flat64(res[2]), m.Cfg.LatentDim
		for j := range idx {
			out = append(out, z[j*d:(j+1)*d])
		}
	})
	return out, err
}

// Decode returns the decoder's mean E[y | z] [len(z), P] for latents z [., Dz]: mu (Gaussian)
// or sigmoid of the logits (Bernoulli). Errors: latents of another width.
func (m *Model) Decode(z [][]float64) ([][]float64, error) {
	if len(z) == 0 || len(z[0]) != m.Cfg.LatentDim {
		return nil, fmt.Errorf("cmf: decode needs latents [., %d]", m.Cfg.LatentDim)
	}
	zt, err := vars.Matrix(z, m.dtype())
	if err != nil {
		return nil, err
	}
	exec, err := mlmodel.NewExec(m.Backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, z *Node) []*Node {
		mean, logVar := m.decode(ctx, z)
		if logVar == nil {
			return []*Node{Sigmoid(mean)}
		}
		return []*Node{mean, logVar} // the go backend fails on a graph whose computed node is unused
	})
	if err != nil {
		return nil, err
	}
	res, err := exec.Exec(zt)
	if err != nil {
		return nil, fmt.Errorf("cmf: decode: %w", err)
	}
	flat := vars.Flat64(res[0])
	out := make([][]float64, len(z))
	for i := range out {
		out[i] = flat[i*m.P : (i+1)*m.P]
	}
	return out, nil
}

// LogLikelihood estimates the decoder's log p(y_i) = log ∫ p(y_i | z) N(z | 0, I) dz of the
// points (nil: all), independent of any variational family, by annealed importance sampling from
// the prior to the posterior (package ais). Its per-point mean carries the delta-method standard
// error. A cancelled ctx stops it between two temperatures. Errors: a point out of range, a failed
// run, ctx's error.
func (m *Model) LogLikelihood(ctx context.Context, points []int, o ais.Options) (Estimate, *ais.Result, error) {
	if points == nil {
		for i := 0; i < m.N; i++ {
			points = append(points, i)
		}
	}
	rows := make([][]float64, len(points))
	for i, n := range points {
		if n < 0 || n >= m.N {
			return Estimate{}, nil, fmt.Errorf("cmf: point %d out of range [0, %d)", n, m.N)
		}
		rows[i] = m.Y[n]
	}
	yt, err := vars.Matrix(rows, m.dtype())
	if err != nil {
		return Estimate{}, nil, err
	}
	s, err := ais.New(ais.Target{Backend: m.Backend, Ctx: m.Ctx, DType: m.dtype(), B: len(points), Q: m.Cfg.LatentDim,
		LogLik: func(ctx *mlmodel.Scope, h *Node) *Node { return m.logLik(ctx, h, ConstTensor(h.Graph(), yt)) }})
	if err != nil {
		return Estimate{}, nil, err
	}
	res, err := s.Estimate(ctx, o)
	if err != nil {
		return Estimate{}, nil, fmt.Errorf("cmf: log-likelihood: %w", err)
	}
	e := Estimate{Points: res.LogZ}
	e.PerPoint, e.SE = res.Mean()
	return e, res, nil
}

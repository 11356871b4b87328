package evidence

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// CollapsedValue is the collapsed bound at a trained model's q0 and global parameters (Collapsed).
// BoundValue gives it with its gap to an evidence estimate.
type CollapsedValue struct {
	// NegBound is minus the collapsed bound per point (nats), the mean over Reps estimates, and SE
	// its Monte Carlo standard error over them.
	NegBound float64 `json:"neg_bound_per_point"`
	SE       float64 `json:"neg_bound_mc_se"`
	Samples  int     `json:"samples"` // draws of q0 per point behind each estimate's psi statistics
	Reps     int     `json:"reps"`
	What     string  `json:"what"`
}

// Collapsed returns the collapsed bound of Titsias & Lawrence (2010) at tr's q0, kernel, Z, noise
// and mean: the ELBO of the model's q0 with q(u) replaced by its optimum, u integrated out
// analytically (CollapsedBound minus KL(q0 || p)), with the psi statistics psi0 = sum_n E k(h_n, h_n),
// Psi1 = E k(h_n, Z) [N, M] and Psi2 = sum_n E k(Z, h_n) k(h_n, Z) [M, M] under q0, estimated from
// samples draws of q0 per point. It is the highest value any q(u) gives the mean-field bound at
// these parameters (the trained q(u)'s ELBO is at most this): the difference is what the trained
// q(u) and the Monte Carlo bound built on it cost, beyond q0 itself. The psi statistics enter through a log-determinant, so each estimate is
// biased by O(1/samples); reps independent estimates give the standard error. Data with missing
// entries is refused (the collapsed form needs every output at every point).
func Collapsed(tr *train.Trainer, samples, reps int, seed uint64) (*CollapsedValue, error) {
	if err := tr.Ready(); err != nil {
		return nil, err
	}
	m := tr.Model
	if m.HasMask() {
		return nil, fmt.Errorf("evidence: the collapsed bound needs fully observed data; this model has missing entries")
	}
	if samples < 1 || reps < 2 {
		return nil, fmt.Errorf("evidence: collapsed bound with %d samples and %d reps: want samples >= 1 and reps >= 2", samples, reps)
	}
	exec, err := mlmodel.NewExec(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, idx, eps *Node) []*Node {
		g := idx.Graph()
		q0 := latent.Batch(ctx, g, m.Latent, idx)
		post := gp.NewPosterior(ctx, g, m.Inducing, m.Kernel)
		s, n, q := eps.Shape().Dim(0), eps.Shape().Dim(1), eps.Shape().Dim(2)
		h := Reshape(q0.Sample(ConvertDType(eps, q0.Mean.DType())), s*n, q)
		kfu := post.Cross(h) // [S*N, M]
		psi0 := DivScalar(ReduceAllSum(post.KernelDiag(h)), float64(s))
		psi1 := ReduceMean(Reshape(kfu, s, n, -1), 0)                    // [N, M]
		psi2 := DivScalar(MatMul(Transpose(kfu, 0, 1), kfu), float64(s)) // [M, M]
		bias := post.Bias
		if bias == nil {
			bias = Zeros(g, shapes.Make(q0.Mean.DType(), m.D))
		}
		return []*Node{psi0, psi1, psi2, post.L, m.Lik.NoiseVariance(ctx, g), ReduceAllSum(q0.KLToPrior()), bias}
	})
	if err != nil {
		return nil, fmt.Errorf("evidence: collapsed bound: %w", err)
	}
	idx := make([]int32, m.N)
	for i := range idx {
		idx[i] = int32(i)
	}
	vals := make([]float64, reps)
	for r := range reps {
		eps := vars.Normal(rand.New(rand.NewPCG(seed, 0xc011+uint64(r))), samples, m.N, m.Cfg.Q)
		out, err := exec.Exec(idx, eps)
		if err != nil {
			return nil, fmt.Errorf("evidence: collapsed bound: %w", err)
		}
		st := PsiStats{Psi0: vars.Flat64(out[0])[0], Psi1: dense(out[1]), Psi2: dense(out[2]), L: dense(out[3]),
			NoiseVariance: vars.Flat64(out[4])[0]}
		b, err := CollapsedBound(centred(m.X, vars.Flat64(out[6])), st)
		if err != nil {
			return nil, err
		}
		vals[r] = -(b - vars.Flat64(out[5])[0]) / float64(m.N)
	}
	mean, sd := stat.MeanStdDev(vals, nil)
	return &CollapsedValue{NegBound: mean, SE: sd / math.Sqrt(float64(reps)), Samples: samples, Reps: reps,
		What: fmt.Sprintf("collapsed: q0 with the optimal q(u) (psi statistics from %d draws per point)", samples)}, nil
}

// PsiStats are the statistics of q0 that the collapsed bound needs (Collapsed): psi0 = sum_n
// E k(h_n, h_n), Psi1 = E k(h_n, Z) [N, M], Psi2 = sum_n E k(Z, h_n) k(h_n, Z) [M, M], with the
// Cholesky factor L of Kuu (jitter included) and the noise variance s^2.
type PsiStats struct {
	Psi0          float64
	Psi1, Psi2, L *mat.Dense
	NoiseVariance float64
}

// CollapsedBound returns the data term of the collapsed bound of Titsias & Lawrence (2010, the
// Bayesian GPLVM) for outputs y [N, D] (nats, all points): with beta = 1 / s^2 and A = Kuu +
// beta Psi2,
//
//	F = (N D / 2) log(beta / 2 pi) + (D / 2) (log|Kuu| - log|A|) - (beta / 2) sum_d y_d^T y_d
//	    + (beta^2 / 2) sum_d y_d^T Psi1 A^-1 Psi1^T y_d - (D beta / 2) (psi0 - tr(Kuu^-1 Psi2)).
//
// The bound is F - KL(q0 || p). Errors: a Psi2 or Kuu that is not positive definite.
func CollapsedBound(y [][]float64, st PsiStats) (float64, error) {
	n, d := len(y), len(y[0])
	beta := 1 / st.NoiseVariance
	var kuu, a, kinvPsi2 mat.Dense
	kuu.Mul(st.L, st.L.T())
	a.Scale(beta, st.Psi2)
	a.Add(&a, &kuu)
	var ca mat.Cholesky
	if ok := ca.Factorize(symmetric(&a)); !ok {
		return 0, fmt.Errorf("evidence: collapsed bound: Kuu + Psi2 / s^2 is not positive definite")
	}
	var ck mat.Cholesky
	if ok := ck.Factorize(symmetric(&kuu)); !ok {
		return 0, fmt.Errorf("evidence: collapsed bound: Kuu is not positive definite")
	}
	if err := ck.SolveTo(&kinvPsi2, st.Psi2); err != nil {
		return 0, fmt.Errorf("evidence: collapsed bound: %w", err)
	}
	ym := mat.NewDense(n, d, nil)
	yy := 0.0
	for i, r := range y {
		ym.SetRow(i, r)
		for _, v := range r {
			yy += v * v
		}
	}
	var c, ac mat.Dense
	c.Mul(st.Psi1.T(), ym) // [M, D]
	if err := ca.SolveTo(&ac, &c); err != nil {
		return 0, fmt.Errorf("evidence: collapsed bound: %w", err)
	}
	quad := mat.Sum(mulElem(&c, &ac))
	trace := mat.Trace(&kinvPsi2)
	fd, fn := float64(d), float64(n)
	return fn*fd/2*math.Log(beta/(2*math.Pi)) + fd/2*(ck.LogDet()-ca.LogDet()) - beta/2*yy +
		beta*beta/2*quad - fd*beta/2*(st.Psi0-trace), nil
}

// symmetric returns the symmetric part of a square matrix (rounding leaves products like L L^T
// a few ulps from symmetric).
func symmetric(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}

// mulElem returns the elementwise product of a and b.
func mulElem(a, b mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.MulElem(a, b)
	return &out
}

// centred returns x [N, D] minus the constant mean bias [D] of each output.
func centred(x [][]float64, bias []float64) [][]float64 {
	out := make([][]float64, len(x))
	for i, r := range x {
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = v - bias[j]
		}
	}
	return out
}

// dense returns a rank-2 tensor as a float64 gonum matrix.
func dense(t *tensors.Tensor) *mat.Dense {
	dims := t.Shape().Dimensions
	return mat.NewDense(dims[0], dims[1], vars.Flat64(t))
}

// BoundValue returns c as a line of Decompose's table. It has no gap: the collapsed bound is a
// lower bound on log p(Y | theta) with u integrated out, while the evidence reference (Estimate)
// is the local evidence at the trained q(u), which it may exceed by what the trained q(u) costs.
// Its KLU is 0: the optimal q(u) is integrated out, not paid for separately.
func (c *CollapsedValue) BoundValue() BoundValue {
	return BoundValue{Name: "collapsed", NegELBO: c.NegBound, SE: c.SE, Reference: c.What}
}

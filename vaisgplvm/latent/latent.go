// Package latent holds the variational distribution of the latent points,
// q0(h_n) = N(a_n, L_n L_n^T) with L_n lower triangular [Q, Q] (or diagonal), and the prior
// p(h_n) = N(0, I). All densities are in log space (nats).
//
// Variables (scope "latent"): mean [N, Q], raw_scale [N, Q, Q] (full: strict lower part free,
// diagonal through softplus) or raw_scale [N, Q] (diagonal).
package latent

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// Config describes q0 for N points in Q dimensions.
type Config struct {
	N, Q     int
	Diagonal bool        // diagonal L_n instead of full lower-triangular
	Mean0    [][]float64 // initial means a [N, Q] (PCA, see PCA)
	Scale0   float64     // initial standard deviation on the diagonal of L_n, > 0
}

// Validate reports inconsistent settings.
func (c *Config) Validate() error {
	if len(c.Mean0) != c.N || c.N == 0 || c.Q <= 0 || !(c.Scale0 > 0) {
		return fmt.Errorf("latent: need N = len(Mean0) > 0, Q > 0, Scale0 > 0; got N=%d len(Mean0)=%d Q=%d Scale0=%g",
			c.N, len(c.Mean0), c.Q, c.Scale0)
	}
	return nil
}

// Q0 is q0 restricted to a batch of points (selected by index), ready to sample and evaluate.
type Q0 struct {
	Q     int
	Mean  *Node // a_n: [B, Q]
	Scale *Node // L_n: [B, Q, Q] lower triangular with positive diagonal
	inv   *Node // L_n^-1: [B, Q, Q], built by LogProb when first needed
	ldet  *Node // log |L_n| [B], built on first use (every chain step's log q0 needs it)
	diag  bool  // L_n diagonal
}

// Batch reads the variables and gathers the points idx [B] (int) from them.
func Batch(ctx *mlmodel.Scope, g *Graph, c *Config, idx *Node) *Q0 {
	lc := ctx.At("latent")
	mean := Gather(vars.New(lc, "mean", c.Mean0).ValueGraph(g), InsertAxes(idx, -1))
	q := &Q0{Q: c.Q, Mean: mean}
	raw0 := vars.InvSoftplus(c.Scale0)
	if c.Diagonal {
		init := make([][]float64, c.N)
		for i := range init {
			init[i] = make([]float64, c.Q)
			for j := range init[i] {
				init[i][j] = raw0
			}
		}
		diag := Softplus(Gather(vars.New(lc, "raw_scale", init).ValueGraph(g), InsertAxes(idx, -1)))
		eye := InsertAxes(linalg.Eye(g, c.Q, diag.DType()), 0)
		q.Scale, q.diag = Mul(InsertAxes(diag, -1), eye), true
		return q
	}
	init := make([][][]float64, c.N)
	for i := range init {
		init[i] = make([][]float64, c.Q)
		for j := range init[i] {
			init[i][j] = make([]float64, c.Q)
			init[i][j][j] = raw0
		}
	}
	raw := Gather(vars.New(lc, "raw_scale", init).ValueGraph(g), InsertAxes(idx, -1)) // [B, Q, Q]
	eye := InsertAxes(linalg.Eye(g, c.Q, raw.DType()), 0)
	strict := TakeLowerTriangular(raw, -1)
	q.Scale = Add(strict, Mul(Softplus(raw), eye))
	return q
}

// Sample returns h = a + L eps for eps [S, B, Q] (standard normal): [S, B, Q].
func (q *Q0) Sample(eps *Node) *Node {
	return Add(InsertAxes(q.Mean, 0), applyScale(q.Scale, eps))
}

// applyScale returns L_n x_{s,n} for L [B, Q, Q] and x [S, B, Q]: [S, B, Q]. For one draw (S = 1,
// one VAIS chain) the product is a batched matrix-vector product in DotGeneral's own output
// order, so neither it nor its gradients transpose anything (Einsum's [B, Q, S] -> [S, B, Q]
// transpose, and its gradient's, are copies on the pure-Go backend); the values are the same.
func applyScale(l, x *Node) *Node {
	if x.Shape().Dim(0) != 1 {
		return Einsum("bij,sbj->sbi", l, x)
	}
	b, q := x.Shape().Dim(1), x.Shape().Dim(2)
	lx := DotGeneral(l, []int{2}, []int{0}, Reshape(x, b, q), []int{1}, []int{0}) // [B, Q]
	return Reshape(lx, 1, b, q)
}

// LogProb returns log q0(h) for any h [S, B, Q]: [S, B], through z = L_n^-1 (h - a_n).
//
// For a sample h = a + L eps use LogProbWhitened(eps) instead: it is the same function of the
// parameters (so the same value and total gradient), but exact, whereas L_n^-1 (L_n eps) can be
// far from eps: a triangular L_n with off-diagonal entries much larger than its diagonal has an
// inverse that grows exponentially with Q (seen in training: docs/benchmarks.md, "Figures behind
// the code's choices"), and the 0.5 |z|^2 of such a point can make an importance weight as large
// as the optimiser likes.
func (q *Q0) LogProb(h *Node) *Node {
	z := applyScale(q.inverse(), Sub(h, InsertAxes(q.Mean, 0)))
	logDet := q.logDetScale() // [B]
	c := -0.5 * float64(q.Q) * math.Log(2*math.Pi)
	return AddScalar(Sub(MulScalar(ReduceSum(Square(z), -1), -0.5), InsertAxes(logDet, 0)), c)
}

// LogProbWhitened returns log q0(a + L z) for whitened points z [S, B, Q]: log N(z | 0, I) - log|L|,
// [S, B]. Equal to LogProb(Sample(z)) without the triangular solve, and exact however
// ill-conditioned L_n is.
func (q *Q0) LogProbWhitened(z *Node) *Node {
	logDet := q.logDetScale() // [B]
	return Sub(LogPrior(z), InsertAxes(logDet, 0))
}

// KLToPrior returns KL(q0(h_n) || N(0, I)) in closed form, [B]:
// 0.5 (tr(L L^T) + |a|^2 - Q - log|L L^T|).
func (q *Q0) KLToPrior() *Node {
	tr := ReduceSum(Square(q.Scale), -1, -2)
	maha := ReduceSum(Square(q.Mean), -1)
	logDet := MulScalar(q.logDetScale(), 2)
	return MulScalar(AddScalar(Sub(Add(tr, maha), logDet), -float64(q.Q)), 0.5)
}

// LogPrior returns log N(h | 0, I) for h [..., Q]: [...].
func LogPrior(h *Node) *Node {
	q := h.Shape().Dim(-1)
	return AddScalar(MulScalar(ReduceSum(Square(h), -1), -0.5), -0.5*float64(q)*math.Log(2*math.Pi))
}

// diagonal extracts the diagonals of a batch [B, Q, Q] -> [B, Q].
func diagonal(m *Node) *Node {
	eye := InsertAxes(linalg.Eye(m.Graph(), m.Shape().Dim(-1), m.DType()), 0)
	return ReduceSum(Mul(m, eye), -1)
}

// Stopped returns q0 with its parameters under StopGradient: the same density, whose value
// carries no gradient to a_n and L_n.
func (q *Q0) Stopped() *Q0 {
	return &Q0{Q: q.Q, Mean: StopGradient(q.Mean), Scale: StopGradient(q.Scale), diag: q.diag}
}

// Inverse returns L_n^-1 [B, Q, Q] (built once per Q0).
func (q *Q0) Inverse() *Node { return q.inverse() }

// inverse returns L_n^-1 [B, Q, Q], built on first use.
func (q *Q0) inverse() *Node {
	if q.inv == nil {
		if q.diag {
			eye := InsertAxes(linalg.Eye(q.Scale.Graph(), q.Q, q.Scale.DType()), 0)
			q.inv = Mul(InsertAxes(Inverse(diagonal(q.Scale)), -1), eye)
		} else {
			q.inv = linalg.TriangularInverse(q.Scale)
		}
	}
	return q.inv
}

// logDetScale returns log|L_n| = sum_i log L_n,ii for each point: [B].
func (q *Q0) logDetScale() *Node {
	if q.ldet == nil {
		q.ldet = ReduceSum(Log(diagonal(q.Scale)), -1)
	}
	return q.ldet
}

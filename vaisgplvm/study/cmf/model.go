package cmf

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/memory"

	backends "github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	optimizers "github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
)

// Model is a GP-LVM-CMF model (or a baseline, by Cfg.Family) with its data and training state.
type Model struct {
	Cfg     Config
	N, P    int         // data points and data dimensions
	Y       [][]float64 // the data [N, P]
	Backend backends.Backend
	Ctx     *mlmodel.Scope // every variable: decoder, gp, aux, encoder, local
	Iter    int            // Adam steps taken
	Curve   []float64      // -bound per point, per step (mini-batch estimates)
	Seconds float64        // time spent in Train

	kernel     kernels.Kernel
	init       initial
	rng        *rand.Rand
	order      []int // this epoch's permutation of the points
	step, eval *mlmodel.Exec
	marginal   map[int]*mlmodel.Exec // MarginalBound's graphs, by K
	frozen     bool                  // globals frozen (a model of held-out points made by Fit)
}

// initial holds the initial values of the variables the model creates itself.
type initial struct {
	mean, logVar [][]float64 // locals: phi and log Phi (cmf) or the means and log variances of q(z_i)
	inducing     [][]float64 // Z_u [M, R]
	kappa        [][]float64 // whitened q(u) mean [M, Dz]
}

// New returns a model of data y [N, P] on backend b. The locals start at the data's principal
// components (unit variance; phi for cmf, the means of q(z_i) for meanfield) with variances 0.1,
// the inducing inputs at M distinct points' phi, kappa~ at standard normal draws, and the MLPs at
// GoMLX's default initialiser seeded by Cfg.Seed. Errors: a bad Config, ragged or non-finite data,
// or Bernoulli data outside {0, 1}.
func New(cfg Config, y [][]float64, b backends.Backend) (*Model, error) {
	m, err := checkedModel(cfg, y, b, len(y))
	if err != nil {
		return nil, err
	}
	if err := m.initialise(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkedModel checks cfg (M against maxM) and y and returns a model without initial values.
func checkedModel(cfg Config, y [][]float64, b backends.Backend, maxM int) (*Model, error) {
	n := len(y)
	if n == 0 || len(y[0]) == 0 {
		return nil, fmt.Errorf("cmf: no data")
	}
	cfg = cfg.WithDefaults(n)
	if err := cfg.validate(n, maxM); err != nil {
		return nil, err
	}
	p := len(y[0])
	if err := memory.Check(fmt.Sprintf("the %s model (%d points of %d values)", cfg.Family, n, p), cfg.Bytes(n, p),
		"Hidden", "AuxHidden", "InputDim", "LatentDim", "M", "Batch", "Samples"); err != nil {
		return nil, fmt.Errorf("cmf: %w", err)
	}
	if err := data.CheckMatrix(y, nil); err != nil {
		return nil, fmt.Errorf("cmf: %w", err)
	}
	for i, row := range y {
		for j, v := range row {
			if cfg.Likelihood == "bernoulli" && v != 0 && v != 1 {
				return nil, fmt.Errorf("cmf: row %d, column %d is %g: the Bernoulli decoder needs data in {0, 1}", i, j, v)
			}
		}
	}
	m := &Model{Cfg: cfg, N: n, P: p, Y: y, Backend: b, rng: rand.New(rand.NewPCG(cfg.Seed, 0xc3f))}
	var err error
	if m.kernel, err = kernels.New("se", kernels.Config{Q: cfg.InputDim, Variance: 1, Lengthscale: 1}); err != nil {
		return nil, err
	}
	m.Ctx = mlmodel.NewStore().RootScope()
	if err := vars.SetDType(m.Ctx, m.dtype()); err != nil {
		return nil, err
	}
	if err := m.Ctx.Store().SetRNGStateFromSeed(int64(cfg.Seed)); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Model) dtype() dtypes.DType { return vars.DTypeNamed(m.Cfg.DType) }

// localDim is the width of the per-point variational parameters: R (cmf) or Dz.
func (m *Model) localDim() int {
	if m.Cfg.Family == "cmf" {
		return m.Cfg.InputDim
	}
	return m.Cfg.LatentDim
}

func (m *Model) initialise() error {
	q := m.localDim()
	mean, err := pcaOrNoise(m.Y, q, m.rng)
	if err != nil {
		return err
	}
	m.init.mean = mean
	m.init.logVar = filled(m.N, q, math.Log(0.1))
	if m.Cfg.Family != "cmf" {
		return nil
	}
	for _, i := range m.rng.Perm(m.N)[:m.Cfg.M] {
		m.init.inducing = append(m.init.inducing, append([]float64(nil), mean[i]...))
	}
	for i := 0; i < m.Cfg.M; i++ {
		row := make([]float64, m.Cfg.LatentDim)
		for j := range row {
			row[j] = m.rng.NormFloat64()
		}
		m.init.kappa = append(m.init.kappa, row)
	}
	return nil
}

// pcaOrNoise returns the first q principal components of y (unit variance); where q exceeds
// min(N, P), or the data do not vary, the missing columns are small normal draws.
func pcaOrNoise(y [][]float64, q int, rng *rand.Rand) ([][]float64, error) {
	k := min(q, len(y), len(y[0]))
	pcs, err := latent.PCA(y, k)
	if err != nil {
		pcs = nil
	}
	out := make([][]float64, len(y))
	for i := range out {
		out[i] = make([]float64, q)
		for j := range out[i] {
			if pcs != nil && j < k && !math.IsNaN(pcs[i][j]) {
				out[i][j] = pcs[i][j]
			} else {
				out[i][j] = 0.1 * rng.NormFloat64()
			}
		}
	}
	return out, nil
}

func filled(n, d int, v float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
		for j := range out[i] {
			out[i][j] = v
		}
	}
	return out
}

// perPoint builds, for the points idx [B] with data y [B, P], the bound per point and sample
// log p(y | z) - reg [S, B], the log importance weights [S, B] and the samples z [S, B, Dz].
func (m *Model) perPoint(ctx *mlmodel.Scope, y, idx *Node, nz noise) (bound, logW, z *Node) {
	bound, logW, z, _ = m.perPointTerms(ctx, y, idx, nz)
	return bound, logW, z
}

// perPointTerms is perPoint with the bound's terms A (log p(y | z)), B (the KL to p(z)) and C
// (the auxiliary term) [S, B] each, stacked [3, S, B].
func (m *Model) perPointTerms(ctx *mlmodel.Scope, y, idx *Node, nz noise) (bound, logW, z, terms *Node) {
	d := m.draw(ctx, y, idx, nz)
	ll := m.logLik(ctx, d.z, y)
	return Sub(ll, d.reg), Sub(Add(ll, logStdNormal(d.z)), d.logQ), d.z, Stack([]*Node{ll, d.kl, d.aux}, 0)
}

// build compiles nothing yet: it defines the step (one Adam update on -bound / N, returning the
// mini-batch -bound per point) and the evaluation (bound, log weights and z per point and sample).
func (m *Model) build() {
	if m.step != nil {
		return
	}
	opt := optimizers.Adam().LearningRate(m.Cfg.LR).Done()
	m.step = mlmodel.MustNewExec(m.Backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, in []*Node) *Node {
		bound, _, _ := m.perPoint(ctx, in[0], in[1], noise{in[2], in[3], in[4], in[5]})
		loss := Neg(ReduceAllMean(bound)) // -bound per point: N/B sum_b over N
		opt.UpdateGraph(ctx, loss.Graph(), loss)
		return loss
	})
	m.eval = mlmodel.MustNewExec(m.Backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, in []*Node) []*Node {
		bound, logW, z, terms := m.perPointTerms(ctx, in[0], in[1], noise{in[2], in[3], in[4], in[5]})
		return []*Node{bound, logW, z, terms}
	})
}

// inputs returns the step's or evaluation's inputs for the points idx with s noise draws; zero
// noise gives the variational means' path (X = phi, u = L kappa~, f its mean, z = f).
func (m *Model) inputs(idx []int, s int, zero bool) ([]any, error) {
	rows := make([][]float64, len(idx))
	ids := make([]int32, len(idx))
	for i, n := range idx {
		rows[i], ids[i] = m.Y[n], int32(n)
	}
	y, err := vars.Matrix(rows, m.dtype())
	if err != nil {
		return nil, err
	}
	b, c := len(idx), m.Cfg
	mu, r := 1, 1
	if c.Family == "cmf" {
		mu, r = c.M, c.InputDim
	}
	dims := [][]int{{s, mu, c.LatentDim}, {s, b, r}, {s, b, c.LatentDim}, {s, b, c.LatentDim}}
	if c.Family != "cmf" {
		dims[0], dims[1], dims[2] = []int{s, 1, 1}, []int{s, 1, 1}, []int{s, 1, 1}
	}
	in := []any{y, tensors.FromValue(ids)}
	for _, d := range dims {
		t := vars.Normal(m.rng, d...)
		if zero {
			t = tensors.FromShape(t.Shape())
		}
		in = append(in, vars.Convert(t, m.dtype()))
	}
	return in, nil
}

// nextBatch returns the next Cfg.Batch points of a per-epoch random permutation.
func (m *Model) nextBatch() []int {
	if len(m.order) < m.Cfg.Batch {
		m.order = append(m.order, m.rng.Perm(m.N)...)
	}
	b := m.order[:m.Cfg.Batch]
	m.order = m.order[m.Cfg.Batch:]
	return b
}

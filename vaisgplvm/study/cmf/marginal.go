package cmf

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// MarginalBound returns, per point, the importance-weighted hierarchical bound L_K (Sobolev &
// Vetrov 2019) of the cmf family's marginal q(z_i) = ∫ q(z_i | X_i) q(X_i) dX_i:
//
//	L_K = E[log p(y_i | z) + log p(z) - log (1/(K+1)) sum_{k=0..K} q(z | X_k) q(X_k) / r(X_k | z)],
//
// where X_0 is the input that drew z (X_0 ~ q(X_i), z ~ q(z | X_0)) and X_1..X_K ~ r(X | z). L_0 is
// the collapsed bound (Bound); as K grows L_K rises to the marginal ELBO E_q(z)[log p(y | z) +
// log p(z) - log q(z)], which lies above L_0 by the auxiliary gap E_q(z) KL(q(X | z) || r(X | z)):
// what the auxiliary r(X | z) costs the family. Every L_K is a lower bound on log p(y_i). Nats per
// point, averaged over draws noise draws per point (>= 2) with their standard error. Errors: a
// model other than cmf with the collapsed bound, k < 0, draws < 2, a failed evaluation.
func (m *Model) MarginalBound(k, draws int) (Estimate, error) {
	switch {
	case m.Cfg.Family != "cmf" || m.Cfg.Bound != "collapsed":
		return Estimate{}, fmt.Errorf("cmf: the marginal bound needs the cmf family with the collapsed bound")
	case k < 0 || draws < 2:
		return Estimate{}, fmt.Errorf("cmf: marginal bound: want k >= 0 and draws >= 2, got %d and %d", k, draws)
	}
	exec, err := m.marginalExec(k)
	if err != nil {
		return Estimate{}, err
	}
	per := make([][]float64, m.N)
	xi := func(b int) []any { // r(X | z)'s noise [K, S, b, R]
		return []any{vars.Convert(vars.Normal(m.rng, max(k, 1), draws, b, m.Cfg.InputDim), m.dtype())}
	}
	err = m.inChunks(exec, draws, maxElements/(draws*max(m.P, (k+1)*m.Cfg.M)), false, xi, func(idx []int, out []*tensors.Tensor) {
		v := vars.Flat64(out[0]) // [draws, b]
		for s := range draws {
			for j, i := range idx {
				per[i] = append(per[i], v[s*len(idx)+j])
			}
		}
	})
	if err != nil {
		return Estimate{}, fmt.Errorf("cmf: marginal bound: %w", err)
	}
	return summarise(per, func(v []float64) float64 { return stat.Mean(v, nil) }, draws)
}

// marginalExec returns the graph of L_K per draw and point [S, B], built on first use.
func (m *Model) marginalExec(k int) (*mlmodel.Exec, error) {
	if e, ok := m.marginal[k]; ok {
		return e, nil
	}
	e, err := mlmodel.NewExec(m.Backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, in []*Node) *Node {
		return m.marginalGraph(ctx, in[0], in[1], noise{in[2], in[3], in[4], in[5]}, in[6], k)
	})
	if err != nil {
		return nil, fmt.Errorf("cmf: marginal bound: %w", err)
	}
	if m.marginal == nil {
		m.marginal = map[int]*mlmodel.Exec{}
	}
	m.marginal[k] = e
	return e, nil
}

// marginalGraph is L_K for each draw and point [S, B]: the collapsed family's draw (z from X_0)
// and its log q(z, X_0) - log r(X_0 | z), then K inputs X_k = r's mean + sd xi_k (xi [K, S, B, R])
// and theirs, log-mean-exp'd over k = 0..K.
func (m *Model) marginalGraph(ctx *mlmodel.Scope, y, idx *Node, nz noise, xi *Node, k int) *Node {
	d := m.cmfDraw(ctx, idx, nz)
	ll := m.logLik(ctx, d.z, y)
	logQ := d.logQ // [S, B]
	if k > 0 {
		s, b, r, dz := d.z.Shape().Dim(0), d.z.Shape().Dim(1), m.Cfg.InputDim, m.Cfg.LatentDim
		x := Add(InsertAxes(d.rMean, 0), Mul(InsertAxes(Exp(MulScalar(d.rLogVar, 0.5)), 0), xi)) // [K, S, B, R]
		logR := logNormalStd(xi, InsertAxes(d.rLogVar, 0))                                       // [K, S, B]
		logQx := logNormal(x, InsertAxes(d.gp.phi, 0, 0), InsertAxes(d.gp.logPhi, 0, 0))         // [K, S, B]
		a := m.project(d.gp, Reshape(x, k*s, b, r))                                              // [K S, B, M]
		f := Reshape(Einsum("sbm,md->sbd", a, d.gp.kappa), k, s, b, dz)                          // [K, S, B, Dz]
		logQz := logNormal(InsertAxes(d.z, 0), f, InsertAxes(Log(d.v), 0, 0))                    // [K, S, B]
		all := Concatenate([]*Node{InsertAxes(logQ, 0), Sub(Add(logQz, logQx), logR)}, 0)        // [K+1, S, B]
		logQ = bounds.LogMeanExp(all)
	}
	return Sub(Add(ll, logStdNormal(d.z)), logQ)
}

package cmf

import (
	"fmt"
	"math"
	"strings"

	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// WarmStartFraction is the default share of each mean-field variance v_i that WarmStart gives to
// q(X_i); the rest goes to the kernel variance and s^2.
const WarmStartFraction = 0.25

// WarmStart sets a cmf model's starting point, before its first step, from a trained mean-field
// model mf of the same data, latent dimension and decoder, so that its q(z_i) starts at
// mean-field's N(m_i, diag v_i) (approximately: exactly at the inducing inputs):
//
//   - the decoder's weights are mean-field's;
//   - q(X_i) = N(m_i, fraction v_i) (GP input dimension = latent dimension);
//   - the inducing inputs are M of the means m_i (chosen with the model's seed), the SE kernel's
//     variance kv0 = 0.05 mean(v) and its lengthscales twice the means' standard deviation, and
//     kappa~ = L^T Kuu^-1 Z_u, so that f's mean interpolates the identity at the inducing inputs;
//   - s^2 = what remains, (1 - fraction) v - kv0 (at least 1e-4): per point and dimension with
//     Config.PointVar, else its mean.
//
// r(X | z) keeps its own initialisation. Errors: m not a fresh cmf model, mf not a meanfield
// model of the same data, mismatched sizes, fraction outside [0, 1).
func (m *Model) WarmStart(mf *Model, fraction float64) error {
	c := m.Cfg
	switch {
	case c.Family != "cmf" || m.step != nil:
		return fmt.Errorf("cmf: WarmStart needs a cmf model before its first step")
	case mf.Cfg.Family != "meanfield" || mf.N != m.N || mf.P != m.P:
		return fmt.Errorf("cmf: WarmStart needs a mean-field model of the same %d x %d data", m.N, m.P)
	case c.InputDim != c.LatentDim || mf.Cfg.LatentDim != c.LatentDim || mf.Cfg.Hidden != c.Hidden || mf.Cfg.Likelihood != c.Likelihood:
		return fmt.Errorf("cmf: WarmStart needs GP input dim = latent dim = mean-field's (%d) and the same decoder", mf.Cfg.LatentDim)
	case !(fraction >= 0 && fraction < 1):
		return fmt.Errorf("cmf: WarmStart fraction %g: want [0, 1)", fraction)
	}
	mean, logVar, err := mf.locals()
	if err != nil {
		return err
	}
	if err := copyScope(mf.Ctx, m.Ctx, "/decoder"); err != nil {
		return err
	}
	n, dz := m.N, c.LatentDim
	meanVar, sd := 0.0, 0.0
	for i := range n {
		for j := range dz {
			meanVar += math.Exp(logVar[i][j]) / float64(n*dz)
			sd += mean[i][j] * mean[i][j] / float64(n*dz)
		}
	}
	sd = math.Sqrt(sd)
	kv0, ell := 0.05*meanVar, 2*max(sd, 1e-3)
	m.init.mean = mean
	m.init.logVar = make([][]float64, n)
	sVar := make([][]float64, n)
	sMean := 0.0
	for i := range n {
		m.init.logVar[i], sVar[i] = make([]float64, dz), make([]float64, dz)
		for j := range dz {
			v := math.Exp(logVar[i][j])
			m.init.logVar[i][j] = math.Log(max(fraction*v, 1e-8))
			sVar[i][j] = max((1-fraction)*v-kv0, 1e-4)
			sMean += sVar[i][j] / float64(n*dz)
		}
	}
	m.init.inducing = nil
	for _, i := range m.rng.Perm(n)[:c.M] {
		m.init.inducing = append(m.init.inducing, append([]float64(nil), mean[i]...))
	}
	if m.init.kappa, err = identityKappa(m.init.inducing, kv0, ell); err != nil {
		return err
	}
	gp := m.Ctx.At("gp")
	gp.At("kernel").VariableWithValue("raw_variance", vars.InvSoftplus(kv0))
	ls := make([]float64, dz)
	for j := range ls {
		ls[j] = vars.InvSoftplus(ell)
	}
	gp.At("kernel").VariableWithValue("raw_lengthscale", ls)
	if c.PointVar {
		raw := make([][]float64, n)
		for i := range raw {
			raw[i] = make([]float64, dz)
			for j := range raw[i] {
				raw[i][j] = vars.InvSoftplus(sVar[i][j])
			}
		}
		m.Ctx.At("local").VariableWithValue("raw_z_var", raw)
	} else {
		gp.VariableWithValue("raw_z_var", vars.InvSoftplus(sMean))
	}
	return nil
}

// identityKappa returns kappa~ = L^T Kuu^-1 Z [M, Dz] for inducing inputs z [M, Dz] under the SE
// kernel of variance kv and lengthscale ell (L the Cholesky factor of Kuu with the model's
// jitter): f's mean A kappa~ = k(x, Z) Kuu^-1 Z is then Z at the inducing inputs.
func identityKappa(z [][]float64, kv, ell float64) ([][]float64, error) {
	mm, dz := len(z), len(z[0])
	kuu := mat.NewSymDense(mm, nil)
	for i := range mm {
		for j := 0; j <= i; j++ {
			d := 0.0
			for k := range dz {
				d += (z[i][k] - z[j][k]) * (z[i][k] - z[j][k])
			}
			v := kv * math.Exp(-d/(2*ell*ell))
			if i == j {
				v += kv * jitter
			}
			kuu.SetSym(i, j, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(kuu) {
		return nil, fmt.Errorf("cmf: WarmStart: Kuu of the inducing inputs is not positive definite")
	}
	zm := mat.NewDense(mm, dz, nil)
	for i, r := range z {
		zm.SetRow(i, r)
	}
	var w, kappa mat.Dense
	if err := chol.SolveTo(&w, zm); err != nil {
		return nil, fmt.Errorf("cmf: WarmStart: %w", err)
	}
	var l mat.TriDense
	chol.LTo(&l)
	kappa.Mul(l.T(), &w)
	out := make([][]float64, mm)
	for i := range out {
		out[i] = mat.Row(nil, i, &kappa)
	}
	return out, nil
}

// copyScope copies the values of src's variables under the scope prefix into dst (created or
// overwritten there, trainable).
func copyScope(src, dst *mlmodel.Scope, prefix string) error {
	var err error
	n := 0
	vars.Each(src, func(v *mlmodel.Variable) {
		if err != nil || !strings.HasPrefix(v.Scope(), prefix) {
			return
		}
		t, e := v.Value()
		if e != nil {
			err = e
			return
		}
		c, e := t.Clone()
		if e != nil {
			err = e
			return
		}
		dst.Store().Scope(v.Scope()).VariableWithValue(v.Name(), c)
		n++
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("cmf: WarmStart: the mean-field model has no variables under %s (train it first)", prefix)
	}
	return err
}

// FreezeDecoder keeps the decoder's weights (scope /decoder) fixed in training: after WarmStart,
// a cmf model then fits only its q (GP, locals, r(X | z)) to mean-field's decoder, so that its
// bound against mean-field's measures what the family gains as a posterior approximation alone.
// Errors: a model that has taken a step, or one without decoder weights yet (call WarmStart
// first).
func (m *Model) FreezeDecoder() error {
	if m.step != nil {
		return fmt.Errorf("cmf: FreezeDecoder needs a model before its first step")
	}
	n := 0
	vars.Each(m.Ctx, func(v *mlmodel.Variable) {
		if strings.HasPrefix(v.Scope(), "/decoder") {
			v.SetTrainable(false)
			n++
		}
	})
	if n == 0 {
		return fmt.Errorf("cmf: FreezeDecoder: no decoder weights yet (call WarmStart first)")
	}
	return nil
}

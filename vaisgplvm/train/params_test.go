package train_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestParamsAtInitialisation: before any step the fitted values are the documented initial
// values (PCA means, lengthscale 1, q0 sd Scale0, noise Noise0 x mean data variance + 1e-6,
// linear schedule k/K, eta = 0.25/K, per-point step-size factors 1 with PointEta and none
// without).
func TestParamsAtInitialisation(t *testing.T) {
	tr := toy.Trainer(t, "vais", nil)
	p, err := tr.Params()
	if err != nil {
		t.Fatal(err)
	}
	m := tr.Model
	pca, err := latent.PCA(m.X, m.Cfg.Q)
	if err != nil {
		t.Fatal(err)
	}
	for n := range pca {
		for q := range pca[n] {
			if math.Abs(p.LatentMean[n][q]-pca[n][q]) > 1e-12 || math.Abs(p.LatentSD[n][q]-m.Cfg.Scale0) > 1e-12 {
				t.Fatalf("latent %d,%d: mean %g sd %g, want %g and %g", n, q, p.LatentMean[n][q], p.LatentSD[n][q], pca[n][q], m.Cfg.Scale0)
			}
		}
	}
	for q, l := range p.Lengthscales {
		if math.Abs(l-1) > 1e-12 {
			t.Errorf("lengthscale %d = %g, want 1", q, l)
		}
	}
	want := m.Lik.NoiseVariance0 + 1e-6
	if math.Abs(p.NoiseVariance-want) > 1e-9*want {
		t.Errorf("noise variance %g, want %g", p.NoiseVariance, want)
	}
	if len(p.Z) != m.Cfg.M || len(p.Z[0]) != m.Cfg.Q {
		t.Errorf("Z is %dx%d, want %dx%d", len(p.Z), len(p.Z[0]), m.Cfg.M, m.Cfg.Q)
	}
	k := m.Cfg.K
	for i := 0; i < k; i++ {
		if math.Abs(p.Betas[i]-float64(i+1)/float64(k)) > 1e-12 || math.Abs(p.Etas[i]-model.EtaTimesK/float64(k)) > 1e-12 {
			t.Errorf("step %d: beta %g eta %g", i, p.Betas[i], p.Etas[i])
		}
	}
	if p.PointEtaFactors != nil {
		t.Errorf("per-point step-size factors %v without PointEta, want nil", p.PointEtaFactors)
	}
	tp := toy.Trainer(t, "vais", func(c *model.Config) { c.PointEta = true })
	if p, err = tp.Params(); err != nil {
		t.Fatal(err)
	}
	for n, f := range p.PointEtaFactors {
		if f != 1 {
			t.Errorf("point %d: step-size factor %g before training, want 1", n, f)
		}
	}
	if len(p.PointEtaFactors) != m.N {
		t.Errorf("%d per-point step-size factors, want N = %d", len(p.PointEtaFactors), m.N)
	}
}

// TestChainPath: the path has K+1 states; its start is a_n + L_n eps_0 with eps_0 the first Q
// normals of PCG(seed, 0x9a7) (at initialisation L_n = Scale0 I), and the chain moves.
func TestChainPath(t *testing.T) {
	tr := toy.Trainer(t, "vais", nil)
	if _, _, err := toy.Trainer(t, "mf", nil).ChainPath(0, 1); err == nil {
		t.Error("MF has no chain: want an error")
	}
	if _, _, err := tr.ChainPath(30, 1); err == nil {
		t.Error("point 30 of 30: want an error")
	}
	path, logW, err := tr.ChainPath(4, 7)
	if err != nil {
		t.Fatal(err)
	}
	q := tr.Model.Cfg.Q
	if len(path) != tr.Model.Cfg.K+1 || len(path[0]) != q || math.IsInf(logW, 0) {
		t.Fatalf("path %d states of %d, log w %g", len(path), len(path[0]), logW)
	}
	p, _ := tr.Params()
	rng := rand.New(rand.NewPCG(7, 0x9a7))
	moved := 0.0
	for j := 0; j < q; j++ {
		want := p.LatentMean[4][j] + tr.Model.Cfg.Scale0*rng.NormFloat64()
		if math.Abs(path[0][j]-want) > 1e-12 {
			t.Errorf("H_0[%d] = %g, want %g", j, path[0][j], want)
		}
		moved += math.Abs(path[len(path)-1][j] - path[0][j])
	}
	if moved == 0 {
		t.Error("the chain did not move")
	}
}

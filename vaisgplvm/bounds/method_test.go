package bounds

import (
	"slices"
	"strings"
	"testing"
)

// TestRegistry: the built-in bounds are registered in the tables' order, a name cannot be taken
// twice, an unknown name's error lists the registered ones, and each bound's sizes mean what the
// paper's K and the samples/chains count mean for it.
func TestRegistry(t *testing.T) {
	if n := Names(); len(n) < 3 || !slices.Equal(n[:3], []string{"mf", "iwvi", "vais"}) {
		t.Errorf("Names() = %v, want mf, iwvi, vais first", n)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "mf, iwvi, vais") {
		t.Errorf("Lookup(nope): %v", err)
	}
	if err := Register(mfMethod{}); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("registering mf twice: %v, want an error", err)
	}
	s := Sizes{K: 5, Samples: 3}
	for _, c := range []struct {
		name                      string
		draws, steps, evals, ceil int
		annealed, weighted        bool
		particles                 Sizes
	}{
		{"mf", 3, 1, 3, 1, false, false, s},
		{"iwvi", 5, 1, 5, 1, false, true, Sizes{K: 25, Samples: 3}},
		{"vais", 3, 5, 18, 6, true, true, Sizes{K: 5, Samples: 25}},
	} {
		m, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := m.Particles(s, 25)
		if m.Draws(s) != c.draws || m.ChainSteps(s) != c.steps || m.Evaluations(s) != c.evals || m.CeilingDraws(s) != c.ceil ||
			m.Annealed() != c.annealed || ok != c.weighted || p != c.particles {
			t.Errorf("%s: draws %d, steps %d, evaluations %d, ceiling draws %d, annealed %v, particles %v %v", c.name,
				m.Draws(s), m.ChainSteps(s), m.Evaluations(s), m.CeilingDraws(s), m.Annealed(), p, ok)
		}
	}
	vais, _ := Lookup("vais")
	if r := vais.Recon(s, 16); r.Samples != 16 || r.K != 5 {
		t.Errorf("VAIS reconstruction sizes %v, want 16 chains of 5 steps", r)
	}
	if iwvi, _ := Lookup("iwvi"); iwvi.Validate(Sizes{K: 0}) == nil {
		t.Error("IWVI with K = 0: want an error")
	}
}

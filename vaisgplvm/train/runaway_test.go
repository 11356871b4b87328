package train

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// healthyCurve is a noisy training curve [n]: from 1000 down toward -500 per point, with batch
// noise of 20 and a slow rise of 30 at the end (as MF's Frey curve has at 3000 iterations).
func healthyCurve(n int) []float64 {
	c := make([]float64, n)
	for i := range c {
		t := float64(i)
		c[i] = -500 + 1500*math.Exp(-t/150) + 20*math.Sin(1.7*t) + 30*math.Max(0, t-2000)/1000
	}
	return c
}

// TestCheckRunaway: a healthy curve passes at every length; one whose last block climbs back by
// 40% of the progress fails at that block's end, naming the iteration, the block and the advice
// (StopGrad for VAIS with the full gradient only); by 20% it passes; off block ends and before the
// third block nothing is checked.
func TestCheckRunaway(t *testing.T) {
	c := healthyCurve(3000)
	for n := 1; n <= len(c); n++ {
		if err := CheckRunaway(c[:n], 0.02, true); err != nil {
			t.Fatalf("healthy curve stopped at %d: %v", n, err)
		}
	}
	up := func(share float64) []float64 {
		d := append([]float64(nil), c[:2000]...)
		start := d[50] // about the first block's median
		best := blockMean(d, 1900)
		for i := range 100 {
			d = append(d, best+share*(start-best)+20*math.Sin(1.7*float64(i)))
		}
		return d
	}
	err := CheckRunaway(up(0.4), 0.02, true)
	var f *option.Failure
	if !errors.As(err, &f) || !strings.Contains(err.Error(), "diverged at iteration 2100") ||
		!strings.Contains(err.Error(), "iterations 2001-2100") || !strings.Contains(f.Error(), "StopGrad") {
		t.Fatalf("a curve giving back 40%% of its progress: %v; want an option.Failure at iteration 2100 advising StopGrad", err)
	}
	if d := option.AsDiverged(err); d == nil || d.Iteration != 2100 {
		t.Errorf("the stop is %#v; want a Diverged at iteration 2100", d)
	}
	if err := CheckRunaway(up(0.4), 0.02, false); err == nil || strings.Contains(err.Error(), "StopGrad") {
		t.Errorf("IWVI: %v; want the stop, advising the learning rate only", err)
	}
	if err := CheckRunaway(up(0.2), 0.02, true); err != nil {
		t.Errorf("a curve giving back 20%% of its progress stopped: %v", err)
	}
	if err := CheckRunaway(up(0.4)[:2099], 0.02, true); err != nil {
		t.Errorf("checked off a block end: %v", err)
	}
	short := []float64{}
	for i := range 2 * RunawayBlock { // the second block far above the first
		short = append(short, float64(-i)+1e6*float64(i/RunawayBlock))
	}
	if err := CheckRunaway(short, 0.02, true); err != nil {
		t.Errorf("checked before the third block: %v", err)
	}
}

// TestCheckRunawayWithinNoise: a fit whose whole progress is within its Monte Carlo noise (as
// evidence's learned backward kernel at fixed parameters: 0.04 nats per point of progress under
// noise of standard deviation 0.05) is never stopped, though its last block may sit more than
// RunawayShare of that progress above the lowest of its noisy block means; the same curve with its
// last block raised by 0.1 (ten standard errors of a block mean) is.
func TestCheckRunawayWithinNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := make([]float64, 3000)
	for i := range c {
		c[i] = -3.80 - 0.04*math.Min(1, float64(i)/200) + 0.05*rng.NormFloat64()
	}
	shares := 0
	for n := 1; n <= len(c); n++ {
		if err := CheckRunaway(c[:n], 0.02, true); err != nil {
			t.Fatalf("a fit within its noise stopped at %d: %v", n, err)
		}
		if n%RunawayBlock == 0 && n >= 3*RunawayBlock {
			best := math.Inf(1)
			for end := 2 * RunawayBlock; end < n; end += RunawayBlock {
				best = math.Min(best, blockMean(c, end-RunawayBlock))
			}
			if blockMean(c, n-RunawayBlock)-best > RunawayShare*0.04 {
				shares++
			}
		}
	}
	if shares == 0 {
		t.Fatalf("no block gave back more than RunawayShare of the progress: the case does not test the noise floor")
	}
	up := append([]float64(nil), c[:2900]...)
	for i := range RunawayBlock {
		up = append(up, c[2900+i]+0.1)
	}
	if d := option.AsDiverged(CheckRunaway(up, 0.02, true)); d == nil || d.Iteration != 3000 {
		t.Errorf("a last block 0.1 above the rest: %v; want a Diverged at iteration 3000", d)
	}
}

// TestCheckBoundDiverged: a non-finite bound after the first iteration, or one below the model's
// ceiling, is a Diverged at its iteration; a non-finite bound at the first iteration is a setting
// (ErrNotFiniteAtStart), not a divergence; a finite bound is no error.
func TestCheckBoundDiverged(t *testing.T) {
	for _, c := range []struct {
		iter int
		v    float64
		want int // the Diverged's iteration; 0: none
	}{{5, math.NaN(), 5}, {7, math.Inf(1), 7}, {9, -1e9, 9}, {1, math.NaN(), 0}, {3, 12.5, 0}} {
		err := checkBound(c.iter, c.v, 1e6, "float64")
		d := option.AsDiverged(err)
		switch {
		case c.want == 0 && d != nil:
			t.Errorf("iteration %d, bound %g: %v is a Diverged", c.iter, c.v, err)
		case c.want != 0 && (d == nil || d.Iteration != c.want):
			t.Errorf("iteration %d, bound %g: %v; want a Diverged at %d", c.iter, c.v, err, c.want)
		}
	}
	if err := checkBound(1, math.NaN(), 1e6, "float64"); !errors.Is(err, ErrNotFiniteAtStart) {
		t.Errorf("a non-finite first bound: %v; want ErrNotFiniteAtStart", err)
	}
}

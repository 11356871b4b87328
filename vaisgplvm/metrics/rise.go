package metrics

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Rise is how much a training curve still climbed at its end: the mean bound per point over the
// last fifth of the steps minus its mean over the fifth before (nats per point), with the standard
// error of that difference from the steps' spread (mini-batch estimates, taken as independent).
// A rise within two standard errors of zero says the curve had flattened at that budget (Flat).
//
// Fifths, not tenths: a curve that still falls slowly under mini-batch noise shows it over two
// fifths, where two tenths hide it. Under tenths, MNIST's 3000-iteration curves (Table 2
// `--paper`) were flat on 0-1 of 5 seeds per method, yet IWVI's bound fell another 14.2 nats per
// image by 6000 iterations; under fifths every one of those 20 curves is moving (docs/results.md).
type Rise struct {
	PerPoint float64 `json:"per_point"`
	SE       float64 `json:"se"`
	Steps    int     `json:"window_steps"` // steps in each window
}

// CurveRise returns the Rise of a curve of -bound per point per step (train.Trainer.Curve, cmf.Model.Curve). Errors: fewer
// than 20 steps, or a non-finite rise or standard error (a curve that blew up can overflow them).
func CurveRise(curve []float64) (Rise, error) {
	w := len(curve) / RiseWindows
	if len(curve) < 20 {
		return Rise{}, fmt.Errorf("metrics: a curve of %d steps is too short for its final rise (want >= 20)", len(curve))
	}
	drop, se := WindowDrop(curve[len(curve)-2*w:len(curve)-w], curve[len(curve)-w:])
	r := Rise{PerPoint: drop, SE: se, Steps: w} // -bound: a drop is a rise
	if math.IsNaN(r.PerPoint) || math.IsInf(r.PerPoint, 0) || math.IsNaN(r.SE) || math.IsInf(r.SE, 0) {
		return Rise{}, fmt.Errorf("metrics: the curve's final rise is %g ± %g", r.PerPoint, r.SE)
	}
	return r, nil
}

// WindowDrop returns how far a curve's mean fell from the window prev to the later window last,
// mean(prev) - mean(last), and the standard error of that difference from the two windows' sample
// standard deviations, hypot(sd(prev), sd(last)) / sqrt(w), the steps taken as independent. Both
// windows hold the same number w >= 2 of steps (the caller's: CurveRise's fifths,
// train.CheckRunaway's blocks).
func WindowDrop(prev, last []float64) (drop, se float64) {
	mp, sp := stat.MeanStdDev(prev, nil)
	ml, sl := stat.MeanStdDev(last, nil)
	return mp - ml, math.Hypot(sl, sp) / math.Sqrt(float64(len(last)))
}

// RiseWindows is the number of windows a curve is cut into for its Rise: the last one against the
// one before.
const RiseWindows = 5

// Flat reports whether the rise is within two standard errors of zero: the curve had flattened.
func (r Rise) Flat() bool { return math.Abs(r.PerPoint) <= 2*r.SE }

// FallingBack reports whether the rise is below minus two standard errors: the curve is moving,
// but the bound got worse over the last fifth (a training that gives back what it had reached).
func (r Rise) FallingBack() bool { return r.PerPoint < -2*r.SE }

package train

import (
	"fmt"
	"slices"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// RunawayBlock is the length, in iterations, of the blocks whose mean -ELBO the runaway check
// compares (Trainer.Step checks at the end of every block, from the third on).
const RunawayBlock = 100

// RunawayShare is the share of a training's progress that its bound may give back before the run
// counts as diverged: the progress is the median -ELBO per point of the first RunawayBlock
// iterations minus the best (lowest) block mean so far, and the run stops when a block's mean
// exceeds that best by more than RunawayShare times it (and by more than RunawayZ standard
// errors). Calibrated on the 71 stored 3000-iteration curves of records/ (Frey, MNIST, oil
// flow, wine; every method): healthy runs give back at most 0.021 of their progress, the three
// MNIST VAIS trainings that diverged with finite values 0.63, 12.3 and 57.8.
const RunawayShare = 0.25

// RunawayZ is how many standard errors of the difference between the two block means
// (metrics.WindowDrop's, from the blocks' sample standard deviations) the give-back must also
// exceed before the run counts as diverged: a run whose whole progress is within its Monte Carlo
// noise (a fit at fixed parameters, such as evidence's learned backward kernel, or a resumed run
// that has converged) would otherwise be stopped by the noise of its best block, the lowest of
// many noisy means.
const RunawayZ = 4

// CheckRunaway returns an *option.Failure naming the iteration when the block of RunawayBlock
// iterations that ends at curve's end has given back more than RunawayShare of the training's
// progress, and by more than RunawayZ standard errors of the two block means' difference: a
// divergence with finite values, which the non-finite check does not see.
// Trainer.Step calls it after every iteration. curve is the -ELBO per point of every iteration
// so far [iterations] (Trainer.Curve, nats); it checks only at block ends from the third block
// on, and returns nil elsewhere. lr (the model's LR) and chainGrad (the bound has an annealed chain
// and its gradient flows through the chain's steps: Method.Annealed() and not Config.StopGrad)
// shape the advice.
func CheckRunaway(curve []float64, lr float64, chainGrad bool) error {
	n := len(curve)
	if n%RunawayBlock != 0 || n < 3*RunawayBlock {
		return nil
	}
	first := slices.Clone(curve[:RunawayBlock])
	slices.Sort(first)
	start := first[RunawayBlock/2]
	best, bestAt := blockMean(curve, 0), RunawayBlock
	for end := 2 * RunawayBlock; end < n; end += RunawayBlock {
		if m := blockMean(curve, end-RunawayBlock); m < best {
			best, bestAt = m, end
		}
	}
	last := blockMean(curve, n-RunawayBlock)
	progress := start - best
	if progress <= 0 || last-best <= RunawayShare*progress {
		return nil
	}
	_, noise := metrics.WindowDrop(curve[bestAt-RunawayBlock:bestAt], curve[n-RunawayBlock:])
	if last-best <= RunawayZ*noise {
		return nil
	}
	advice := fmt.Sprintf("lower the learning rate LR (now %g)", lr)
	fields := []string{"LR"}
	if chainGrad {
		advice += " or train the annealed chain with StopGrad (the gradient through every annealing step is the one that diverged on MNIST at 2000-3000 iterations with VAIS)"
		fields = append(fields, "StopGrad")
	}
	return diverged(n, option.Failf(fields, "diverged at iteration %d: -ELBO per point averaged %.4g over iterations %d-%d, %.4g above its best "+
		"100-iteration mean (%.4g, iterations %d-%d): it gave back %.0f%% of the training's progress from %.4g (median of iterations "+
		"1-%d), more than the %.0f%% a healthy run is allowed; %s", n, last, n-RunawayBlock+1, n, last-best, best,
		bestAt-RunawayBlock+1, bestAt, 100*(last-best)/progress, start, RunawayBlock, 100*RunawayShare, advice))
}

// blockMean is the mean of curve[from : from+RunawayBlock].
func blockMean(curve []float64, from int) float64 {
	s := 0.0
	for _, v := range curve[from : from+RunawayBlock] {
		s += v
	}
	return s / RunawayBlock
}

// Package metrics computes the evaluation figures reported in the tables, in float64 Go from the
// model's outputs:
//
//   - NegELBO: -ELBO / N, nats per data point (the bound's full-data value, averaged over noise draws).
//   - MSE: mean over observed entries (n, d) of (x_nd - E[f_d(h_n)])^2, in data units squared,
//     where h_n is the method's reconstruction latent (MF: the mean a_n; IWVI: the self-normalised
//     importance-weighted mean of the samples; VAIS: the weighted mean of the chain ends H_K).
//   - NELL: -(1/N) sum_n l_n(h_n), with l_n the expected log-likelihood under q(f) at the
//     reconstruction latent, nats per data point.
//   - OneNNError: leave-one-out 1-nearest-neighbour classification error of the latents.
package metrics

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MSE returns the mean squared error between x [N, D] and pred [N, D] over the entries the mask
// [N, D] observes (1; nil = all observed). Errors: shapes that differ, no observed entry.
func MSE(x, pred, mask [][]float64) (float64, error) {
	if len(pred) != len(x) || (mask != nil && len(mask) != len(x)) {
		return math.NaN(), fmt.Errorf("metrics: MSE of %d rows against %d predicted rows and a mask of %d", len(x), len(pred), len(mask))
	}
	s, c := 0.0, 0.0
	for i := range x {
		if len(pred[i]) != len(x[i]) || (mask != nil && len(mask[i]) != len(x[i])) {
			return math.NaN(), fmt.Errorf("metrics: MSE row %d has %d values, its prediction %d", i, len(x[i]), len(pred[i]))
		}
		for j := range x[i] {
			if mask != nil && mask[i][j] == 0 {
				continue
			}
			d := x[i][j] - pred[i][j]
			s += d * d
			c++
		}
	}
	if c == 0 {
		return math.NaN(), fmt.Errorf("metrics: MSE over no observed entry")
	}
	return s / c, nil
}

// OneNNError returns the leave-one-out 1-nearest-neighbour error rate of labels [N] using the
// Euclidean distance between rows of h [N, Q]. It is NaN when N < 2 (no neighbour) or when a row of
// h is not finite (no distance to rank), never a panic; callers report it only when it is finite.
func OneNNError(h [][]float64, labels []int) float64 {
	if len(h) < 2 || len(labels) != len(h) {
		return math.NaN()
	}
	errs := 0
	for i := range h {
		best, bestD := -1, math.Inf(1)
		for j := range h {
			if i == j {
				continue
			}
			d := 0.0
			for q := range h[i] {
				t := h[i][q] - h[j][q]
				d += t * t
			}
			if d < bestD {
				best, bestD = j, d
			}
		}
		if best < 0 {
			return math.NaN()
		}
		if labels[best] != labels[i] {
			errs++
		}
	}
	return float64(errs) / float64(len(h))
}

// MeanAndTwoSE returns the mean and two standard errors of the mean of v (0 for one value).
func MeanAndTwoSE(v []float64) (mean, twoSE float64) {
	mean, se := MeanSE(v)
	return mean, 2 * se
}

// MeanSE returns the mean of v and its standard error sd / sqrt(n) (gonum stat's sample standard
// deviation; 0 for one value, NaN mean for none).
func MeanSE(v []float64) (mean, se float64) {
	if len(v) < 2 {
		return stat.Mean(v, nil), 0
	}
	mean, sd := stat.MeanStdDev(v, nil)
	return mean, sd / math.Sqrt(float64(len(v)))
}

// TInterval returns the mean of v and the half-width of its two-sided 95% t-interval (Student's t
// with len(v)-1 degrees of freedom times the standard error), the interval to state over fewer
// than 10 seeds; NaN half-width for fewer than two values.
func TInterval(v []float64) (mean, half float64) {
	if len(v) < 2 {
		return stat.Mean(v, nil), math.NaN()
	}
	mean, se := MeanSE(v)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(v) - 1)}.Quantile(0.975)
	return mean, t * se
}

// NormalizedWeights returns w_k = exp(logW_k) / sum_j exp(logW_j), computed stably (nil for no
// weights; NaN weights when a log weight is NaN or every one is -Inf).
func NormalizedWeights(logW []float64) []float64 {
	if len(logW) == 0 {
		return nil
	}
	lse := floats.LogSumExp(logW)
	w := make([]float64, len(logW))
	for i, l := range logW {
		w[i] = math.Exp(l - lse)
	}
	return w
}

// ESS returns the effective sample size 1 / sum_k w_k^2 of the normalised weights of logW [K]:
// K for equal weights, 1 when one weight takes everything; NaN for no weights.
func ESS(logW []float64) float64 {
	if len(logW) == 0 {
		return math.NaN()
	}
	w := NormalizedWeights(logW)
	return 1 / floats.Dot(w, w)
}

// WeightEntropy returns -sum_k w_k log w_k of the normalised weights of logW [K], in nats: log K
// for equal weights, 0 when one weight takes everything; NaN for no weights.
func WeightEntropy(logW []float64) float64 {
	if len(logW) == 0 {
		return math.NaN()
	}
	return stat.Entropy(NormalizedWeights(logW))
}

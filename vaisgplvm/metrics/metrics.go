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
	"math"
)

// MSE returns the mean squared error over observed entries (mask nil = all observed).
func MSE(x, pred, mask [][]float64) float64 {
	s, c := 0.0, 0.0
	for i := range x {
		for j := range x[i] {
			if mask != nil && mask[i][j] == 0 {
				continue
			}
			d := x[i][j] - pred[i][j]
			s += d * d
			c++
		}
	}
	return s / c
}

// OneNNError returns the leave-one-out 1-nearest-neighbour error rate of labels using Euclidean
// distance between rows of h [N, Q]. Labels must have length N >= 2.
func OneNNError(h [][]float64, labels []int) float64 {
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
		if labels[best] != labels[i] {
			errs++
		}
	}
	return float64(errs) / float64(len(h))
}

// MeanAndTwoSE returns the mean and two standard errors of the mean of v (0 for one value).
func MeanAndTwoSE(v []float64) (mean, twoSE float64) {
	n := float64(len(v))
	for _, x := range v {
		mean += x
	}
	mean /= n
	if len(v) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, 2 * math.Sqrt(ss/(n-1)/n)
}

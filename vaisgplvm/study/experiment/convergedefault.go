package experiment

import "fmt"

// ConvergeLimit bounds N M^2, the entries of each [N, M, M] array the collapsed bound builds, for
// fitting a user's file to convergence by default (5e7 entries: 400 MB each in float64).
const ConvergeLimit = 5e7

// ConvergeByDefault reports whether `train --data FILE` without --iters fits the data to
// convergence (converge.Fit, then the method's own bound), and when not, why: the collapsed
// mean-field bound needs fully observed data, a kernel with closed-form psi statistics (se), and
// N M^2 <= ConvergeLimit for M inducing inputs (at most N).
func ConvergeByDefault(td *Data, kernel string, m int) (bool, string) {
	n, _ := td.Dims()
	m = min(m, n)
	switch {
	case td.Mask != nil:
		return false, "the file has missing entries, which the collapsed bound of --converge cannot hold"
	case kernel != "se":
		return false, fmt.Sprintf("the %s kernel has no closed-form psi statistics, which --converge needs", kernel)
	case float64(n)*float64(m)*float64(m) > ConvergeLimit:
		return false, fmt.Sprintf("%d points with M = %d are too many for the full-batch fit of --converge (N M^2 > %g)", n, m, ConvergeLimit)
	}
	return true, ""
}

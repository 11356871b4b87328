package baselines

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/data"
)

// PPCA is probabilistic PCA (Tipping & Bishop 1999), the linear-Gaussian latent variable model a
// GPLVM with a linear kernel becomes: x_n = W z_n + Mu + eps, z_n ~ N(0, I_q), eps ~ N(0, Noise I).
// FitPPCA fits it by EM with missing entries (each row's E-step uses only its observed entries,
// the M-step each column's observing rows), so it both uses and imputes partly observed rows.
type PPCA struct {
	W     *mat.Dense // [D, q] loadings
	Mu    []float64  // [D] column offsets
	Noise float64    // noise variance, data units squared
	Iters int        // EM iterations run
	// LogLik is the observed-data log-likelihood per observed entry of W, Mu and Noise as returned,
	// nats.
	LogLik float64
}

// PPCAOptions bound FitPPCA's EM.
type PPCAOptions struct {
	MaxIters int     // at most this many EM iterations (default 200)
	Tol      float64 // stop when the log-likelihood per observed entry rises by less (default 1e-6)
}

// FitPPCA fits a q-dimensional PPCA to x [N, D] with mask [N, D] (1 observed, 0 missing; nil:
// every entry observed) by EM from the PCA of the column-mean-imputed data. Errors: bad shapes or
// non-finite observed values (data.CheckMatrix), q outside 1..min(N, D)-1, a column with no
// observed entry, or a singular E-step.
func FitPPCA(x, mask [][]float64, q int, opt PPCAOptions) (*PPCA, error) {
	if err := data.CheckMatrix(x, mask); err != nil {
		return nil, fmt.Errorf("baselines: PPCA: %w", err)
	}
	n, d := len(x), len(x[0])
	if q < 1 || q >= min(n, d) {
		return nil, fmt.Errorf("baselines: PPCA with q = %d of %d x %d data: want 1..%d", q, n, d, min(n, d)-1)
	}
	if opt.MaxIters == 0 {
		opt.MaxIters = 200
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-6
	}
	start, err := MeanImpute(x, mask, x, mask)
	if err != nil {
		return nil, fmt.Errorf("baselines: PPCA: %w", err)
	}
	p, err := ppcaStart(start, q)
	if err != nil {
		return nil, err
	}
	prev := math.Inf(-1)
	for it := 0; ; it++ {
		post, ll, err := p.posteriors(x, mask)
		if err != nil {
			return nil, err
		}
		p.LogLik, p.Iters = ll, it
		if it == opt.MaxIters || ll-prev < opt.Tol {
			break
		}
		prev = ll
		p.mStep(x, mask, post)
	}
	return p, nil
}

// ppcaStart returns the closed-form maximum-likelihood PPCA of complete data x (Tipping & Bishop
// 1999, Eq. 7-8): W = U_q (Lambda_q - Noise I)^(1/2), Noise the mean of the other eigenvalues of
// the sample covariance.
func ppcaStart(x [][]float64, q int) (*PPCA, error) {
	n, d := len(x), len(x[0])
	mu := make([]float64, d)
	for _, r := range x {
		for j, v := range r {
			mu[j] += v / float64(n)
		}
	}
	c := mat.NewSymDense(d, nil)
	centred := mat.NewDense(n, d, nil)
	for i, r := range x {
		for j, v := range r {
			centred.Set(i, j, v-mu[j])
		}
	}
	c.SymOuterK(1/float64(n), centred.T())
	var eig mat.EigenSym
	if !eig.Factorize(c, true) {
		return nil, fmt.Errorf("baselines: PPCA: the eigendecomposition of the sample covariance failed")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	noise := 0.0
	for _, v := range vals[:d-q] {
		noise += v / float64(d-q)
	}
	noise = max(noise, 1e-12)
	w := mat.NewDense(d, q, nil)
	for k := range q {
		col := d - 1 - k // the k-th largest
		s := math.Sqrt(max(vals[col]-noise, 0))
		for j := range d {
			w.Set(j, k, vecs.At(j, col)*s)
		}
	}
	return &PPCA{W: w, Mu: mu, Noise: noise}, nil
}

// rowPosterior is q(z_n) = N(Mean, Cov) given row n's observed entries.
type rowPosterior struct {
	Mean []float64
	Cov  *mat.SymDense
}

// posteriors returns each row's posterior over z given its observed entries, with W_O the rows of
// W it observes and M = Noise I + W_O^T W_O: Cov = Noise M^-1, Mean = M^-1 W_O^T (x_O - Mu_O); and
// the observed-data log-likelihood per observed entry, each row's observed entries being
// N(Mu_O, W_O W_O^T + Noise I) (by the Woodbury identity: log det = (|O| - q) log Noise + log det M,
// and the quadratic form (|r|^2 - r^T W_O M^-1 W_O^T r) / Noise with r = x_O - Mu_O).
func (p *PPCA) posteriors(x, mask [][]float64) ([]rowPosterior, float64, error) {
	d, q := p.W.Dims()
	var wtw mat.SymDense // W^T W over all D columns; each row subtracts its missing ones
	wtw.SymOuterK(1, p.W.T())
	out := make([]rowPosterior, len(x))
	total, count := 0.0, 0
	for i, r := range x {
		m := mat.NewSymDense(q, nil)
		m.CopySym(&wtw)
		rhs := make([]float64, q)
		obs, rr := 0, 0.0
		for j := range d {
			wj := p.W.RawRowView(j)
			if mask != nil && mask[i][j] == 0 {
				m.SymRankOne(m, -1, mat.NewVecDense(q, wj))
				continue
			}
			e := r[j] - p.Mu[j]
			for k := range q {
				rhs[k] += wj[k] * e
			}
			obs, rr = obs+1, rr+e*e
		}
		for k := range q {
			m.SetSym(k, k, m.At(k, k)+p.Noise)
		}
		var ch mat.Cholesky
		if !ch.Factorize(m) {
			return nil, 0, fmt.Errorf("baselines: PPCA: row %d: the E-step matrix is not positive definite", i)
		}
		cov := mat.NewSymDense(q, nil)
		if err := ch.InverseTo(cov); err != nil {
			return nil, 0, fmt.Errorf("baselines: PPCA: row %d: %w", i, err)
		}
		mean := mat.NewVecDense(q, nil)
		mean.MulVec(cov, mat.NewVecDense(q, rhs))
		quad := (rr - mat.Dot(mean, mat.NewVecDense(q, rhs))) / p.Noise
		total += -0.5 * (float64(obs)*math.Log(2*math.Pi) + float64(obs-q)*math.Log(p.Noise) + ch.LogDet() + quad)
		count += obs
		cov.ScaleSym(p.Noise, cov)
		out[i] = rowPosterior{Mean: mean.RawVector().Data, Cov: cov}
	}
	return out, total / float64(count), nil
}

// mStep updates W, Mu (per column, jointly, from the rows observing it) and Noise from the rows'
// posteriors.
func (p *PPCA) mStep(x, mask [][]float64, post []rowPosterior) {
	d, q := p.W.Dims()
	// A = sum_n E[zt zt^T] and b_j = sum_n x_nj E[zt] over all rows, zt = (z, 1); each column
	// subtracts its missing rows.
	full := mat.NewSymDense(q+1, nil)
	for _, ps := range post {
		addMoments(full, ps, 1)
	}
	for j := range d {
		a := mat.NewSymDense(q+1, nil)
		a.CopySym(full)
		b := make([]float64, q+1)
		for i, ps := range post {
			if mask != nil && mask[i][j] == 0 {
				addMoments(a, ps, -1)
				continue
			}
			for k := range q {
				b[k] += x[i][j] * ps.Mean[k]
			}
			b[q] += x[i][j]
		}
		var sol mat.VecDense
		if err := sol.SolveVec(a, mat.NewVecDense(q+1, b)); err != nil {
			continue // a column too sparse to move: keep its loadings
		}
		for k := range q {
			p.W.Set(j, k, sol.AtVec(k))
		}
		p.Mu[j] = sol.AtVec(q)
	}
	var wtw mat.SymDense // of the updated W
	wtw.SymOuterK(1, p.W.T())
	ss, count := 0.0, 0
	for i, ps := range post {
		// sum over observed j of w_j^T Cov w_j = tr(Cov W^T W) - the missing columns' terms
		var prod mat.Dense
		prod.Mul(ps.Cov, &wtw)
		ss += mat.Trace(&prod)
		for j := range d {
			wj := p.W.RawRowView(j)
			if mask != nil && mask[i][j] == 0 {
				v := mat.NewVecDense(q, wj)
				ss -= mat.Inner(v, ps.Cov, v)
				continue
			}
			r := x[i][j] - p.Mu[j]
			for k := range q {
				r -= wj[k] * ps.Mean[k]
			}
			ss += r * r
			count++
		}
	}
	p.Noise = max(ss/float64(count), 1e-12)
}

// addMoments adds sign x E[zt zt^T] of one row's posterior to a [q+1, q+1], zt = (z, 1).
func addMoments(a *mat.SymDense, ps rowPosterior, sign float64) {
	q := len(ps.Mean)
	for k := range q {
		for l := k; l < q; l++ {
			a.SetSym(k, l, a.At(k, l)+sign*(ps.Cov.At(k, l)+ps.Mean[k]*ps.Mean[l]))
		}
		a.SetSym(k, q, a.At(k, q)+sign*ps.Mean[k])
	}
	a.SetSym(q, q, a.At(q, q)+sign)
}

// marginal returns the mean and covariance of the entries cols: Mu_cols and W_cols W_cols^T +
// Noise I.
func (p *PPCA) marginal(cols []int) ([]float64, *mat.SymDense) {
	_, q := p.W.Dims()
	wc := mat.NewDense(len(cols), q, nil)
	mean := make([]float64, len(cols))
	for k, j := range cols {
		wc.SetRow(k, p.W.RawRowView(j))
		mean[k] = p.Mu[j]
	}
	cov := mat.NewSymDense(len(cols), nil)
	cov.SymOuterK(1, wc)
	for k := range cols {
		cov.SetSym(k, k, cov.At(k, k)+p.Noise)
	}
	return mean, cov
}

func observedCols(mask [][]float64, i, d int) []int {
	var out []int
	for j := range d {
		if mask == nil || mask[i][j] != 0 {
			out = append(out, j)
		}
	}
	return out
}

// Impute returns a copy of x [N, D] with its missing entries (mask 0) replaced by their posterior
// predictive means W_j E[z_n | x_O] + Mu_j, and the NELL of truth [N, D] at those entries: minus
// the expected log-likelihood sum_j E[log N(truth_nj | W_j z_n + Mu_j, Noise)] under q(z_n), the
// GPLVMs' NELL (eval.MissingScores), averaged over the rows with a missing entry (nats per
// damaged row). truth may be nil (nell is then 0).
func (p *PPCA) Impute(x, mask, truth [][]float64) (imputed [][]float64, nell float64, err error) {
	post, _, err := p.posteriors(x, mask)
	if err != nil {
		return nil, 0, err
	}
	_, q := p.W.Dims()
	rows := 0
	imputed, err = fill(x, mask, func(i, j int) (float64, error) {
		wj := p.W.RawRowView(j)
		m := p.Mu[j]
		for k := range q {
			m += wj[k] * post[i].Mean[k]
		}
		if truth != nil {
			v := mat.NewVecDense(q, wj)
			f := mat.Inner(v, post[i].Cov, v)
			nell += 0.5*math.Log(2*math.Pi*p.Noise) + ((truth[i][j]-m)*(truth[i][j]-m)+f)/(2*p.Noise)
		}
		return m, nil
	})
	if err != nil {
		return nil, 0, err
	}
	for i := range x {
		if len(observedCols(mask, i, len(x[i]))) < len(x[i]) {
			rows++
		}
	}
	if rows > 0 {
		nell /= float64(rows)
	}
	return imputed, nell, nil
}

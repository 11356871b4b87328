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
	var complete *factored // M^-1 of the rows that observe every column, computed once
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
		f := complete
		if obs < d || f == nil {
			var err error
			if f, err = p.factor(m); err != nil {
				return nil, 0, fmt.Errorf("baselines: PPCA: row %d: %w", i, err)
			}
			if obs == d {
				complete = f
			}
		}
		mean := mat.NewVecDense(q, nil)
		mean.MulVec(f.inv, mat.NewVecDense(q, rhs))
		quad := (rr - mat.Dot(mean, mat.NewVecDense(q, rhs))) / p.Noise
		total += -0.5 * (float64(obs)*math.Log(2*math.Pi) + float64(obs-q)*math.Log(p.Noise) + f.logDet + quad)
		count += obs
		out[i] = rowPosterior{Mean: mean.RawVector().Data, Cov: f.cov}
	}
	return out, total / float64(count), nil
}

// factored is one row's E-step matrix M = Noise I + W_O^T W_O [q, q] as posteriors uses it: M^-1,
// log det M and the posterior covariance Noise M^-1. The rows that observe every column share one
// (their Cov is the same matrix; nothing writes to it).
type factored struct {
	inv, cov *mat.SymDense
	logDet   float64
}

// factor adds Noise to m's diagonal (m is W_O^T W_O) and factorises it. Errors: m + Noise I not
// positive definite.
func (p *PPCA) factor(m *mat.SymDense) (*factored, error) {
	q := m.SymmetricDim()
	for k := range q {
		m.SetSym(k, k, m.At(k, k)+p.Noise)
	}
	var ch mat.Cholesky
	if !ch.Factorize(m) {
		return nil, fmt.Errorf("the E-step matrix is not positive definite")
	}
	inv := mat.NewSymDense(q, nil)
	if err := ch.InverseTo(inv); err != nil {
		return nil, err
	}
	cov := mat.NewSymDense(q, nil)
	cov.ScaleSym(p.Noise, inv)
	return &factored{inv: inv, cov: cov, logDet: ch.LogDet()}, nil
}

// mStep updates W, Mu (per column, jointly, from the rows observing it) and Noise from the rows'
// posteriors. With zt = (z, 1), column j solves A_j [W_j, Mu_j] = b_j, A_j = sum of E[zt zt^T]
// over the rows observing j (all rows' sum less the rows missing j: one product of the missing
// pattern [D, R] and the R incomplete rows' moments [R, (q+1)^2]) and b_j = sum of x_nj E[zt]
// (Xo^T Zt with Xo the data with its missing entries 0); as matrix products, so that a large q
// stays cheap.
func (p *PPCA) mStep(x, mask [][]float64, post []rowPosterior) {
	d, q := p.W.Dims()
	n, k := len(x), q+1
	zt, xo := mat.NewDense(n, k, nil), mat.NewDense(n, d, nil)
	var incomplete []int
	for i, ps := range post {
		copy(zt.RawRowView(i), ps.Mean)
		zt.Set(i, q, 1)
		missing := false
		for j := range d {
			if observed(mask, i, j) {
				xo.Set(i, j, x[i][j])
			} else {
				missing = true
			}
		}
		if missing {
			incomplete = append(incomplete, i)
		}
	}
	full := mat.NewDense(k, k, nil) // sum_n E[zt zt^T]
	full.Mul(zt.T(), zt)
	covs := sharedCovs(post)
	for _, c := range covs {
		for a := range q {
			for b := range q {
				full.Set(a, b, full.At(a, b)+float64(c.rows)*c.cov.At(a, b))
			}
		}
	}
	var corr mat.Dense // [D, k*k]: the moments of the rows missing each column
	if len(incomplete) > 0 {
		mom := mat.NewDense(len(incomplete), k*k, nil)
		miss := mat.NewDense(d, len(incomplete), nil)
		for r, i := range incomplete {
			row := mom.RawRowView(r)
			m := post[i].Mean
			for a := range k {
				for b := range k {
					row[a*k+b] = ztAt(m, a) * ztAt(m, b)
					if a < q && b < q {
						row[a*k+b] += post[i].Cov.At(a, b)
					}
				}
			}
			for j := range d {
				if !observed(mask, i, j) {
					miss.Set(j, r, 1)
				}
			}
		}
		corr.Mul(miss, mom)
	}
	var bs mat.Dense // [D, k]
	bs.Mul(xo.T(), zt)
	a := mat.NewDense(k, k, nil)
	for j := range d {
		a.Copy(full)
		if len(incomplete) > 0 {
			a.Sub(a, mat.NewDense(k, k, corr.RawRowView(j)))
		}
		var sol mat.VecDense
		if err := sol.SolveVec(a, mat.NewVecDense(k, bs.RawRowView(j))); err != nil {
			continue // a column too sparse to move: keep its loadings
		}
		for c := range q {
			p.W.Set(j, c, sol.AtVec(c))
		}
		p.Mu[j] = sol.AtVec(q)
	}
	p.Noise = max(p.residual(x, mask, post, zt, covs, incomplete), 1e-12)
}

// ztAt returns entry a of zt = (mean, 1).
func ztAt(mean []float64, a int) float64 {
	if a == len(mean) {
		return 1
	}
	return mean[a]
}

// sharedCov is a distinct posterior covariance and the number of rows that have it.
type sharedCov struct {
	cov  *mat.SymDense
	rows int
}

// sharedCovs returns the distinct posterior covariances in the order of their first row, each with
// its number of rows (posteriors' complete rows share one).
func sharedCovs(post []rowPosterior) []sharedCov {
	var out []sharedCov
	at := map[*mat.SymDense]int{}
	for _, ps := range post {
		if i, ok := at[ps.Cov]; ok {
			out[i].rows++
			continue
		}
		at[ps.Cov] = len(out)
		out = append(out, sharedCov{ps.Cov, 1})
	}
	return out
}

// residual returns the M-step's noise variance for the updated W and Mu: the mean over observed
// entries of E[(x_nj - W_j z_n - Mu_j)^2] = (x_nj - W_j E[z_n] - Mu_j)^2 + W_j Cov_n W_j^T, the
// second summed per row as tr(Cov_n W^T W) less the missing columns' tr(Cov_n W_m^T W_m).
func (p *PPCA) residual(x, mask [][]float64, post []rowPosterior, zt *mat.Dense, covs []sharedCov, incomplete []int) float64 {
	d, q := p.W.Dims()
	wmu := mat.NewDense(d, q+1, nil) // [W, Mu]
	for j := range d {
		copy(wmu.RawRowView(j), p.W.RawRowView(j))
		wmu.Set(j, q, p.Mu[j])
	}
	var pred mat.Dense // [N, D] = Zt [W, Mu]^T
	pred.Mul(zt, wmu.T())
	var wtw mat.SymDense
	wtw.SymOuterK(1, p.W.T())
	ss, count := 0.0, 0
	for _, c := range covs {
		ss += float64(c.rows) * traceProduct(c.cov, &wtw)
	}
	for i := range x {
		for j := range d {
			if observed(mask, i, j) {
				e := x[i][j] - pred.At(i, j)
				ss, count = ss+e*e, count+1
			}
		}
	}
	for _, i := range incomplete {
		var cols []int
		for j := range d {
			if !observed(mask, i, j) {
				cols = append(cols, j)
			}
		}
		wm := mat.NewDense(len(cols), q, nil)
		for r, j := range cols {
			copy(wm.RawRowView(r), p.W.RawRowView(j))
		}
		var g mat.SymDense
		g.SymOuterK(1, wm.T())
		ss -= traceProduct(post[i].Cov, &g)
	}
	return ss / float64(count)
}

// traceProduct returns tr(a b) of two symmetric matrices, sum_kl a_kl b_kl.
func traceProduct(a, b *mat.SymDense) float64 {
	t := 0.0
	n := a.SymmetricDim()
	for k := range n {
		for l := range n {
			t += a.At(k, l) * b.At(k, l)
		}
	}
	return t
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

package eval

import (
	"math"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Predictive holds the scores of the posterior predictive mixture: per point n, the
// self-normalised mixture over the particles h_ns of the reconstruction (IWVI's K importance
// samples, the ends of ReconChains annealed chains) with weights w_ns = softmax_s(log w_ns),
//
//	mean_n = sum_s w_ns E[f(h_ns)],   NELL = -(1/N) sum_n log sum_s w_ns exp(l_n(h_ns)),
//
// with l_n(h) the expected log-likelihood of point n's observed entries at latent h (the
// Evaluation's NELL is -(1/N) sum_n l_n at one latent). MF has one component, its q0 mean, so
// its Predictive equals the single-latent scores; so does any bound with one particle.
type Predictive struct {
	MSE        float64     `json:"mse"`            // of the mixture means on the observed entries
	NELL       float64     `json:"nell_per_point"` // nats per point, as above
	Components int         `json:"components"`     // particles per point S
	Recon      [][]float64 `json:"-"`              // mixture means [N, D]
	// Particles [S][N][Q] and their normalised weights Weights [S][N] (each point's sum to 1), in
	// point order: ScoreMissing scores hidden entries with them.
	Particles [][][]float64 `json:"-"`
	Weights   [][]float64   `json:"-"`
}

// singleComponent returns the Predictive of one latent per point: ev's own scores.
func singleComponent(ev *Evaluation) *Predictive {
	w := make([]float64, len(ev.Latent))
	for i := range w {
		w[i] = 1
	}
	return &Predictive{MSE: ev.MSE, NELL: ev.NELL, Components: 1, Recon: ev.Recon,
		Particles: [][][]float64{ev.Latent}, Weights: [][]float64{w}}
}

// particlesOf returns the particles [S, N, Q] and weights [S, N] of a reconstruction output in
// point order (idx: the batch's row for each point, as unpermute).
func particlesOf(h, w *tensors.Tensor, idx []int32) ([][][]float64, [][]float64) {
	s, n, q := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
	hf, wf := vars.Flat64(h), vars.Flat64(w)
	ps, ws := make([][][]float64, s), make([][]float64, s)
	for k := range s {
		rows, wr := make([][]float64, n), make([]float64, n)
		for i := range n {
			rows[i] = hf[(k*n+i)*q : (k*n+i+1)*q]
			wr[i] = wf[k*n+i]
		}
		ps[k], ws[k] = unpermute(rows, idx), unpermuteVec(wr, idx)
	}
	return ps, ws
}

// unpermuteVec is unpermute for one value per point.
func unpermuteVec(v []float64, idx []int32) []float64 {
	out := make([]float64, len(v))
	for i, j := range idx {
		out[j] = v[i]
	}
	return out
}

// logMixture returns log sum_s w_s exp(l_s) for weights w (summing to 1) and log terms l, the
// largest term factored out so that no exp overflows or underflows to a zero sum.
func logMixture(w, l []float64) float64 {
	top := math.Inf(-1)
	for s := range l {
		if w[s] > 0 && l[s] > top {
			top = l[s]
		}
	}
	sum := 0.0
	for s := range l {
		if w[s] > 0 {
			sum += w[s] * math.Exp(l[s]-top)
		}
	}
	return top + math.Log(sum)
}

package latent

import (
	"fmt"
	"github.com/vaisgplvm/vaisgplvm/data"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// PCA returns the first q principal-component scores of x [N, D] (columns centred), each
// component scaled to unit variance, [N, q]: the usual initialisation of the latent means.
// Errors when q exceeds D or N.
func PCA(x [][]float64, q int) ([][]float64, error) {
	if err := data.CheckMatrix(x, nil); err != nil {
		return nil, fmt.Errorf("latent: PCA: %w", err)
	}
	n, d := len(x), len(x[0])
	if q <= 0 || q > d || q > n {
		return nil, fmt.Errorf("latent: PCA needs 0 < q <= min(N, D); got q=%d for data %dx%d", q, n, d)
	}
	// The scores are standardised, so one common factor on x changes nothing but rounding: data
	// near the float64 limits (whose centring or squares overflow, and on which the SVD never
	// converges) is brought to |x| <= 1 first.
	scale := 0.0
	for _, r := range x {
		for _, v := range r {
			scale = max(scale, math.Abs(v))
		}
	}
	if scale > 1e100 || (scale > 0 && scale < 1e-100) {
		y := make([][]float64, n)
		for i, r := range x {
			y[i] = make([]float64, d)
			for j, v := range r {
				y[i][j] = v / scale
			}
		}
		x = y
	}
	m := mat.NewDense(n, d, nil)
	for i, r := range x {
		m.SetRow(i, r)
	}
	var pc stat.PC
	if !pc.PrincipalComponents(m, nil) {
		return nil, fmt.Errorf("latent: PCA failed (SVD did not converge)")
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	vars := pc.VarsTo(nil)
	// centre
	means := make([]float64, d)
	for j := 0; j < d; j++ {
		means[j] = stat.Mean(mat.Col(nil, j, m), nil)
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, q)
		for k := 0; k < q; k++ {
			s := 0.0
			for j := 0; j < d; j++ {
				s += (x[i][j] - means[j]) * vecs.At(j, k)
			}
			if vars[k] > 1e-300 {
				s /= sqrt(vars[k])
			}
			out[i][k] = s
		}
	}
	return out, nil
}

func sqrt(v float64) float64 { return math.Sqrt(v) }

// Nearest returns, for each row of x [T, D] (mask [T, D], 1 = observed, or nil), a copy of the latent
// [Q] of the training row of xTrain [N, D] (maskTrain or nil) nearest to it in mean squared distance
// over the entries observed in both; latents is [N, Q]. Used to start the fit of new points.
// Errors: no training rows, latents of another length, rows or masks of other widths.
func Nearest(xTrain, maskTrain, latents, x, mask [][]float64) ([][]float64, error) {
	if len(xTrain) == 0 || len(latents) != len(xTrain) || (maskTrain != nil && len(maskTrain) != len(xTrain)) || (mask != nil && len(mask) != len(x)) {
		return nil, fmt.Errorf("latent: Nearest of %d rows (mask %d) to %d training rows (mask %d, %d latents): want training rows, one latent and mask row each",
			len(x), len(mask), len(xTrain), len(maskTrain), len(latents))
	}
	d := len(xTrain[0])
	for _, rows := range [][][]float64{xTrain, maskTrain, x, mask} {
		for i, r := range rows {
			if len(r) != d {
				return nil, fmt.Errorf("latent: Nearest: row %d has %d values, want %d", i, len(r), d)
			}
		}
	}
	out := make([][]float64, len(x))
	for i, r := range x {
		best, bestD := 0, math.Inf(1)
		for j, t := range xTrain {
			s, c := 0.0, 0.0
			for d := range r {
				if (mask != nil && mask[i][d] == 0) || (maskTrain != nil && maskTrain[j][d] == 0) {
					continue
				}
				s += (r[d] - t[d]) * (r[d] - t[d])
				c++
			}
			if c > 0 && s/c < bestD {
				best, bestD = j, s/c
			}
		}
		out[i] = append([]float64(nil), latents[best]...)
	}
	return out, nil
}

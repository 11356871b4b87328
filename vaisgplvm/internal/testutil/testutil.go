// Package testutil holds helpers shared by the tests: the pure-Go backend, random SPD matrices and
// conversions between tensors and gonum matrices.
package testutil

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	backends "github.com/gomlx/compute"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

var (
	once   sync.Once
	shared backends.Backend
)

// TestBackendEnv names the environment variable that picks the tests' backend spec (see package
// backend); unset, the tests run on the pure-Go backend and never depend on XLA. scripts/gpu-test.sh
// sets it to run the cross-built test binaries on XLA-CUDA.
const TestBackendEnv = "VAISGPLVM_TEST_BACKEND"

// Backend returns the shared backend of the tests: pure Go, or $VAISGPLVM_TEST_BACKEND's spec.
// It panics when that backend cannot start (a test run on the wrong backend would prove nothing).
func Backend() backends.Backend {
	once.Do(func() {
		spec := os.Getenv(TestBackendEnv)
		if spec == "" {
			spec = "go"
		}
		b, err := backend.New(spec)
		if err != nil {
			panic(err)
		}
		shared = b
	})
	return shared
}

// RandomSPD returns an n x n symmetric positive-definite matrix with eigenvalues spread
// log-uniformly over [1/cond, 1] (condition number cond), from a random orthogonal basis.
func RandomSPD(rng *rand.Rand, n int, cond float64) *mat.SymDense {
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	s := mat.NewSymDense(n, nil)
	for k := 0; k < n; k++ {
		lambda := 1.0
		if n > 1 {
			lambda = math.Pow(cond, -float64(k)/float64(n-1))
		}
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				s.SetSym(i, j, s.At(i, j)+lambda*q.At(i, k)*q.At(j, k))
			}
		}
	}
	return s
}

// ToSlice converts a gonum matrix to [][]float64.
func ToSlice(m mat.Matrix) [][]float64 {
	r, c := m.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		for j := range out[i] {
			out[i][j] = m.At(i, j)
		}
	}
	return out
}

// FlattenRows returns the rows of m [N, D] concatenated, row-major [N*D].
func FlattenRows(m [][]float64) []float64 {
	var out []float64
	for _, r := range m {
		out = append(out, r...)
	}
	return out
}

// MaxAbsDiff returns max_i |a_i - b_i|.
func MaxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// NormalRows returns an [n][d] matrix of normal draws with standard deviation scale from rng,
// drawn row by row.
func NormalRows(rng *rand.Rand, n, d int, scale float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
		for j := range out[i] {
			out[i][j] = scale * rng.NormFloat64()
		}
	}
	return out
}

// TriangularRawScale returns the q0 variable raw_scale [n, q, q] (package latent) for which every
// L_n is lower triangular with diagonal diag (stored through softplus) and every strict-lower entry
// off. With off much larger than diag, L_n^-1 grows like (off/diag)^q: the tests' ill-conditioned
// q0 scale.
func TriangularRawScale(n, q int, diag, off float64) [][][]float64 {
	raw := make([][][]float64, n)
	for i := range raw {
		raw[i] = make([][]float64, q)
		for r := range raw[i] {
			raw[i][r] = make([]float64, q)
			for c := 0; c < r; c++ {
				raw[i][r][c] = off
			}
			raw[i][r][r] = vars.InvSoftplus(diag)
		}
	}
	return raw
}

// FileSums returns the hex sha256 of each regular file directly in dir, by name, leaving out the
// bookkeeping files (names starting with a dot: locks, manifests, staging directories) and those
// skip reports (nil: none). Tests compare two calls to prove a run changed no file.
func FileSums(tb testing.TB, dir string, skip func(name string) bool) map[string]string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	sums := map[string]string{}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(n, ".") || (skip != nil && skip(n)) {
			continue
		}
		buf, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		sums[n] = fmt.Sprintf("%x", sha256.Sum256(buf))
	}
	return sums
}

package linalg_test

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// A Cholesky factor, a solve with it, the log-determinant, and the gradient of the log-determinant
// (A^-1, here [[0.6, -0.2], [-0.2, 0.4]]), all as graph functions on the pure-Go backend.
func ExampleCholesky() {
	a := [][]float64{{2, 1}, {1, 3}}
	b := []float64{1, 2}
	out := MustExecOnceN(testutil.Backend(), func(a, b *Node) []*Node {
		l := linalg.Cholesky(a)
		x := linalg.CholeskySolve(l, InsertAxes(b, -1)) // A x = b
		logDet := linalg.LogDetFromCholesky(l)
		return []*Node{l, x, logDet, Gradient(logDet, a)[0]}
	}, a, b)
	fmt.Printf("L = %.4f\n", out[0].Value())
	fmt.Printf("x = %.4f\n", vars.Flat64(out[1]))
	fmt.Printf("log|A| = %.4f\n", vars.Flat64(out[2])[0])
	fmt.Printf("d log|A| / dA = %.4f\n", out[3].Value())
	// Output:
	// L = [[1.4142 0.0000] [0.7071 1.5811]]
	// x = [0.2000 0.6000]
	// log|A| = 1.6094
	// d log|A| / dA = [[0.6000 -0.2000] [-0.2000 0.4000]]
}

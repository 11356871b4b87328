package dotgrad

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// products are the contractions the model uses (and a few awkward ones): each returns C(a, b).
var products = []struct {
	name string
	a, b []int
	op   func(a, b *Node) *Node
}{
	{"dot matrix-matrix", []int{4, 3}, []int{3, 5}, Dot},
	{"dot matrix-vector", []int{4, 3}, []int{3}, Dot},
	{"dot vector-vector", []int{3}, []int{3}, Dot},
	{"batched matmul", []int{2, 4, 3}, []int{2, 3, 5}, MatMul},
	{"einsum bij,sbj->sbi", []int{2, 4, 3}, []int{5, 2, 3}, func(a, b *Node) *Node { return Einsum("bij,sbj->sbi", a, b) }},
	{"einsum nm,dmk->ndk", []int{4, 3}, []int{2, 3, 5}, func(a, b *Node) *Node { return Einsum("nm,dmk->ndk", a, b) }},
	{"two contracting axes, unsorted", []int{3, 2, 4}, []int{4, 5, 3}, func(a, b *Node) *Node {
		return DotGeneral(a, []int{2, 0}, nil, b, []int{0, 2}, nil)
	}},
	{"two contracting axes, rhs unsorted", []int{3, 2, 4}, []int{4, 5, 3}, func(a, b *Node) *Node {
		return DotGeneral(a, []int{0, 2}, nil, b, []int{2, 0}, nil)
	}},
	{"batch axis last", []int{3, 4, 2}, []int{2, 3, 5}, func(a, b *Node) *Node {
		return DotGeneral(a, []int{0}, []int{2}, b, []int{1}, []int{0})
	}},
}

// grads returns the first-order gradients of sum(sin(C)) and the second-order term
// d/d(a,b) sum(grad_a^2 + grad_b^2) for the product op.
func grads(t *testing.T, op func(a, b *Node) *Node, a, b *tensors.Tensor) [][]float64 {
	out := MustExecOnceN(testutil.Backend(), func(a, b *Node) []*Node {
		c := op(a, b)
		loss := ReduceAllSum(Sin(c))
		g := Gradient(loss, a, b)
		second := Gradient(Add(ReduceAllSum(Square(g[0])), ReduceAllSum(Square(g[1]))), a, b)
		return []*Node{g[0], g[1], second[0], second[1]}
	}, a, b)
	res := make([][]float64, len(out))
	for i, o := range out {
		res[i] = vars.Flat64(o)
	}
	return res
}

// TestGradientsMatchGoMLX compares the contraction gradients (first and second order) with
// GoMLX's own broadcast-and-reduce ones on the same inputs.
func TestGradientsMatchGoMLX(t *testing.T) {
	if !Active() {
		t.Fatal("dotgrad is not installed: GoMLX's DotGeneral node layout changed; update dotGeneralAxes")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range products {
		a, b := vars.Normal(rng, p.a...), vars.Normal(rng, p.b...)
		got := grads(t, p.op, a, b)
		VJPRegistration[NodeTypeDot], VJPRegistration[NodeTypeDotGeneral] = origDot, origGeneral
		want := grads(t, p.op, a, b)
		install()
		for i := range want {
			maxDiff, scale := 0.0, 0.0
			for j := range want[i] {
				maxDiff = math.Max(maxDiff, math.Abs(got[i][j]-want[i][j]))
				scale = math.Max(scale, math.Abs(want[i][j]))
			}
			if len(got[i]) != len(want[i]) || maxDiff > 1e-12*math.Max(1, scale) {
				t.Errorf("%s: output %d differs from GoMLX's gradient by %g (scale %g)", p.name, i, maxDiff, scale)
			}
		}
	}
}

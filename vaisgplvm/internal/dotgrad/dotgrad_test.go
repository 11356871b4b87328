package dotgrad

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// products are the contractions the model uses and awkward ones (contracting axes listed out of
// order, batch axes last): each has the operands' shapes, the DotGeneral axes and the op that
// builds it (DotGeneral itself, or Dot(...).Product() / MatMul, which build DotGeneral nodes).
var products = []struct {
	name           string
	a, b           []int
	lc, lb, rc, rb []int
	op             func(a, b *Node) *Node // nil: DotGeneral with the axes
}{
	{"dot matrix-matrix", []int{4, 3}, []int{3, 5}, []int{1}, nil, []int{0}, nil, func(a, b *Node) *Node { return Dot(a, b).Product() }},
	{"dot matrix-vector", []int{4, 3}, []int{3}, []int{1}, nil, []int{0}, nil, func(a, b *Node) *Node { return Dot(a, b).Product() }},
	{"dot vector-vector", []int{3}, []int{3}, []int{0}, nil, []int{0}, nil, func(a, b *Node) *Node { return Dot(a, b).Product() }},
	{"batched matmul", []int{2, 4, 3}, []int{2, 3, 5}, []int{2}, []int{0}, []int{1}, []int{0}, func(a, b *Node) *Node { return Dot(a, b).MatMul() }},
	{"rhs transposed", []int{4, 3}, []int{5, 3}, []int{1}, nil, []int{1}, nil, nil},
	{"two contracting axes, unsorted, unequal sizes", []int{3, 2, 4}, []int{4, 5, 3}, []int{2, 0}, nil, []int{0, 2}, nil, nil},
	{"two contracting axes, rhs unsorted", []int{3, 2, 4}, []int{4, 5, 3}, []int{0, 2}, nil, []int{2, 0}, nil, nil},
	{"two contracting axes, unsorted, equal sizes", []int{3, 2, 3}, []int{3, 5, 3}, []int{2, 0}, nil, []int{0, 2}, nil, nil},
	{"batched transposed matrix-vector (L^T g)", []int{6, 3, 4}, []int{6, 3}, []int{1}, []int{0}, []int{1}, []int{0}, nil},
	{"lhs contracting first", []int{3, 4}, []int{3, 5}, []int{0}, nil, []int{0}, nil, nil},
	{"batch axis last", []int{3, 4, 2}, []int{2, 3, 5}, []int{0}, []int{2}, []int{1}, []int{0}, nil},
}

// reference computes DotGeneral(a, b) with the given axes by elementwise products and a sum: both
// operands are permuted to [batch, free, contracting], broadcast to [batch, lhs free, rhs free,
// contracting], multiplied and summed over the contracting axes. Its gradients go through
// Transpose, Reshape, broadcasting, Mul and ReduceSum only, none through DotGeneral.
func reference(a, b *Node, lc, lb, rc, rb []int) *Node {
	lf, rf := free(a.Rank(), lc, lb), free(b.Rank(), rc, rb)
	pa := TransposeAllAxes(a, slices.Concat(lb, lf, lc)...)
	pb := TransposeAllAxes(b, slices.Concat(rb, rf, rc)...)
	dims := func(x *Node, axes []int) []int {
		d := make([]int, len(axes))
		for i, ax := range axes {
			d[i] = x.Shape().Dim(ax)
		}
		return d
	}
	bd, lfd, rfd, cd := dims(a, lb), dims(a, lf), dims(b, rf), dims(a, lc)
	ones := func(n int) []int {
		o := make([]int, n)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	full := slices.Concat(bd, lfd, rfd, cd)
	ea := BroadcastToDims(Reshape(pa, slices.Concat(bd, lfd, ones(len(rfd)), cd)...), full...)
	eb := BroadcastToDims(Reshape(pb, slices.Concat(bd, ones(len(lfd)), rfd, cd)...), full...)
	sum := iota(len(full)-len(cd), len(cd))
	return ReduceSum(Mul(ea, eb), sum...)
}

// grads returns the first-order gradients of sum(sin(C)) and the second-order term
// d/d(a,b) sum(grad_a^2 + grad_b^2) for the product op.
func grads(op func(a, b *Node) *Node, a, b *tensors.Tensor) ([][]float64, error) {
	out, err := ExecOnceN(testutil.Backend(), func(a, b *Node) []*Node {
		c := op(a, b)
		loss := ReduceAllSum(Sin(c))
		g := Gradient(loss, a, b)
		second := Gradient(Add(ReduceAllSum(Square(g[0])), ReduceAllSum(Square(g[1]))), a, b)
		return []*Node{c, g[0], g[1], second[0], second[1]}
	}, a, b)
	if err != nil {
		return nil, err
	}
	res := make([][]float64, len(out))
	for i, o := range out {
		res[i] = vars.Flat64(o)
	}
	return res, nil
}

// maxDiff returns the largest absolute difference of got and want (Inf when their sizes differ)
// and the largest |want|.
func maxDiff(got, want []float64) (diff, scale float64) {
	if len(got) != len(want) {
		return math.Inf(1), 0
	}
	for j := range want {
		diff = math.Max(diff, math.Abs(got[j]-want[j]))
		scale = math.Max(scale, math.Abs(want[j]))
	}
	return diff, scale
}

// TestGradientsMatchReference compares the product, its contraction gradients and the
// second-order terms with the broadcast-and-reduce reference, to 1e-12 relative, for every
// product; and reports where GoMLX's own DotGeneral gradient disagrees with the reference (it
// panics or is wrong when contracting axes are listed out of order; see docs/cpu-performance.md).
func TestGradientsMatchReference(t *testing.T) {
	if !Active() {
		t.Fatal("dotgrad is not installed: GoMLX's DotGeneral node layout changed; update dotGeneralAxes")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range products {
		op := p.op
		if op == nil {
			op = func(a, b *Node) *Node { return DotGeneral(a, p.lc, p.lb, b, p.rc, p.rb) }
		}
		a, b := vars.Normal(rng, p.a...), vars.Normal(rng, p.b...)
		want, err := grads(func(a, b *Node) *Node { return reference(a, b, p.lc, p.lb, p.rc, p.rb) }, a, b)
		if err != nil {
			t.Fatalf("%s: the reference: %v", p.name, err)
		}
		got, err := grads(op, a, b)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for i := range want {
			if d, s := maxDiff(got[i], want[i]); d > 1e-12*math.Max(1, s) {
				t.Errorf("%s: output %d differs from the reference by %g (scale %g)", p.name, i, d, s)
			}
		}
		// GoMLX's own gradient, for the record.
		VJPRegistration[NodeTypeDotGeneral] = origGeneral
		gomlx, err := grads(op, a, b)
		install()
		switch {
		case err != nil:
			t.Logf("%s: GoMLX's own DotGeneral gradient fails: %.300v", p.name, err)
		default:
			worst := 0.0
			for i := 1; i < len(want); i++ {
				d, s := maxDiff(gomlx[i], want[i])
				worst = math.Max(worst, d/math.Max(1, s))
			}
			if worst > 1e-12 {
				t.Logf("%s: GoMLX's own DotGeneral gradient is off by %.3g (relative)", p.name, worst)
			}
		}
	}
}

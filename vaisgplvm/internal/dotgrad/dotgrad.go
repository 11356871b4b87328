// Package dotgrad replaces GoMLX v0.26.0's reverse-mode gradients of Dot and DotGeneral by
// contractions (DotGeneral) when it is imported.
//
// GoMLX v0.26.0 builds the gradient of a matrix product C = A B ([I, J] x [J, K]) as a broadcast
// product [I, J, K] followed by a reduction. On the pure-Go backend that is O(I J K) memory and
// goes through its slow generic broadcasting loop: it was ~80% of a VAIS training step (the
// chain's second-order gradients multiply the number of such products). Here the gradients are
//
//	dA = V B^T,  dB = A^T V       (and their DotGeneral generalisation over batch axes)
//
// written with Dot / DotGeneral themselves, so second and higher derivatives stay contractions.
// The values are identical to GoMLX's (see the tests, which compare both on random shapes).
//
// GoMLX exposes the table (graph.VJPRegistration) "for experimentation"; the axes of a
// DotGeneral node are unexported, so they are read by reflection. If that ever fails (a GoMLX
// upgrade renames the fields) the original gradient is used and Active reports false.
package dotgrad

import (
	"reflect"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

var (
	active               bool
	origDot, origGeneral VJP // GoMLX's own gradients (kept for the tests and as fallback)
)

func init() {
	if !probe() {
		return
	}
	origDot = VJPRegistration[NodeTypeDot]
	origGeneral = VJPRegistration[NodeTypeDotGeneral]
	install()
	active = true
}

// install puts the contraction gradients in GoMLX's table.
func install() {
	VJPRegistration[NodeTypeDot] = func(node *Node, v []*Node, s shapes.Shape) []*Node {
		if g := dotVJP(node, v[0]); g != nil {
			return g
		}
		return origDot(node, v, s)
	}
	VJPRegistration[NodeTypeDotGeneral] = func(node *Node, v []*Node, s shapes.Shape) []*Node {
		if ax, ok := dotGeneralAxes(node); ok {
			return dotGeneralVJP(node, v[0], ax)
		}
		return origGeneral(node, v, s)
	}
}

// Active reports whether the contraction-based gradients are installed.
func Active() bool { return active }

// probe reports whether the DotGeneral node layout is the one dotGeneralAxes reads.
func probe() bool {
	t := reflect.TypeOf((*Node)(nil)).Elem()
	f, ok := t.FieldByName("inputs")
	return ok && f.Type.Kind() == reflect.Interface
}

type axes struct {
	lc, lb, rc, rb []int // lhs contracting, lhs batch, rhs contracting, rhs batch
}

// dotGeneralAxes reads the axes of a DotGeneral node.
func dotGeneralAxes(node *Node) (ax axes, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	in := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !in.IsValid() || in.IsNil() {
		return ax, false
	}
	p := in.Elem()
	if p.Kind() == reflect.Pointer {
		p = p.Elem()
	}
	read := func(name string) ([]int, bool) {
		f := p.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Slice {
			return nil, false
		}
		out := make([]int, f.Len())
		for i := range out {
			out[i] = int(f.Index(i).Int())
		}
		return out, true
	}
	var ok1, ok2, ok3, ok4 bool
	ax.lc, ok1 = read("lhsContractingAxes")
	ax.lb, ok2 = read("lhsBatchAxes")
	ax.rc, ok3 = read("rhsContractingAxes")
	ax.rb, ok4 = read("rhsBatchAxes")
	return ax, ok1 && ok2 && ok3 && ok4
}

// dotVJP handles Dot (ranks <= 2); nil means "not handled".
func dotVJP(node, v *Node) []*Node {
	a, b := node.Inputs()[0], node.Inputs()[1]
	switch {
	case a.Rank() == 1 && b.Rank() == 1:
		return []*Node{Mul(v, b), Mul(v, a)}
	case a.Rank() == 2 && b.Rank() == 1: // [I, J] x [J] -> [I]
		return []*Node{Mul(InsertAxes(v, -1), InsertAxes(b, 0)), Dot(Transpose(a, 0, 1), v)}
	case a.Rank() == 2 && b.Rank() == 2: // [I, J] x [J, K] -> [I, K]
		// Contract the shared axes in place (dA = v B^T, dB = A^T v) instead of transposing an
		// operand first: the pure-Go backend's DotGeneral takes the rhs as [free, contracting], so
		// dA needs no copy of B at all, and no Transpose node is added per product.
		return []*Node{DotGeneral(v, []int{1}, nil, b, []int{1}, nil), DotGeneral(a, []int{0}, nil, v, []int{0}, nil)}
	}
	return nil
}

// dotGeneralVJP returns the gradients of C = DotGeneral(lhs, rhs) for the upstream v. C's axes are
// [batch..., lhs free..., rhs free...], each group in the operand's axis order.
func dotGeneralVJP(node, v *Node, ax axes) []*Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	lf := free(lhs.Rank(), ax.lc, ax.lb)
	rf := free(rhs.Rank(), ax.rc, ax.rb)
	nb := len(ax.lb)
	vBatch := iota(0, nb)
	vLhsFree := iota(nb, len(lf))
	vRhsFree := iota(nb+len(lf), len(rf))

	// dLhs: contract v's rhs-free axes with rhs's free axes. Result: [batch, lhs free, rhs contracting
	// axes in rhs order].
	gl := DotGeneral(v, vRhsFree, vBatch, rhs, rf, ax.rb)
	permL := make([]int, lhs.Rank())
	for i, a := range ax.lb {
		permL[a] = i
	}
	for j, a := range lf {
		permL[a] = nb + j
	}
	for k, a := range ax.lc {
		permL[a] = nb + len(lf) + rankIn(ax.rc[k], ax.rc)
	}
	// dRhs: contract lhs's free axes with v's lhs-free axes. Result: [batch, lhs contracting axes in
	// lhs order, rhs free].
	gr := DotGeneral(lhs, lf, ax.lb, v, vLhsFree, vBatch)
	permR := make([]int, rhs.Rank())
	for i, a := range ax.rb {
		permR[a] = i
	}
	for k, a := range ax.rc {
		permR[a] = nb + rankIn(ax.lc[k], ax.lc)
	}
	for j, a := range rf {
		permR[a] = nb + len(ax.lc) + j
	}
	return []*Node{transposeIfNeeded(gl, permL), transposeIfNeeded(gr, permR)}
}

// free returns the axes of a rank-r operand that are neither contracting nor batch, ascending.
func free(r int, contracting, batch []int) []int {
	used := make([]bool, r)
	for _, a := range contracting {
		used[a] = true
	}
	for _, a := range batch {
		used[a] = true
	}
	var out []int
	for a := 0; a < r; a++ {
		if !used[a] {
			out = append(out, a)
		}
	}
	return out
}

// rankIn returns how many elements of set are smaller than a.
func rankIn(a int, set []int) int {
	n := 0
	for _, b := range set {
		if b < a {
			n++
		}
	}
	return n
}

func iota(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// transposeIfNeeded returns x with output axis a = input axis perm[a].
func transposeIfNeeded(x *Node, perm []int) *Node {
	for i, p := range perm {
		if i != p {
			return TransposeAllAxes(x, perm...)
		}
	}
	return x
}

// Package dotgrad replaces GoMLX's reverse-mode gradient of DotGeneral (every matrix product,
// Dot(...).Product() and MatMul included, is a DotGeneral node since GoMLX v0.28) by contractions
// written with DotGeneral itself, when it is imported. For C = DotGeneral(A, B) the gradients are
//
//	dA = V B^T,  dB = A^T V       (with the batch, free and contracting axes put back in place)
//
// so second and higher derivatives (the annealed chain's scores) stay contractions.
//
// Why it is still needed with GoMLX v0.28.6: GoMLX's own DotGeneral gradient is wrong when the
// contracting axes are not listed in increasing order on both operands, e.g. DotGeneral(a [3, 2, 4],
// {2, 0}, b [4, 5, 3], {0, 2}): with unequal sizes it panics building the graph ("invalid shape for
// calculated AccumulatedVJP ... [3, 5, 4] (wanted [4, 5, 3])"), with equal sizes it returns wrong
// values (off by 79% relative in TestGradientsMatchReference). The tests check these gradients
// against an independent broadcast-and-reduce reference, not against GoMLX's; see
// docs/cpu-performance.md for the reproduction. (Under GoMLX v0.26.0 the reason was speed: its
// gradient was a broadcast product [I, J, K] and a reduction, ~80% of a VAIS step.)
//
// GoMLX exposes the table (graph.VJPRegistration) "for experimentation"; the axes of a
// DotGeneral node are unexported, so they are read by reflection. If that ever fails (a GoMLX
// upgrade renames the fields) the original gradient is used and Active reports false.
package dotgrad

import (
	"reflect"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

var (
	active      bool
	origGeneral VJP // GoMLX's own gradient (kept for the tests and as fallback)
)

func init() {
	if !probe() {
		return
	}
	origGeneral = VJPRegistration[NodeTypeDotGeneral]
	install()
	active = true
}

// install puts the contraction gradients in GoMLX's table.
func install() {
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

	// dLhs: contract v's rhs-free axes with rhs's free axes. Result [batch, lhs free, lhs contracting
	// (in rhs's order)], or with the operands swapped [batch, lhs contracting, lhs free]: whichever
	// is already in lhs's axis order, so that no transpose (a copy on the pure-Go backend) follows.
	permL, swapL := make([]int, lhs.Rank()), make([]int, lhs.Rank())
	for i, a := range ax.lb {
		permL[a], swapL[a] = i, i
	}
	for j, a := range lf {
		permL[a], swapL[a] = nb+j, nb+len(ax.lc)+j
	}
	for k, a := range ax.lc {
		permL[a] = nb + len(lf) + rankIn(ax.rc[k], ax.rc)
		swapL[a] = nb + rankIn(ax.rc[k], ax.rc)
	}
	var gl *Node
	if isIdentity(swapL) && !isIdentity(permL) {
		gl, permL = DotGeneral(rhs, rf, ax.rb, v, vRhsFree, vBatch), swapL
	} else {
		gl = DotGeneral(v, vRhsFree, vBatch, rhs, rf, ax.rb)
	}
	// dRhs: contract lhs's free axes with v's lhs-free axes. Result [batch, rhs contracting (in lhs's
	// order), rhs free], or swapped [batch, rhs free, rhs contracting], as for dLhs.
	permR, swapR := make([]int, rhs.Rank()), make([]int, rhs.Rank())
	for i, a := range ax.rb {
		permR[a], swapR[a] = i, i
	}
	for k, a := range ax.rc {
		permR[a] = nb + rankIn(ax.lc[k], ax.lc)
		swapR[a] = nb + len(rf) + rankIn(ax.lc[k], ax.lc)
	}
	for j, a := range rf {
		permR[a], swapR[a] = nb+len(ax.lc)+j, nb+j
	}
	var gr *Node
	if isIdentity(swapR) && !isIdentity(permR) {
		gr, permR = DotGeneral(v, vLhsFree, vBatch, lhs, lf, ax.lb), swapR
	} else {
		gr = DotGeneral(lhs, lf, ax.lb, v, vLhsFree, vBatch)
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

// isIdentity reports whether perm is 0, 1, ..., len(perm)-1.
func isIdentity(perm []int) bool {
	for i, p := range perm {
		if i != p {
			return false
		}
	}
	return true
}

// transposeIfNeeded returns x with output axis a = input axis perm[a].
func transposeIfNeeded(x *Node, perm []int) *Node {
	if isIdentity(perm) {
		return x
	}
	return TransposeAllAxes(x, perm...)
}

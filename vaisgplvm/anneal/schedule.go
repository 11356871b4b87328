// Package anneal holds the annealing schedules beta_k, the Langevin step size eta and the annealed
// Langevin chain with its backward-kernel weights (paper Eqs. 10-21).
package anneal

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Schedule gives the inverse temperatures beta_1..beta_K of the bridging densities
// pi_k(h) ∝ q0(h)^(1-beta_k) (p(x|h) p(h))^beta_k, with 0 < beta_1 <= ... <= beta_K = 1.
type Schedule interface {
	// Name is the command-line name.
	Name() string
	// Betas returns the schedule as a [K] node (K >= 1).
	Betas(ctx *mlmodel.Scope, g *Graph, k int) *Node
}

// Fixed is a hand-written or closed-form schedule that is not learned.
type Fixed struct {
	Kind   string  // "linear", "sigmoid", "power" or "custom"
	Param  float64 // sigmoid steepness (default 5) or power exponent (default 2)
	Values []float64
}

// Name implements Schedule.
func (f Fixed) Name() string { return f.Kind }

// Values returns beta_1..beta_K as float64 (beta_K = 1 exactly):
//
//	linear:  beta_k = k/K
//	sigmoid: beta_k = (s(k) - s(0)) / (s(K) - s(0)), s(t) = sigmoid(c (2t/K - 1)), c = Param
//	power:   beta_k = (k/K)^p, p = Param
//	custom:  Values, checked to be non-decreasing in (0, 1] and ending at 1.
func (f Fixed) BetaValues(k int) ([]float64, error) {
	if k < 1 {
		return nil, fmt.Errorf("anneal: K must be >= 1, got %d", k)
	}
	out := make([]float64, k)
	switch f.Kind {
	case "linear":
		for i := range out {
			out[i] = float64(i+1) / float64(k)
		}
	case "sigmoid":
		c := f.Param
		if c == 0 {
			c = 5
		}
		s := func(t float64) float64 { return 1 / (1 + math.Exp(-c*(2*t/float64(k)-1))) }
		for i := range out {
			out[i] = (s(float64(i+1)) - s(0)) / (s(float64(k)) - s(0))
		}
	case "power":
		p := f.Param
		if p == 0 {
			p = 2
		}
		for i := range out {
			out[i] = math.Pow(float64(i+1)/float64(k), p)
		}
	case "custom":
		if len(f.Values) != k {
			return nil, fmt.Errorf("anneal: custom schedule has %d values, want K=%d", len(f.Values), k)
		}
		if f.Values[k-1] != 1 {
			return nil, fmt.Errorf("anneal: custom schedule ends at beta_K = %g, want exactly 1", f.Values[k-1])
		}
		copy(out, f.Values)
	default:
		return nil, fmt.Errorf("anneal: unknown schedule %q (want linear, sigmoid, power, custom or learned)", f.Kind)
	}
	out[k-1] = 1
	prev := 0.0
	for i, b := range out {
		if !(b > 0) || b > 1 || b < prev || math.IsNaN(b) {
			return nil, fmt.Errorf("anneal: beta_%d = %g: a schedule must be non-decreasing in (0, 1]", i+1, b)
		}
		prev = b
	}
	return out, nil
}

// Betas implements Schedule. It panics on an invalid schedule: call BetaValues first to validate.
func (f Fixed) Betas(_ *mlmodel.Scope, g *Graph, k int) *Node {
	v, err := f.BetaValues(k)
	if err != nil {
		panic(err)
	}
	return Const(g, v)
}

// Learned is a monotone schedule ending at 1, learned with the model: beta_k = sum_{j<=k} w_j with
// w = softmax(raw) [K] (so beta_K = 1 up to rounding and beta_k > 0). raw starts at zero, which is
// the linear schedule. Variable: "anneal/raw_beta_increments" [K].
type Learned struct{}

// Name implements Schedule.
func (Learned) Name() string { return "learned" }

// Betas implements Schedule.
func (Learned) Betas(ctx *mlmodel.Scope, g *Graph, k int) *Node {
	raw := vars.New(ctx.At("anneal"), "raw_beta_increments", make([]float64, k)).ValueGraph(g)
	w := Softmax(raw, 0)
	cum := MatMul(InsertAxes(w, 0), ConvertDType(upperOnes(g, k), w.DType())) // [1, K]: cumulative sums
	return Reshape(cum, k)
}

// upperOnes is the constant [K, K] matrix with ones on and above the diagonal.
func upperOnes(g *Graph, k int) *Node {
	m := make([][]float64, k)
	for i := range m {
		m[i] = make([]float64, k)
		for j := i; j < k; j++ {
			m[i][j] = 1
		}
	}
	return Const(g, m)
}

// ParseSchedule maps a command-line name to a Schedule: linear, sigmoid, power, learned.
//
// Forms: "linear", "learned", "sigmoid" or "sigmoid:C" (steepness C), "power" or "power:P"
// (exponent P), and "custom:b1,b2,...,bK" (the betas themselves, non-decreasing, ending at 1).
func ParseSchedule(name string) (Schedule, error) {
	kind, arg, hasArg := strings.Cut(name, ":")
	switch {
	case name == "learned":
		return Learned{}, nil
	case name == "linear":
		return Fixed{Kind: name}, nil
	case (kind == "sigmoid" || kind == "power") && !hasArg:
		return Fixed{Kind: kind}, nil
	case kind == "sigmoid" || kind == "power":
		p, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("schedule %q: the %s parameter must be a positive number", name, kind)
		}
		return Fixed{Kind: kind, Param: p}, nil
	case kind == "custom" && hasArg:
		var vals []float64
		for _, f := range strings.Split(arg, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("schedule %q: %q is not a number", name, f)
			}
			vals = append(vals, v)
		}
		fx := Fixed{Kind: "custom", Values: vals}
		if _, err := fx.BetaValues(len(vals)); err != nil {
			return nil, fmt.Errorf("schedule %q: %w", name, err)
		}
		return fx, nil
	}
	return nil, fmt.Errorf("unknown schedule %q (want linear, sigmoid[:C], power[:P], custom:b1,...,1 or learned)", name)
}

package evidence

import (
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// BoundValue is one bound evaluated at a trained model's global parameters and q0: its -ELBO per
// point and Monte Carlo standard error (train.Evaluation), and its gap to the evidence reference.
type BoundValue struct {
	Name    string  `json:"bound"`
	NegELBO float64 `json:"neg_elbo_per_point"`
	SE      float64 `json:"neg_elbo_mc_se"`
	// Gap is NegELBO - NegLogEvidencePerPoint (nats per point) and GapSE its standard error
	// sqrt(SE^2 + evidence SE^2); nil unless the evidence covers every point (the bounds do).
	Gap       *float64 `json:"gap_to_evidence,omitempty"`
	GapSE     *float64 `json:"gap_to_evidence_se,omitempty"`
	Reference string   `json:"what"` // what the bound keeps of the local approximation
}

// Decompose evaluates, at the trainer's parameters (the same q0, kernel, noise, Z and q(u)), the
// bounds that split a model's gap to the evidence ev into its parts: q0 alone (MF's ELBO with
// closed-form KL, Samples draws), q0 with importance weighting (IWVI with the model's K samples),
// and, for an annealed model, the trained chain (its own bound), each on all N points, averaged
// over draws noise draws. The gaps to ev are set when ev covers all N points. The differences
// between consecutive lines are the importance-weighting gain and the chain's gain over q0.
func Decompose(tr *train.Trainer, ev *Result, draws int) ([]BoundValue, error) {
	m := tr.Model
	type variant struct {
		method, what string
		k            int
	}
	iw := max(m.Cfg.K, 1)
	vs := []variant{{"mf", "q0 alone (ELBO)", m.Cfg.K}, {"iwvi", fmt.Sprintf("q0 with %d importance samples (IWVI)", iw), iw}}
	if m.Method.Annealed() {
		vs = append(vs, variant{m.Cfg.Method, fmt.Sprintf("the trained chain: %d chain(s) of %d annealed steps (%s)",
			m.Cfg.Samples, m.Cfg.K, m.Cfg.Method), m.Cfg.K})
	}
	var out []BoundValue
	for _, v := range vs {
		t, err := withBound(tr, v.method, v.k)
		if err != nil {
			return nil, err
		}
		e, err := t.Evaluate(draws, nil)
		if err != nil {
			return nil, fmt.Errorf("evidence: evaluating %s: %w", v.what, err)
		}
		b := BoundValue{Name: v.method, NegELBO: e.NegELBO, Reference: v.what}
		if e.NegELBOSE != nil {
			b.SE = *e.NegELBOSE
		}
		if ev != nil && len(ev.Points) == m.N {
			gap, se := b.NegELBO-ev.NegLogEvidencePerPoint, math.Hypot(b.SE, ev.SE)
			b.Gap, b.GapSE = &gap, &se
		}
		out = append(out, b)
	}
	return out, nil
}

// withBound returns a trainer that evaluates the bound method with K = k at tr's parameters (a
// copy of tr and of its model; tr is unchanged).
func withBound(tr *train.Trainer, method string, k int) (*train.Trainer, error) {
	meth, err := bounds.Lookup(method)
	if err != nil {
		return nil, err
	}
	m := *tr.Model
	m.Cfg.Method, m.Cfg.K, m.Method = method, k, meth
	t := *tr
	t.Model = &m
	return &t, nil
}

package experiment

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/plot"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
)

// LabControl is one slider of the schedule lab: a number in [Min, Max], starting at Value, moved
// in Steps steps. It has the fields of nb.Control, so a notebook converts it with nb.Control(c).
type LabControl struct {
	Name            string
	Min, Max, Value float64
	Steps           int
}

// Controls returns the lab's sliders, in the order SettingOf reads them: beta_1..beta_{K-1} (beta_K
// is 1) starting at the trained schedule; log2 of the factor on the trained eta_k, starting at 0;
// then, for a VAIS model, a switch to the underdamped chain (0: VAIS's Langevin chain, 1:
// underdamped) and its damping gamma (starting at the bound's default), or, for an underdamped
// model, its damping, starting at the trained one.
func (l *ScheduleLab) Controls() []LabControl {
	betas, _ := l.Trained()
	var c []LabControl
	for k, b := range betas[:len(betas)-1] {
		c = append(c, LabControl{Name: fmt.Sprintf("beta_%d", k+1), Min: 0.01, Max: 0.99, Value: math.Round(min(0.99, max(0.01, b))*100) / 100, Steps: 98})
	}
	c = append(c, LabControl{Name: "log2 of the eta_k factor", Min: -3, Max: 3, Steps: 60})
	if l.damping == nil {
		c = append(c, LabControl{Name: "underdamped chain (0: VAIS's Langevin, 1: on)", Max: 1, Steps: 1})
		return append(c, LabControl{Name: "damping gamma (underdamped)", Max: 0.95, Value: bounds.DefaultDamping, Steps: 95})
	}
	return append(c, LabControl{Name: "damping gamma", Max: 0.95, Value: math.Round(min(0.95, *l.damping)*100) / 100, Steps: 95})
}

// SettingOf maps the sliders' values, in Controls' order, to a LabSetting. Errors: a number of
// values other than len(Controls()).
func (l *ScheduleLab) SettingOf(values []float64) (LabSetting, error) {
	k := len(l.trained.Betas)
	want := k + 1
	if l.damping == nil {
		want++
	}
	if len(values) != want {
		return LabSetting{}, fmt.Errorf("schedule lab: %d slider values, want %d", len(values), want)
	}
	s := LabSetting{Betas: append(append([]float64{}, values[:k-1]...), 1), EtaScale: math.Exp2(values[k-1])}
	d := values[len(values)-1]
	if l.damping != nil || values[k] >= 0.5 {
		s.Damping = &d
	}
	return s, nil
}

// View evaluates the setting of the sliders' values (SettingOf) and returns what the lab shows:
// a table of the trained chain and this setting (beta_k, eta_k, damping, -ELBO ± s.e. over the
// points, the difference to the trained chain paired point by point, the gap to the evidence, the
// ESS, the mean acceptance; its title gives the time this evaluation took) and three panels against the trained chain: beta_k, eta_k and the
// acceptance of each transition. Errors: SettingOf's and Evaluate's (a schedule that does not
// increase, a damping outside [0, 1)).
func (l *ScheduleLab) View(values []float64) (report.Table, []*plot.Plot, error) {
	s, err := l.SettingOf(values)
	if err != nil {
		return report.Table{}, nil, err
	}
	if l.base == nil {
		if l.base, err = l.Evaluate(LabSetting{}); err != nil {
			return report.Table{}, nil, err
		}
	}
	start := time.Now()
	r, err := l.Evaluate(s)
	if err != nil {
		return report.Table{}, nil, err
	}
	secs := time.Since(start).Seconds()
	tab := report.Table{
		Title: fmt.Sprintf("%d points, %d chain(s) each, the same noise for every setting; evaluated in %.2f s",
			len(l.Points), l.Chains, secs),
		Header: []string{"chain", "beta_k", "eta_k", "damping", "-ELBO / N", "minus the trained (paired)", "gap to evidence", "ESS", "acceptance (mean over k)"},
		Rows:   [][]string{l.base.row("trained", l.base), r.row("this setting", l.base)},
	}
	var panels []*plot.Plot
	for _, p := range []struct {
		title, y    string
		base, moved []float64
	}{{"schedule", "beta_k", l.base.Betas, r.Betas}, {"step sizes", "eta_k", l.base.Etas, r.Etas},
		{"acceptance", "mean min(1, a_k)", l.base.Accept, r.Accept}} {
		pl, err := plots.Curves(plots.CurveOptions{Title: p.title, XLabel: "step k", YLabel: p.y, Markers: true},
			plots.Series{Name: "trained", Y: p.base}, plots.Series{Name: "this setting", Y: p.moved})
		if err != nil {
			return report.Table{}, nil, err
		}
		panels = append(panels, pl)
	}
	return tab, panels, nil
}

// row is r as a row of View's table, paired with base.
func (r *LabResult) row(name string, base *LabResult) []string {
	d, se := r.Paired(base)
	gap, ess, damping := "-", "-", "Langevin (VAIS)"
	if r.Gap != nil {
		gap = fmt.Sprintf("%.3f ± %.3f", *r.Gap, *r.GapSE)
	}
	if r.ESS > 0 {
		ess = fmt.Sprintf("%.2f", r.ESS)
	}
	if r.Damping != nil {
		damping = fmt.Sprintf("%.2f", *r.Damping)
	}
	acc := 0.0
	for _, a := range r.Accept {
		acc += a / float64(len(r.Accept))
	}
	return []string{name, fmt.Sprintf("%.2f", r.Betas), fmt.Sprintf("%.3g", r.Etas), damping, fmt.Sprintf("%.3f ± %.3f", r.NegBound, r.SE),
		fmt.Sprintf("%+.3f ± %.3f", d, se), gap, ess, fmt.Sprintf("%.2f", acc)}
}

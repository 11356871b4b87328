package nb

import (
	"context"
	"fmt"
	"os"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Train trains tr until tr.Iter reaches iters (as train.Trainer.Run). In a notebook it shows a live block, updated every
// `every` iterations (default iters/20), with the iteration, the current -ELBO per point and the
// -ELBO curve so far, and leaves the final curve in the cell output; elsewhere it draws a progress
// bar on stderr. Errors are those of tr.Run (a diverging run names its iteration).
func Train(tr *train.Trainer, iters, every int) error {
	if every <= 0 {
		every = max(1, iters/20)
	}
	if !gonbui.IsNotebook {
		bar := progress.New(os.Stderr, iters, tr.Model.Cfg.Method)
		defer bar.Finish()
		return tr.Run(context.Background(), iters, train.RunOptions{Observe: bar.Training})
	}
	id := "vaisgplvm_live_" + gonbui.UniqueID()
	hook := func(t *train.Trainer) error {
		gonbui.UpdateHTML(id, liveHTML(t, iters))
		return nil
	}
	err := tr.Run(context.Background(), iters, train.RunOptions{Every: every, Hook: hook})
	gonbui.UpdateHTML(id, "") // drop the transient block
	gonbui.DisplayHTML(liveHTML(tr, iters))
	gonbui.Sync()
	return err
}

// liveHTML is the status line and the curve of a training run as HTML.
func liveHTML(t *train.Trainer, total int) string {
	last := "-"
	if n := len(t.Curve); n > 0 {
		last = fmt.Sprintf("%.4g", t.Curve[n-1])
	}
	s := fmt.Sprintf("<p><b>%s</b>: iteration %d of %d, -ELBO per point %s, %.3f s per iteration</p>",
		t.Model.Cfg.Method, t.Iter, total, last, t.SecondsPerIter())
	if len(t.Curve) < 2 {
		return s
	}
	p, err := plots.Curves(plots.CurveOptions{Title: "-ELBO per point", XLabel: "iteration", YLabel: "-ELBO / N",
		Smooth: max(1, len(t.Curve)/50), SkipFirst: len(t.Curve) / 10}, plots.Series{Name: t.Model.Cfg.Method, Y: t.Curve})
	if err != nil {
		return s
	}
	img, err := PlotsHTML(0, 0, p)
	if err != nil {
		return s
	}
	return s + img
}

package nb

import (
	"fmt"
	"html"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/comms"
	"github.com/janpfeifer/gonb/gonbui/dom"
	"github.com/janpfeifer/gonb/gonbui/widgets"
)

// Control is one slider of a Lab: a number in [Min, Max], starting at Value, that moves in Steps
// equal steps (0: 100).
type Control struct {
	Name            string
	Min, Max, Value float64
	Steps           int
}

// steps is the control's number of slider steps.
func (c Control) steps() int {
	if c.Steps <= 0 {
		return 100
	}
	return c.Steps
}

// position is v as a slider position in 0..steps.
func (c Control) position(v float64) int {
	if c.Max == c.Min {
		return 0
	}
	p := math.Round((v - c.Min) / (c.Max - c.Min) * float64(c.steps()))
	return int(max(0, min(float64(c.steps()), p)))
}

// value is slider position p as a number in [Min, Max].
func (c Control) value(p int) float64 {
	if p >= c.steps() {
		return c.Max
	}
	return c.Min + (c.Max-c.Min)*float64(p)/float64(c.steps())
}

// kernelIDEnv is where GoNB gives a cell program its Jupyter kernel id; GoNB sets it only when
// Jupyter started the kernel for a notebook server (not, e.g., for jupyter nbconvert), and its
// channel to the browser, which widgets need, works only then.
const kernelIDEnv = "GONB_JUPYTER_KERNEL_ID"

// FrontEndWait is how long Lab waits for a browser to answer before it decides that no live
// front end is attached (a headless run: jupyter nbconvert, the notebook tests). FrontEndWaitEnv,
// a number of seconds, replaces it (a browser on a busy machine can take longer to answer).
var FrontEndWait = 10 * time.Second

// FrontEndWaitEnv is the environment variable that sets Lab's wait for a browser, in seconds.
const FrontEndWaitEnv = "VAISGPLVM_FRONTEND_WAIT"

// frontEndWait returns FrontEndWaitEnv's seconds when it holds a positive number, else FrontEndWait.
func frontEndWait() time.Duration {
	if s, err := strconv.ParseFloat(os.Getenv(FrontEndWaitEnv), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return FrontEndWait
}

// Lab shows one slider per control, a "Reset" and a "Stop" button and an output block, then calls
// update with every slider's value (in the controls' order) each time a slider moves, and shows
// the HTML that update returns in the block. Moves that arrive while update runs are merged: the
// next call sees the sliders' latest values. Lab returns when Stop is pressed, leaving the last
// output in the cell (so a saved notebook keeps it).
//
// Sliders need a live kernel in a browser. Without one (a headless run such as jupyter nbconvert:
// no kernel id from Jupyter, or FrontEndWait passing without an answer) Lab shows update's output
// for the starting values once, says why there are no sliders, and returns nil; outside a
// notebook it calls update once (its errors still surface) and says on stderr that it showed
// nothing. With LabTraceEnv set it writes its events to that file. Errors: no controls, or a
// control with Max < Min or a Value outside [Min, Max].
func Lab(controls []Control, update func(values []float64) string) error {
	if len(controls) == 0 {
		return fmt.Errorf("nb: a lab needs at least one control")
	}
	start := make([]float64, len(controls))
	for i, c := range controls {
		if !(c.Max >= c.Min) || !(c.Value >= c.Min && c.Value <= c.Max) {
			return fmt.Errorf("nb: control %q: value %g outside [%g, %g]", c.Name, c.Value, c.Min, c.Max)
		}
		start[i] = c.Value
	}
	tr := openLabTrace()
	if !gonbui.IsNotebook || os.Getenv(kernelIDEnv) == "" || !frontEndAlive(frontEndWait(), tr) {
		showHTML("<p><i>No live front end answered (a headless run: jupyter nbconvert or the tests), so the " +
			"sliders are not shown; open the notebook in Jupyter with the GoNB kernel and run this cell to " +
			"drive them. The output for the starting values:</i></p>" + update(start))
		return nil
	}
	ui := newWidgetUI(controls)
	tr.event("sliders and buttons shown")
	ui.run(update, tr)
	tr.event("lab end")
	return nil
}

// showHTML displays h in a notebook; elsewhere it says on stderr that nothing was shown.
func showHTML(h string) {
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(h)
		gonbui.Sync()
		return
	}
	fmt.Fprintln(os.Stderr, "nb.Lab: not in a notebook: no sliders and no output shown")
}

// frontEndAlive reports whether a browser runs the notebook: it asks one, through GoNB's
// front-end channel, to send a value back, and waits at most wait.
func frontEndAlive(wait time.Duration, tr *labTrace) bool {
	addr := "/vaisgplvm/alive/" + gonbui.UniqueID()
	// The kernel installs its channel to the browser (or gives up). The listener is left open: in
	// GoNB v0.11.5 a value that arrives for an address whose last listener was closed leaves the
	// program's comms lock held (gonbui/comms dispatchValueUpdates returns without unlocking), and
	// no later message, a slider's or Stop's, would reach the lab; a late answer only parks one
	// goroutine.
	answer := comms.Listen[int](addr)
	dom.TransientJavascript(fmt.Sprintf(`(() => { const c = globalThis?.gonb_comm; if (c) { c.send(%q, 1); } })();`, addr))
	select {
	case <-answer.C:
		tr.event("front end answered")
		return true
	case <-time.After(wait):
		tr.event("no front end answered in %v", wait)
		return false
	}
}

// labLoop calls update with the latest values each time moves arrive on changes, merging the moves
// that arrive while it runs, and passes update's output to show; it returns when changes closes.
func labLoop(changes <-chan []float64, update func([]float64) string, show func(string)) {
	for v := range changes {
		for more := true; more; {
			select {
			case w, ok := <-changes:
				if !ok {
					more = false
					break
				}
				v = w
			default:
				more = false
			}
		}
		show(update(v))
	}
}

// widgetUI is a Lab's sliders, buttons and output block in a live notebook.
type widgetUI struct {
	controls []Control
	sliders  []*widgets.SliderBuilder
	reset    *widgets.ButtonBuilder
	stop     *widgets.ButtonBuilder
	outID    string
}

// newWidgetUI displays the controls' sliders (each with its name and value), the buttons and an
// empty output block.
func newWidgetUI(controls []Control) *widgetUI {
	ui := &widgetUI{controls: controls, outID: "vaisgplvm_lab_" + gonbui.UniqueID()}
	rowIDs := make([]string, len(controls))
	var b strings.Builder
	b.WriteString(`<table style="border-collapse:collapse">`)
	for i, c := range controls {
		rowIDs[i] = "vaisgplvm_lab_ctl_" + gonbui.UniqueID()
		fmt.Fprintf(&b, `<tr><td style="padding:2px 8px;text-align:right">%s</td><td id="%s"></td><td style="padding:2px 8px">[%.3g, %.3g]</td></tr>`,
			html.EscapeString(c.Name), rowIDs[i], c.Min, c.Max)
	}
	buttons := "vaisgplvm_lab_buttons_" + gonbui.UniqueID()
	fmt.Fprintf(&b, `<tr><td></td><td id="%s"></td><td></td></tr></table>`, buttons)
	gonbui.DisplayHTML(b.String())
	for i, c := range controls {
		// Positions run 1..steps+1: GoNB's browser side drops a value of 0 sent from Go (Reset).
		ui.sliders = append(ui.sliders, widgets.Slider(1, c.steps()+1, c.position(c.Value)+1).AppendTo(rowIDs[i]).Done())
	}
	ui.reset = widgets.Button("Reset").AppendTo(buttons).Done()
	ui.stop = widgets.Button("Stop").AppendTo(buttons).Done()
	return ui
}

// run evaluates the starting values, then every move, until Stop; the last output stays.
func (ui *widgetUI) run(update func([]float64) string, tr *labTrace) {
	var mu sync.Mutex
	pos := make([]int, len(ui.controls)) // the sliders' positions, as the browser reports them
	for i, c := range ui.controls {
		pos[i] = c.position(c.Value)
	}
	values := func() []float64 {
		mu.Lock()
		defer mu.Unlock()
		v := make([]float64, len(pos))
		for i, p := range pos {
			v[i] = ui.controls[i].value(p)
		}
		return v
	}
	moved := make(chan struct{}, 1)
	for i, s := range ui.sliders {
		ch := s.Listen()
		go func() {
			for p := range ch.C {
				tr.event("slider %d at position %d", i, p)
				mu.Lock()
				pos[i] = p - 1
				mu.Unlock()
				select {
				case moved <- struct{}{}:
				default:
				}
			}
		}()
	}
	changes := make(chan []float64, 16)
	resets, stops := ui.reset.Listen(), ui.stop.Listen()
	go func() {
		defer close(changes)
		changes <- values()
		for {
			select {
			case <-moved:
				changes <- values()
			case <-resets.C:
				tr.event("reset")
				mu.Lock()
				for i, s := range ui.sliders {
					pos[i] = ui.controls[i].position(ui.controls[i].Value)
					s.SetValue(pos[i] + 1)
				}
				mu.Unlock()
				changes <- values()
			case <-stops.C:
				tr.event("stop")
				return
			}
		}
	}()
	last := ""
	labLoop(changes, func(v []float64) string {
		tr.event("evaluating %.3g", v)
		h := update(v)
		tr.event("evaluated")
		return h
	}, func(h string) {
		last = h
		gonbui.UpdateHTML(ui.outID, h)
	})
	tr.event("stopped: the last view is left in the cell")
	gonbui.UpdateHTML(ui.outID, "")
	gonbui.DisplayHTML(last)
	gonbui.Sync()
	tr.event("synced")
}

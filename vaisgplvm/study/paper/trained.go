package paper

import "github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

// Observer sees a table's run (Options.Observer): a progress display, a live view, the saving of
// every training's checkpoint (reproduce --checkpoints). Trainings run Trainings.Jobs at a time, so
// its methods must be safe for concurrent use.
type Observer interface {
	// Plan is told, before the trainings start, how many will report their steps and how many
	// run at a time (after the backend has lowered Jobs: a CUDA GPU trains one at a time).
	Plan(trainings, jobs int)
	// Training returns the observer of the steps of the training named name ("oilflow vais seed
	// 1"), called on the training's goroutine (nil: its steps are not observed).
	Training(name string) func(train.Event)
	// Trained is called once for every training of Tables 1-3 that this run trains (not those
	// read back from Options.Store, nor those that diverged), after its last evaluation and
	// before it is stored, on the training's goroutine. Its error stops the table.
	Trained(Trained) error
}

// Trained is one training of Tables 1-3 that a run has just finished, as Observer.Trained
// receives it: enough to save its checkpoint with the data it trained on recorded.
type Trained struct {
	Table           int
	Dataset, Method string
	Seed            uint64
	// Key names the training's whole identity in Options.Store (hex sha256 of its table, data,
	// method, seed, configuration and snapshots).
	Key string
	// HiddenPixels reports that the training's data is Dataset with Table 2's pixels hidden,
	// drawn with Seed (protocol.HidePixels); Pixels is the image scale ("unit" or "raw") and
	// Standardize whether the tabular columns were standardised. With Table1Options.Data the data is
	// the caller's, not Dataset.
	HiddenPixels bool
	Pixels       string
	Standardize  bool
	// Trainer is the finished training, at its last iteration (read it, do not train it further).
	Trainer *train.Trainer
}

// ObserverFuncs is an Observer made of functions, any of them nil (then that part is not
// observed).
type ObserverFuncs struct {
	PlanFunc     func(trainings, jobs int)
	TrainingFunc func(name string) func(train.Event)
	TrainedFunc  func(Trained) error
}

// Plan calls PlanFunc, when set.
func (f ObserverFuncs) Plan(trainings, jobs int) {
	if f.PlanFunc != nil {
		f.PlanFunc(trainings, jobs)
	}
}

// Training returns TrainingFunc's observer, nil when it is not set.
func (f ObserverFuncs) Training(name string) func(train.Event) {
	if f.TrainingFunc == nil {
		return nil
	}
	return f.TrainingFunc(name)
}

// Trained calls TrainedFunc, when set.
func (f ObserverFuncs) Trained(t Trained) error {
	if f.TrainedFunc == nil {
		return nil
	}
	return f.TrainedFunc(t)
}

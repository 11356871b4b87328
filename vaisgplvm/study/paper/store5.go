package paper

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// stored5 is one finished fit of Table 5 as Trainings.Store keeps it (JSON): its run's scores, the
// subset's sizes and its times, so that a Table 5 run stopped part way continues with the fits it
// has not finished.
type stored5 struct {
	Format int     `json:"format"`
	Key    string  `json:"key"` // job5Key: the fit's whole identity, hashed
	Run    Run5    `json:"run"`
	N      int     `json:"n"`    // points in the seed's subset
	Test   int     `json:"test"` // held-out points
	Secs   float64 `json:"seconds_per_iteration"`
	Wall   float64 `json:"wall_seconds"` // the fit, its held-out latents and its scores
	// Diverged is set for a fit that diverged (Run then holds only its seed).
	Diverged *DivergedRun `json:"diverged,omitempty"`
	// Backend names the backend that fitted it (backend.Label); "" in files written
	// before it was recorded.
	Backend string `json:"backend,omitempty"`
}

// job5Key returns the hex sha256 of everything that decides a Table 5 fit's results: the dataset,
// its numbers and mask, its labels and names (fp), the subset size, the method, the seed, the
// configuration, the iterations of the fit and of the held-out latents, the exact-conditional
// columns, the standardisation, the rules and caps of a fit to convergence and the store's format.
// Code changes are not in it (storeFormat is).
func job5Key(j *job5, fp fingerprint, subset int, o opts) (string, error) {
	cfg, err := model.MarshalConfig(j.cfg)
	if err != nil {
		return "", err
	}
	id := map[string]any{"format": identityFormat, "table": 5, "dataset": j.dataset, "data": fp.content,
		"subset": subset, "method": j.method, "seed": j.seed, "config": json.RawMessage(cfg), "iters": o.Iters,
		"recon_iters": o.ReconIters, "exact": o.Exact, "exact_fit_rows": o.ExactFitRows,
		"standardize": o.Standardize, "config_version": model.ConfigVersion}
	if o.Converge != nil { // absent otherwise: the keys of fits for a number of iterations stay as before
		id["converge"] = convergeSetting(*o.Converge, o.ConvergeAdam)
	}
	key, err := hashID(id)
	if err != nil {
		return "", err
	}
	return storeKey(key, fp.annotation)
}

// store5Path is the file of a Table 5 fit in the store directory: readable names, then the key.
func store5Path(dir string, j *job5) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d-%s.json", j.dataset, j.method, j.seed, j.key[:16]))
}

// loadJob5 reads the stored fit of j (by j.key) from dir into j. It reports false when there is
// none; errors are loadJob's (one line naming the file; an *unusableError stops the run). It never
// writes to dir.
func loadJob5(dir string, j *job5) (bool, error) {
	path := store5Path(dir, j)
	payload, err := readSealed(path, sealJob5)
	if payload == nil {
		return false, err
	}
	var s stored5
	if err := json.Unmarshal(payload, &s); err != nil {
		return false, fmt.Errorf("%s: not a stored fit (%v)", path, err)
	}
	if s.Format != storeFormat || s.Key != j.key {
		return false, fmt.Errorf("%s: format %d, key %.16s: not this fit's (format %d, key %.16s)", path, s.Format, s.Key, storeFormat, j.key)
	}
	j.run, j.n, j.test, j.secs, j.wall, j.stored, j.diverged, j.backend = s.Run, s.N, s.Test, s.Secs, s.Wall, true, s.Diverged, s.Backend
	return true, nil
}

// saveJob5 writes the finished fit j into dir (created when missing), atomically and sealed.
func saveJob5(dir string, j *job5) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf, err := json.MarshalIndent(stored5{Format: storeFormat, Key: j.key, Run: j.run, N: j.n, Test: j.test, Secs: j.secs, Wall: j.wall,
		Diverged: j.diverged, Backend: j.backend}, "", " ")
	if err != nil {
		return err
	}
	if err := rundir.WriteAtomic(store5Path(dir, j), rundir.Seal(sealJob5, append(buf, '\n'))); err != nil {
		return fmt.Errorf("storing %s %s seed %d: %w", j.dataset, j.method, j.seed, err)
	}
	return nil
}

package paper

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// storeFormat is the version of a stored training's file and of its key (storeKey): a file of
// another version is not read back. Raise it when a stored value changes meaning (an evaluation
// computed differently). 2: files sealed with a checksum (rundir.Seal), keys over labels and names.
const storeFormat = 2

// identityFormat is the layout of a training's identity hash (jobKey's and job5Key's map), kept at
// 1 so that format 2's keys extend format 1's (upgradeStore).
const identityFormat = 1

// Kinds of the seal lines (rundir.Seal) of a stored training of Tables 1-3 and of Table 5.
const (
	sealJob  = "stored-training"
	sealJob5 = "stored-fit"
)

// ErrNotStored: with Trainings.StoreOnly, a training the table needs is not in Trainings.Store.
var ErrNotStored = errors.New("not in the store")

// checkStoreOnly is the error (ErrNotStored) of a StoreOnly run whose Store lacks some of its n
// trainings, job(i) giving the i-th's name and whether it was read back; nil when Store holds them
// all or the run is not StoreOnly.
func checkStoreOnly(o opts, n int, job func(i int) (name string, stored bool)) error {
	if !o.StoreOnly {
		return nil
	}
	missing, first := 0, ""
	for i := range n {
		if name, stored := job(i); !stored {
			if missing == 0 {
				first = name
			}
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d trainings are %w %s (the first: %s): the run filling it has not finished them; ask for fewer seeds (--runs) or train them without --from",
		missing, n, ErrNotStored, o.Store, first)
}

// checkStoreOnlyOptions refuses a StoreOnly run without a Store, or with Fresh.
func checkStoreOnlyOptions(o opts) error {
	if o.StoreOnly && (o.Store == "" || o.Fresh) {
		return fmt.Errorf("paper: StoreOnly reads a Store and trains nothing: it needs Store, and excludes Fresh")
	}
	return nil
}

// storedJob is one finished training of Tables 1-3 as Trainings.Store keeps it: everything its rows,
// claims and (seed 1) figures need, so that a table run stopped part way continues with the
// trainings it has not finished, and the rows it builds are those of one uninterrupted run.
type storedJob struct {
	Format     int
	Key        string // jobKey: the training's whole identity, hashed
	Evals      []*eval.Evaluation
	Weights    []*eval.WeightStats
	Breakdowns []*eval.ESSBreakdown
	Secs       float64   // seconds per iteration
	Wall       float64   // wall-clock seconds of the training and its evaluations
	Curve      []float64 // -ELBO per point per iteration (train.Trainer.Curve)
	Params     *train.Params
	// Recon is the last snapshot's reconstruction [N, D] of seed 1, for the figures: only the rows
	// of the damaged images the image grid shows (figureRows); the others nil, so a store of the
	// image tables stays small enough to keep in the repository.
	Recon [][]float64
	// Diverged is set for a training that diverged (its Evals are the snapshots before it); nil in
	// files written before trainings could diverge without stopping the table.
	Diverged *DivergedRun
	// Backend names the backend that trained it (backend.Label); "" in files written
	// before it was recorded.
	Backend string
}

// figureRows are the rows of a reconstruction the figures show: the first 8 damaged images
// (WriteFigures' image grid); none for Table 1.
func figureRows(damaged []int) []int { return damaged[:min(8, len(damaged))] }

// slimRecon returns recon [N, D] with every row but rows nil.
func slimRecon(recon [][]float64, rows []int) [][]float64 {
	if recon == nil {
		return nil
	}
	out := make([][]float64, len(recon))
	for _, r := range rows {
		out[r] = recon[r]
	}
	return out
}

// jobKey returns the hex sha256 of everything that decides a training's results: the table, the
// dataset, its numbers and mask (fp.content, data.ContentSHA256), its labels and names
// (fp.annotation), the method, the seed, the configuration, the snapshots, the pixel scale, the
// standardisation and the store's format. Code changes are not in it (storeFormat is).
func jobKey(table int, j *job, fp fingerprint, snaps []int, o opts) (string, error) {
	cfg, err := model.MarshalConfig(j.cfg)
	if err != nil {
		return "", err
	}
	id, err := hashID(map[string]any{"format": identityFormat, "table": table, "dataset": j.dataset, "data": fp.content,
		"method": j.method, "seed": j.seed, "config": json.RawMessage(cfg), "snapshots": snaps,
		"pixels": pixelsName(o.Pixels), "standardize": o.Standardize, "config_version": model.ConfigVersion})
	if err != nil {
		return "", err
	}
	return storeKey(id, fp.annotation)
}

// fingerprint is what a store key records of a dataset: data.ContentSHA256 of its numbers and
// mask, data.AnnotationSHA256 of its labels and names.
type fingerprint struct{ content, annotation string }

// fingerprintOf returns ds's fingerprint.
func fingerprintOf(ds *data.Dataset) fingerprint {
	return fingerprint{content: data.ContentSHA256(ds.X, ds.Mask), annotation: data.AnnotationSHA256(ds)}
}

// storeKey returns the key a training with identity id (the hash of its table, data, method, seed
// and configuration) is stored under: id with the data's annotation fingerprint and storeFormat.
func storeKey(id, annotation string) (string, error) {
	return hashID(map[string]any{"identity": id, "annotation": annotation, "store_format": storeFormat})
}

// hashID returns the hex sha256 of id's JSON: a store key.
func hashID(id map[string]any) (string, error) {
	buf, err := json.Marshal(id)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}

// storePath is the file of a training in the store directory: readable names, then the key.
func storePath(dir string, j *job, key string) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d-%s.gob", j.dataset, j.method, j.seed, key[:16]))
}

// loadJob reads the stored training of j with key from dir into j (its evaluations, weights, time
// and curve; with figures, its artefacts, given mask and damaged). It reports false when there is
// none. A file that is damaged, unsealed (an older layout), of another key or format, or without
// the figures' values is an error naming it in one line (the caller trains again, or refuses);
// something at the file's name that is not a regular file is an *unusableError (the run stops
// before training: it could not store the training either). It never writes to dir.
func loadJob(dir string, j *job, key string, figures bool, mask [][]float64, damaged []int) (bool, error) {
	path := storePath(dir, j, key)
	s, err := readStored(path)
	if s == nil {
		return false, err
	}
	if s.Format != storeFormat || s.Key != key {
		return false, fmt.Errorf("%s: format %d, key %.16s: not this training's (format %d, key %.16s)", path, s.Format, s.Key, storeFormat, key)
	}
	if figures && j.seed == 1 && s.Diverged == nil && (s.Params == nil || s.Recon == nil) {
		return false, fmt.Errorf("%s: stored without the figures' values", path)
	}
	if countRows(s.Recon) > len(figureRows(damaged)) {
		s.Recon = slimRecon(s.Recon, figureRows(damaged)) // written by a version that kept every row
	}
	j.evals, j.weights, j.breakdowns, j.secs, j.wall, j.curve = s.Evals, s.Weights, s.Breakdowns, s.Secs, s.Wall, s.Curve
	j.stored, j.diverged, j.backend = true, s.Diverged, s.Backend
	if figures && j.seed == 1 && j.diverged == nil {
		j.art = &artefacts{curve: s.Curve, params: s.Params, recon: s.Recon, mask: mask, damaged: damaged}
		if len(s.Weights) > 0 {
			j.art.ess = s.Weights[len(s.Weights)-1].PerPointESS
			j.art.essDefs = s.Breakdowns[len(s.Breakdowns)-1]
		}
	}
	return true, nil
}

// readStored reads and decodes the stored training at path; nil and no error when there is none.
// Errors are readSealed's, or a payload that does not decode.
func readStored(path string) (*storedJob, error) {
	payload, err := readSealed(path, sealJob)
	if payload == nil {
		return nil, err
	}
	var s storedJob
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: not a stored training (%v)", path, err)
	}
	return &s, nil
}

// unusableError: something stands at a stored training's name, or at the store's, that is not
// what the store writes there (a directory, a symbolic link, a file where the directory should
// be). A run stops on it before training anything.
type unusableError struct{ msg string }

func (e *unusableError) Error() string { return e.msg }

// readSealed reads the sealed file of kind at path and returns its payload; nil and no error when
// there is none. Errors name path in one line: an *unusableError when path is not a regular file,
// else the file is damaged, unsealed or unreadable.
func readSealed(path, kind string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &unusableError{fmt.Sprintf("%s: %v", path, err)}
	}
	if !fi.Mode().IsRegular() {
		return nil, &unusableError{fmt.Sprintf("%s is not a stored training (a %s): remove it, or use another directory", path, fileKind(fi))}
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	payload, err := rundir.Unseal(kind, buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return payload, nil
}

// fileKind names what fi is, for messages: "directory", "symbolic link", "file" or "special file".
func fileKind(fi os.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}

// checkStoreDir checks, before any training, that the store directory dir is a directory or can be
// made one: an *unusableError when a file, a dangling symbolic link or anything but a directory
// stands there (or above it).
func checkStoreDir(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil && fi.IsDir() {
		return nil
	}
	if err == nil {
		return &unusableError{fmt.Sprintf("%s is a %s, not the directory of stored trainings: move it, or use another directory", dir, fileKind(fi))}
	}
	if lfi, lerr := os.Lstat(dir); lerr == nil {
		return &unusableError{fmt.Sprintf("%s is a %s that leads nowhere, not the directory of stored trainings: remove it, or use another directory", dir, fileKind(lfi))}
	}
	for up := filepath.Dir(dir); ; up = filepath.Dir(up) {
		if fi, err := os.Stat(up); err == nil {
			if !fi.IsDir() {
				return &unusableError{fmt.Sprintf("%s is under %s, a %s: use another directory", dir, up, fileKind(fi))}
			}
			return nil
		}
		if up == filepath.Dir(up) {
			return nil
		}
	}
}

// readBack runs load, one training's read from the store, and says what becomes of its error:
// an *unusableError ends the run, as does any error of a StoreOnly run (it reads only trainings
// stored intact); otherwise the error is logged in one line and the training is done again (again:
// "training it again"). It reports whether the training was read back.
func (o opts) readBack(again string, load func() (bool, error)) (bool, error) {
	ok, err := load()
	if err == nil {
		return ok, nil
	}
	var u *unusableError
	if errors.As(err, &u) {
		return false, err
	}
	if o.StoreOnly {
		return false, fmt.Errorf("%v: a table made --from a store uses only trainings stored intact; run the command that filled the store again (it retrains that one)", err)
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "%v; %s\n", err, again)
	}
	return false, nil
}

// saveJob writes the finished training j with key into dir (created when missing), atomically.
// The evaluations are stored without their latents and reconstructions [N, Q], [N, D], but for
// seed 1 the parameters and the rows of the last reconstruction that the figures need (damaged:
// the images with hidden pixels).
func saveJob(dir string, j *job, key string, params *train.Params, damaged []int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s := storedJob{Format: storeFormat, Key: key, Weights: j.weights, Breakdowns: j.breakdowns,
		Secs: j.secs, Wall: j.wall, Curve: j.curve, Diverged: j.diverged, Backend: j.backend}
	for _, ev := range j.evals {
		e := *ev
		e.Latent, e.Recon = nil, nil
		if e.Predictive != nil { // its scores only: the mixture means and particles are N x D and S x N x Q
			p := *e.Predictive
			p.Recon, p.Particles, p.Weights = nil, nil, nil
			e.Predictive = &p
		}
		s.Evals = append(s.Evals, &e)
	}
	if j.seed == 1 && params != nil && len(j.evals) > 0 {
		s.Params, s.Recon = params, slimRecon(j.evals[len(j.evals)-1].Recon, figureRows(damaged))
	}
	if err := writeStored(storePath(dir, j, key), &s); err != nil {
		return fmt.Errorf("storing %s %s seed %d: %w", j.dataset, j.method, j.seed, err)
	}
	return nil
}

// trainedOn names the backends that trained jobs (backend(j): the name, "" when the store did not
// record it) for a table's settings: the one name when all agree, else each with its count, the
// most used first ("xla:cuda (8), Go Backend (2)"), so that a table assembled from trainings made
// on several machines says so.
func trainedOn[T any](jobs []T, backend func(*T) string) string {
	counts := map[string]int{}
	for i := range jobs {
		counts[cmp.Or(backend(&jobs[i]), "not recorded")]++
	}
	names := slices.Collect(maps.Keys(counts))
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	if len(names) == 1 {
		return names[0]
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s (%d)", n, counts[n])
	}
	return strings.Join(parts, ", ")
}

// writeStored writes s to path atomically, sealed (rundir.Seal).
func writeStored(path string, s *storedJob) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return err
	}
	return rundir.WriteAtomic(path, rundir.Seal(sealJob, buf.Bytes()))
}

// countRows counts the non-nil rows of m.
func countRows(m [][]float64) int {
	n := 0
	for _, r := range m {
		if r != nil {
			n++
		}
	}
	return n
}

package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	backends "github.com/gomlx/compute"
	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Metrics is what Train writes to DIR/metrics.json.
type Metrics struct {
	Dataset        string       `json:"dataset"`
	DataFile       string       `json:"data_file,omitempty"` // your own file (absolute path)
	MissingEntries int          `json:"missing_entries"`     // entries left out of the likelihood
	Config         model.Config `json:"config"`
	Backend        string       `json:"backend"`
	Iterations     int          `json:"iterations"` // Adam iterations (0 for a --converge fit)
	// Convergence is the L-BFGS fit of the collapsed bound that TrainOptions.Converge asked for:
	// whether it converged by its rule, the rule, the final change, what stopped it, its
	// iterations and seconds (nil for a fixed number of Adam iterations).
	Convergence *converge.Result `json:"convergence,omitempty"`
	// ConvergenceStart is the converged mean-field start (L-BFGS on the collapsed bound) of a
	// Converge run of another bound, which Convergence then continued with Adam on its own bound.
	ConvergenceStart *converge.Result `json:"convergence_mf_start,omitempty"`
	// ConvergedFrom is TrainOptions.ConvergeFrom: the checkpoint the converging fit started from.
	ConvergedFrom  string           `json:"converged_from,omitempty"`
	SecondsPerIter float64          `json:"seconds_per_iteration"`
	ClippedSteps   int              `json:"clipped_steps,omitempty"` // steps whose gradient ClipGrad clipped
	Eval           *eval.Evaluation `json:"metrics"`
	Standardized   bool             `json:"standardized"`
	// MSEDataUnits is the MSE of reconstruction.csv's values over the observed entries in the
	// data file's units, as infer.json's mse_observed; only with Standardized, and only when it is
	// finite (values near the float64 limit overflow it).
	MSEDataUnits *float64 `json:"mse_data_units,omitempty"`
	// Reconstruction says what reconstruction.csv holds: "mixture" (the posterior predictive
	// mixture's means, Eval.Predictive) or "single latent" (TrainOptions.SingleLatent: Eval's).
	Reconstruction string       `json:"reconstruction"`
	Chain          *ChainReport `json:"chain,omitempty"`
	// Hidden scores the reconstruction of the pixels hidden by Source.HiddenSeed (frey, mnist): MSE
	// per hidden pixel in squared pixel units of Source.Pixels, NELL in nats per damaged image.
	Hidden *eval.MissingScores `json:"hidden_pixels,omitempty"`
	// HiddenBaselines score simple imputations of the same hidden pixels (column means, k-NN,
	// validated k-NN, PPCA with the model's Q), to compare with Hidden.
	HiddenBaselines *ImputationBaselines `json:"hidden_pixels_baselines,omitempty"`
	// HiddenExact scores the same hidden pixels with the exact GP conditional on the complete rows
	// at their latents (eval.ScoreMissingExact): every training image enters the
	// prediction instead of the M inducing variables; at the trained hyperparameters and refitted
	// with a validated predictive noise (HiddenExactRefit, infer.ValidatedExact).
	HiddenExact      *eval.MissingScores `json:"hidden_pixels_exact,omitempty"`
	HiddenExactRefit *eval.MissingScores `json:"hidden_pixels_exact_refit,omitempty"`
	// Warnings says what looks wrong with a run that ended normally (data of an extreme scale, a
	// bound that got worse, a chain that never accepts); empty for a healthy run.
	Warnings []string `json:"warnings,omitempty"`
	// Source is the data as the checkpoint records it (dataset or file with its sha256, label
	// column, scaling, pixel scale, hidden-pixel seed); DataSHA256 the content the model trained on
	// (data.ContentSHA256 of the data and its mask in the model's units).
	Source     Source `json:"source"`
	DataSHA256 string `json:"data_content_sha256"`
	// Provenance is TrainOptions.Provenance: how the run was made (a command's line, the commit,
	// the machine: Provenance).
	Provenance map[string]any `json:"provenance,omitempty"`
}

// ChainReport describes a trained annealed model's chain: the schedule beta_k, the step sizes
// eta_k (as trained or adapted) and each transition's mean Metropolis-Hastings acceptance rate
// measured on up to 200 training points with 4 chains each.
type ChainReport struct {
	Betas  []float64 `json:"betas"`
	Etas   []float64 `json:"etas"`
	Accept []float64 `json:"accept_rates"`
	// PointEtaFactors summarises the per-point factors s_n on eta_k over all N points
	// (model.Config.PointEta).
	PointEtaFactors *Quantiles `json:"point_eta_factors,omitempty"`
}

// Quantiles summarises a sample: its minimum, 10%, 50% and 90% quantiles and maximum.
type Quantiles struct {
	Min    float64 `json:"min"`
	P10    float64 `json:"p10"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

// quantiles returns the Quantiles of x (nil when x is empty).
func quantiles(x []float64) *Quantiles {
	if len(x) == 0 {
		return nil
	}
	s := slices.Clone(x)
	slices.Sort(s)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, s, nil) }
	return &Quantiles{Min: s[0], P10: q(0.1), Median: q(0.5), P90: q(0.9), Max: s[len(s)-1]}
}

// Chain returns the chain report of an annealed trainer's model (nil for MF and IWVI, or K = 0),
// its acceptance rates measured with seed.
func Chain(tr *train.Trainer, seed uint64) (*ChainReport, error) {
	if !tr.Model.Method.Annealed() || tr.Model.Cfg.K == 0 {
		return nil, nil
	}
	p, err := tr.Params()
	if err != nil {
		return nil, err
	}
	idx := make([]int, min(tr.Model.N, 200))
	for i := range idx {
		idx[i] = i
	}
	w, err := eval.Weights(tr, idx, 4, seed)
	if err != nil {
		return nil, err
	}
	return &ChainReport{Betas: p.Betas, Etas: p.Etas, Accept: w.Accept, PointEtaFactors: quantiles(p.PointEtaFactors)}, nil
}

// NewTrainer returns a trainer for cfg on the loaded data td (its mask, when it has missing
// entries) on backend b, tagged with src (Source.Tag) so that its checkpoints record their data.
func NewTrainer(cfg model.Config, td *Data, src Source, b backends.Backend) (*train.Trainer, error) {
	if td == nil || td.Dataset == nil {
		return nil, fmt.Errorf("NewTrainer: nil data: load it with Source.Load")
	}
	m, err := model.New(cfg, td.X, td.Mask)
	if err != nil {
		return nil, err
	}
	tr, err := train.New(m, b)
	if err != nil {
		return nil, err
	}
	tr.DataTag = src.Tag()
	return tr, nil
}

// TrainOutputs names the files Train writes into its directory (patterns for the figures), the
// partial ones (TrainPartial) included.
var TrainOutputs = []string{"checkpoint.gob", "curve.csv", "metrics.json", "latents.csv", "reconstruction.csv",
	"curve.png", "latent_*.png", "ard_*.png", PartialCheckpoint, PartialCurve}

// PartialCheckpoint and PartialCurve are what a training that has not finished leaves: its last
// good checkpoint (written every CheckpointEvery iterations, and when it is interrupted) and its
// curve. They sit beside a predecessor's finished outputs without replacing any of them, --resume
// continues from the checkpoint, and the run's own finish removes both.
const (
	PartialCheckpoint = "checkpoint.partial.gob"
	PartialCurve      = "curve.partial.csv"
)

// TrainPartial lists the partial outputs, for rundir.Options.Partial.
var TrainPartial = []string{PartialCheckpoint, PartialCurve}

// OpenTrainDir opens path for a training with rundir.Open: TrainOutputs as the run's outputs, the
// partial ones marked (TrainPartial), the kind "train"; opt gives the rest (Overwrite, Resume,
// Inputs, Flag).
func OpenTrainDir(path string, opt rundir.Options) (*rundir.Dir, error) {
	opt.Run, opt.Partial = "train", TrainPartial
	return rundir.Open(path, TrainOutputs, opt)
}

// ResumeFile resolves train's --resume argument: a checkpoint file as it is, or a run directory to
// its unfinished run's PartialCheckpoint when there is one, else its checkpoint.gob. The error
// names the path and what is missing.
func ResumeFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", option.Failf([]string{"Resume"}, "Resume %s: %w", path, err)
	}
	if !st.IsDir() {
		return path, nil
	}
	for _, name := range []string{PartialCheckpoint, "checkpoint.gob"} {
		if _, err := os.Stat(filepath.Join(path, name)); err == nil {
			return filepath.Join(path, name), nil
		}
	}
	return "", option.Failf([]string{"Resume"}, "Resume %s: the directory holds neither %s nor checkpoint.gob", path, PartialCheckpoint)
}

// TrainOptions says how long Train trains and what it reports on the way.
type TrainOptions struct {
	Iters           int    // iterations in all (a resumed run continues up to it), >= 1
	CheckpointEvery int    // write checkpoint.gob every this many iterations, >= 1
	Resume          string // a checkpoint to resume from (none: "")
	Seed            uint64 // of the chain report's acceptance rates
	Figures         bool   // write curve.png and the latent and ARD figures
	// SingleLatent writes reconstruction.csv from the prediction at the single reconstruction
	// latent (the paper's) instead of the posterior predictive mixture's means (eval.Predictive).
	SingleLatent bool
	// Exact also scores the hidden pixels under the exact GP conditional on the complete images,
	// at the trained hyperparameters and refitted with a validated predictive noise (metrics.json
	// hidden_pixels_exact and hidden_pixels_exact_refit; eval.Exact, infer.ValidatedExact): tens
	// of seconds to minutes.
	Exact bool
	// ValidatePPCA adds PPCA with its number of components validated to the hidden pixels'
	// baselines (metrics.json hidden_pixels_baselines.validated_ppca; ImputeBaselines): two to
	// three minutes on Frey or MNIST on 2 cores.
	ValidatePPCA bool
	// Converge, when not nil, fits the model to the optimum of the collapsed mean-field bound by
	// L-BFGS (converge.Fit, full batch) instead of Iters Adam iterations; for a bound other than
	// mf, Adam then continues on the model's own bound until ConvergeAdam's rule holds
	// (converge.Continue). A model the collapsed bound cannot hold (mini-batches, missing
	// entries, a kernel without psi statistics) is fitted by Adam alone from its start, at the
	// model's LR, until the rule holds on means over whole epochs (converge.EpochWindow), capped
	// by Converge.MaxSeconds. Metrics.Convergence says whether the last stage converged.
	Converge     *converge.Options
	ConvergeAdam converge.AdamOptions
	// ConvergeFrom, with Converge and a bound other than mf, is the checkpoint of a converged fit
	// on the same data (train --converge --method mf) to start from instead of fitting the
	// mean-field start again (converge.StartFrom); recorded in Metrics.ConvergedFrom.
	ConvergeFrom string
	// Observe, when not nil, sees every training step (train.Trainer.Run).
	Observe func(train.Event)
	// Warn, when not nil, gets each warning when it is found: the data's before training, the
	// run's after it. Metrics.Warnings holds them all.
	Warn func(string)
	// Finishing, when not nil, is called when training is over and the final evaluation begins.
	Finishing func()
	// Provenance, when not nil, is recorded in metrics.json (Provenance(args) gives a command's).
	Provenance map[string]any
}

// Train trains tr (NewTrainer) on td from src and writes its outputs (TrainOutputs) into dir,
// which it commits (rundir.Dir.Commit) when the run finishes: checkpoint.gob, curve.csv,
// latents.csv [N, Q], reconstruction.csv [N, D] in the data's units (with missing entries, their
// imputed values), the figures and metrics.json. On the way, every CheckpointEvery iterations,
// PartialCheckpoint is put in place (dir must be opened with Options.Partial = TrainPartial).
// Evaluation follows the dataset's protocol (protocol.EvaluationOf; 5 noise draws otherwise).
//
// A run that does not finish never removes or replaces a finished run's file in dir: stopped by
// ctx's end (after the step in progress), it writes PartialCheckpoint and PartialCurve and returns an error wrapping
// train.ErrInterrupted (the checkpoint resumes exactly); failed (diverged, disk full), it leaves
// PartialCurve and its last good PartialCheckpoint, if any, and its error says where that is.
// Resume with Iters below the checkpoint's iterations is an *option.Error.
func Train(ctx context.Context, dir *rundir.Dir, tr *train.Trainer, td *Data, src Source, opt TrainOptions) (*Metrics, error) {
	if err := needAll(dir, tr, td); err != nil {
		return nil, err
	}
	warn := func(ws []string) []string {
		for _, w := range ws {
			if opt.Warn != nil {
				opt.Warn(w)
			}
		}
		return ws
	}
	if opt.Converge != nil && opt.ConvergeFrom != "" && converge.Stages(tr) == "Adam" { // mini-batches, missing entries, no psi statistics
		return nil, option.Of("ConvergeFrom", "ConvergeFrom starts another bound from a full-batch fit of the collapsed bound, which this model cannot have (%v)", cmp.Or(converge.Supported(tr.Model), errors.New("mini-batches")))
	}
	dataWarnings := warn(DataWarnings(td.X, src.Standardize))
	if opt.Resume != "" {
		if err := tr.Load(opt.Resume); err != nil {
			return nil, MismatchError(err)
		}
		if opt.Iters < tr.Iter {
			return nil, option.Of("Iters", "Iters %d is below the %d iterations %s has done: give Iters %d or more to continue it (Iters %d only evaluates it)",
				opt.Iters, tr.Iter, opt.Resume, tr.Iter+1, tr.Iter)
		}
	}
	ckpt := dir.Final(PartialCheckpoint)
	saved := "" // the last good checkpoint of this run, when there is one
	if opt.Resume != "" {
		saved = opt.Resume
	}
	save := func(t *train.Trainer) error {
		if err := t.Save(dir.File(PartialCheckpoint)); err != nil {
			return err
		}
		if _, err := dir.Promote(PartialCheckpoint); err != nil {
			return err
		}
		saved = ckpt
		return nil
	}
	var conv, convStart *converge.Result
	var runErr error
	switch {
	case opt.Converge != nil && opt.ConvergeFrom == "":
		conv, convStart, runErr = converge.Train(ctx, tr, *opt.Converge, opt.ConvergeAdam)
		runErr = interrupted(conv, runErr)
	case opt.Converge != nil:
		if runErr = startFrom(tr, td, opt.ConvergeFrom); runErr == nil && tr.Model.Cfg.Method != "mf" { // fitted by the run that wrote the checkpoint
			conv, runErr = converge.Continue(ctx, tr, opt.ConvergeAdam.Following(*opt.Converge, 0)) // as converge.Train's second stage
			runErr = interrupted(conv, runErr)
		}
	default:
		runErr = tr.Run(ctx, opt.Iters, train.RunOptions{Observe: opt.Observe, Every: opt.CheckpointEvery, Hook: save})
	}
	curve := tr.Curve
	if conv != nil {
		curve = conv.Curve
	}
	if errors.Is(runErr, train.ErrInterrupted) {
		// The last step completed: its parameters resume exactly.
		if err := save(tr); err != nil {
			return nil, fmt.Errorf("%w; writing the checkpoint failed: %v", runErr, err)
		}
		if err := writeCurveAs(dir, PartialCurve, curve); err != nil {
			return nil, err
		}
		if err := dir.Leave(PartialCurve); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: wrote %s and %s", runErr, ckpt, PartialCurve)
	}
	var met *Metrics
	if runErr == nil {
		if opt.Finishing != nil {
			opt.Finishing()
		}
		saveFinal := func(t *train.Trainer) error { return t.Save(dir.File("checkpoint.gob")) }
		met, runErr = evaluateAndWrite(ctx, dir, tr, td, src, opt, curve, saveFinal)
		if met != nil {
			met.Convergence, met.ConvergenceStart, met.ConvergedFrom = conv, convStart, opt.ConvergeFrom
		}
	}
	if runErr == nil {
		met.Warnings = append(slices.Clip(dataWarnings), warn(met.Warnings)...)
		met.Provenance = opt.Provenance
		if runErr = writeMetrics(dir, met); runErr == nil {
			return met, dir.Commit()
		}
	}
	return nil, keepFailed(dir, tr, runErr, saved, ckpt)
}

// startFrom loads the checkpoint path (a fit of td by any bound, with the model settings it
// records) and copies its shared parameters into tr (converge.StartFrom).
func startFrom(tr *train.Trainer, td *Data, path string) error {
	cfg, _, err := train.ReadCheckpointInfo(path)
	if err != nil {
		return err
	}
	m, err := model.New(cfg, td.X, td.Mask)
	if err != nil {
		return fmt.Errorf("ConvergeFrom %s: %w", path, err)
	}
	src, err := train.New(m, tr.Backend)
	if err != nil {
		return fmt.Errorf("ConvergeFrom %s: %w", path, err)
	}
	src.DataTag = tr.DataTag
	if err := src.Load(path); err != nil {
		return fmt.Errorf("ConvergeFrom: %w", err)
	}
	return converge.StartFrom(tr, src)
}

// interrupted returns err, or, when the converging fit res was stopped by the run's context, an
// error wrapping train.ErrInterrupted (converge.Result.Interrupted).
func interrupted(res *converge.Result, err error) error {
	if err == nil {
		return res.Interrupted("-ELBO")
	}
	return err
}

// keepFailed leaves what a failed run may (rundir.Dir.Leave: its curve as PartialCurve and its
// last good checkpoint, a final checkpoint already staged becoming PartialCheckpoint) and returns
// runErr with where that checkpoint is. Nothing of a predecessor's finished run is touched.
func keepFailed(dir *rundir.Dir, tr *train.Trainer, runErr error, saved, ckpt string) error {
	if err := writeCurveAs(dir, PartialCurve, tr.Curve); err != nil {
		return fmt.Errorf("%w (and %s: %v)", runErr, PartialCurve, err)
	}
	leave := []string{PartialCurve}
	if _, err := os.Stat(dir.File("checkpoint.gob")); err == nil {
		// Training had finished and its checkpoint was written before a later step failed.
		if err := os.Rename(dir.File("checkpoint.gob"), dir.File(PartialCheckpoint)); err == nil {
			leave, saved = append(leave, PartialCheckpoint), ckpt
		}
	}
	if err := dir.Leave(leave...); err != nil {
		return fmt.Errorf("%w (and writing %s: %v)", runErr, strings.Join(leave, ", "), err)
	}
	if saved != "" {
		return fmt.Errorf("%w; the last good checkpoint of this run is %s (iteration %d or earlier); %s has the curve; any earlier run's outputs in %s are as they were",
			runErr, saved, tr.Iter, dir.Final(PartialCurve), dir.Path)
	}
	return fmt.Errorf("%w; no checkpoint was written (%s has the curve); any earlier run's outputs in %s are as they were", runErr, dir.Final(PartialCurve), dir.Path)
}

// evaluateAndWrite evaluates the trained model and, when every value is finite, writes its
// checkpoint (save), curve, latents, reconstruction and figures into dir. It returns the metrics
// with the run's own warnings (TrainWarnings).
func evaluateAndWrite(ctx context.Context, dir *rundir.Dir, tr *train.Trainer, td *Data, src Source, opt TrainOptions, curve []float64,
	save func(*train.Trainer) error) (*Metrics, error) {
	draws := protocol.EvaluationOf(src.Dataset, 5, tr) // as reproduce for the built-in datasets
	ev, err := eval.Evaluate(tr, draws, td.Labels)
	if err != nil {
		return nil, err
	}
	var hidden *eval.MissingScores
	var hiddenBase *ImputationBaselines
	var hiddenExact, hiddenRefit *eval.MissingScores
	var baseWarn []string
	if td.Truth != nil {
		if hidden, err = eval.ScoreMissing(tr, td.Truth, ev); err != nil {
			return nil, err
		}
		if opt.Exact { // scored only on request
			hiddenExact, hiddenRefit, err = infer.ScoreExact(ctx, tr, td.Truth, ev, infer.ExactValidation{Hide: protocol.HiddenShare, Seed: opt.Seed})
			if err != nil && hiddenExact == nil {
				baseWarn = append(baseWarn, fmt.Sprintf("hidden_pixels_exact and hidden_pixels_exact_refit not computed: %v", err))
			} else if err != nil {
				baseWarn = append(baseWarn, fmt.Sprintf("hidden_pixels_exact_refit not computed: %v", err))
			}
		}
		if hiddenBase, err = ImputeBaselines(td.Truth, td.X, td.Mask, tr.Model.Cfg.Q, src.HiddenSeed, opt.ValidatePPCA); err != nil {
			baseWarn = append(baseWarn, fmt.Sprintf("hidden_pixels_baselines not computed: %v", err))
		}
	}
	chain, err := Chain(tr, opt.Seed)
	if err != nil {
		return nil, err
	}
	if err := save(tr); err != nil {
		return nil, err
	}
	if err := WriteCurve(dir, curve); err != nil {
		return nil, err
	}
	recon := ev.Predictive.Recon
	if opt.SingleLatent {
		recon = ev.Recon
	}
	if err := writeTrainOutputs(dir, tr, td, ev, recon, curve, opt.Figures); err != nil {
		return nil, err
	}
	var mseData *float64
	if td.Std != nil {
		m, err := metrics.MSE(td.ToDataUnits(td.X), td.ToDataUnits(recon), td.Mask)
		if err != nil {
			return nil, err
		}
		if finite(m) { // data near the float64 limit overflows it in the file's units: left out
			mseData = &m
		}
	}
	return &Metrics{MSEDataUnits: mseData, Reconstruction: map[bool]string{false: "mixture", true: "single latent"}[opt.SingleLatent], Dataset: td.Name, DataFile: src.File, MissingEntries: td.Missing(), Config: tr.Model.Cfg,
		Backend: tr.Backend.Name(), Iterations: tr.Iter, SecondsPerIter: tr.SecondsPerIter(), ClippedSteps: tr.ClippedSteps(),
		Eval: ev, Standardized: src.Standardize, Chain: chain, Hidden: hidden, HiddenExact: hiddenExact, HiddenExactRefit: hiddenRefit, HiddenBaselines: hiddenBase, Warnings: append(TrainWarnings(curve, chain), baseWarn...),
		Source: src, DataSHA256: data.ContentSHA256(td.X, td.Mask)}, nil
}

// writeMetrics writes metrics.json.
func writeMetrics(dir *rundir.Dir, met *Metrics) error {
	buf, err := json.MarshalIndent(met, "", "  ")
	if err != nil {
		return fmt.Errorf("metrics.json: %w", err)
	}
	return dir.WriteFile("metrics.json", buf)
}

// writeTrainOutputs writes latents.csv (the reconstruction latents [N, Q], see eval.Evaluate,
// with the data's labels as a last column when it has them), curve.png from curve (-ELBO per point
// per iteration),
// reconstruction.csv (recon, the predictions [N, D], in the data's units: with missing entries,
// their imputed values) and, with figures, curve.png, latent_<data>_<method>.png and ard_<data>_<method>.png.
func writeTrainOutputs(dir *rundir.Dir, tr *train.Trainer, td *Data, ev *eval.Evaluation, recon [][]float64, curve []float64, figures bool) error {
	if err := WriteLatents(dir, "latents.csv", ev.Latent, td.Dataset); err != nil {
		return err
	}
	if err := WriteMatrix(dir, "reconstruction.csv", ColumnHeader(td.Dataset), td.ToDataUnits(recon)); err != nil {
		return err
	}
	if !figures {
		return nil
	}
	method := tr.Model.Cfg.Method
	if _, err := plots.SaveCurves(dir.File("curve.png"), td.Name, []plots.Series{{Name: method, Y: curve}}); err != nil {
		return err
	}
	params, err := tr.Params()
	if err != nil {
		return err
	}
	_, err = plots.LatentFigures(dir.Stage, td.Name, method, params.LatentMean, params.LatentSD, params.Lengthscales, td.Labels, td.LabelNames)
	return err
}

// needAll returns an error naming the first of a run's directory, trainer and data that is nil
// (or, for the trainer, cannot work: train.Trainer.Ready).
func needAll(dir *rundir.Dir, tr *train.Trainer, td *Data) error {
	switch {
	case dir == nil:
		return fmt.Errorf("nil output directory: open one with rundir.Open")
	case td == nil || td.Dataset == nil:
		return fmt.Errorf("nil data: load it with Source.Load")
	}
	return tr.Ready()
}

// SameFile reports whether paths a and b name the same file (by absolute path).
func SameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

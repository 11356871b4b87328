#!/usr/bin/env bash
# The converged fits of issue 73, resumable: for each dataset and seed, MF by `train --converge`
# (L-BFGS on the collapsed bound), then each other bound from MF's converged checkpoint
# (`--converge --converge-from`, Adam on its own bound to its plateau rule). Every run has its own
# directory $RUNS/DATASET-METHOD-seedS (checkpoints stay there, outside the repository); a run whose
# metrics.json exists is skipped, so the script continues where it stopped. Each finished run's
# metrics.json and curve.csv are copied to records/converged/DATASET-METHOD-seedS/, and the
# summary there (table.md, table.json: paper.ConvergedSummary) is written again.
#
#   BIN=/path/to/vaisgplvm DATASETS="oilflow wine" SEEDS="1 2" METHODS="iwvi vais" scripts/converged.sh
#
# CONT_FLAGS adds flags to the other bounds' runs and TAG to their folder names (e.g. CONT_FLAGS="--lr
# 0.001" TAG=-lr0.001: Adam's continuation then starts at 1e-4, a tenth of --lr); MF_FLAGS adds flags
# to the MF runs (e.g. MF_FLAGS="--max-seconds 1800": a cap, reported as not converged when hit).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-vaisgplvm}
RUNS=${RUNS:-out/converged}
CONT_FLAGS=${CONT_FLAGS:-}
MF_FLAGS=${MF_FLAGS:-}
TAG=${TAG:-}
DATASETS=${DATASETS:-oilflow wine}
SEEDS=${SEEDS:-1 2 3 4 5}
METHODS=${METHODS:-iwvi vais uha}
record=records/converged
mkdir -p "$RUNS" "$record"

run() { # dataset method seed tag [flags...]
  local ds=$1 method=$2 seed=$3 tag=$4; shift 4
  local dir="$RUNS/$ds-$method$tag-seed$seed"
  if [ ! -f "$dir/metrics.json" ]; then
    echo "converged.sh: $ds $method seed $seed" >&2
    "$BIN" train --dataset "$ds" --method "$method" --seed "$seed" --converge --no-figures --overwrite --out "$dir" "$@" >/dev/null
  fi
  mkdir -p "$record/$ds-$method$tag-seed$seed"
  cp "$dir/metrics.json" "$dir/curve.csv" "$record/$ds-$method$tag-seed$seed/"
  # The summary (table.md, table.json) follows the folders.
  VAISGPLVM_UPDATE_DOCS=1 go test ./vaisgplvm/study/paper -run TestConvergedSummary >/dev/null \
    || echo "converged.sh: the summary was not rewritten (go test failed): run it again by hand" >&2
}

for seed in $SEEDS; do
  for ds in $DATASETS; do
    # shellcheck disable=SC2086 # MF_FLAGS is a list of flags
    run "$ds" mf "$seed" "" $MF_FLAGS
    for method in $METHODS; do
      # shellcheck disable=SC2086 # CONT_FLAGS is a list of flags
      run "$ds" "$method" "$seed" "$TAG" --converge-from "$RUNS/$ds-mf-seed$seed/checkpoint.gob" $CONT_FLAGS
    done
  done
done

#!/usr/bin/env bash
# The paper's protocol of Tables 2 and 3 on a GPU (`reproduce --paper`), for a GPU machine with no
# Go toolchain. From the repository root on the build machine:
#
#   CGO_ENABLED=1 go build -tags xla -o .gpu/ ./vaisgplvm/cmd/vaisgplvm   # .gpu/ is git-ignored; the data is embedded
#
# then, with .gpu carried, on the GPU machine from the repository root (scripts/gpu-probe.sh first
# says whether the plugin starts and whether PIP_CUDA_LIBS=1 is needed):
#
#   RESULTS=$OUT/protocol scripts/gpu-protocol.sh
#
# Each table of TABLES runs as one `vaisgplvm reproduce --table N --paper` into RESULTS/tableN under
# `timeout`, with the seconds left of BUDGET: a table stopped there keeps every training it finished
# in RESULTS/tableN/jobs, and the same script run again with that RESULTS continues from them (carry
# the fetched tree back). It appends "table N: exit status, wall seconds, trainings stored" to
# RESULTS/summary.txt and packs RESULTS (without the figures) into RESULTS.tar.xz, one file to fetch.
#
# Environment: BIN (default .gpu/vaisgplvm), BACKEND (default xla:<JAX's CUDA PJRT plugin>,
# scripts/cuda-backend.sh), RESULTS (default out/gpu-protocol), TABLES (default "2 3"), RUNS (the
# paper's seeds to run, 1-10, default 10), DATASETS (Table 2's, default frey,mnist), METHODS
# (Table 2's, default mf,iwvi,vais,uha), JOBS (concurrent trainings, default 1: the command trains one
# at a time on a CUDA GPU anyway, docs/gpu.md), BUDGET (seconds for
# all the tables together, default 480), PIP_CUDA_LIBS (1: NVIDIA pip libraries on LD_LIBRARY_PATH).
set -euo pipefail
bin=${BIN:-.gpu/vaisgplvm}
results=${RESULTS:-out/gpu-protocol}
budget=${BUDGET:-480}
[ -x "$bin" ] || { echo "gpu-protocol: no command at $bin (build it with -tags xla, see the top of this script)" >&2; exit 2; }
BACKEND=${BACKEND:-$(scripts/cuda-backend.sh)}
if [ "${PIP_CUDA_LIBS:-0}" = 1 ]; then export LD_LIBRARY_PATH=$(scripts/cuda-backend.sh --libs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
mkdir -p "$results"
start=$(date +%s)
for t in ${TABLES:-2 3}; do
  left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt 30 ]; then echo "table $t: not started, $left s of the budget left" >> "$results/summary.txt"; continue; fi
  args=(reproduce --table "$t" --paper --runs "${RUNS:-10}" --jobs "${JOBS:-1}" --backend "$BACKEND" --no-figures --out "$results/table$t")
  if [ "$t" = 2 ]; then args+=(--datasets "${DATASETS:-frey,mnist}" --methods "${METHODS:-mf,iwvi,vais,uha}"); fi
  t0=$(date +%s)
  set +e
  timeout --signal=INT --kill-after=30 "$left" "$bin" "${args[@]}" > "$results/table$t.log" 2>&1
  rc=$?
  set -e
  stored=$(find "$results/table$t/jobs" -type f 2>/dev/null | wc -l || true)
  echo "table $t: exit $rc, $(( $(date +%s) - t0 )) s, $stored trainings stored ($BACKEND)" >> "$results/summary.txt"
done
tar cf - -C "$(dirname "$results")" "$(basename "$results")" | xz -T0 > "$results.tar.xz"
cat "$results/summary.txt"

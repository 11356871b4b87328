#!/usr/bin/env bash
# Executes notebooks in place at the size their cells state (default; VAISGPLVM_FULL=1 for the
# full sizes where a notebook offers them) with Jupyter's nbconvert and the GoNB kernel (set up as
# the README says), then stamps each code cell's source hash into its metadata
# (scripts/stamp_notebooks.py), which notebooks/notebooks_test.go checks. Prints each notebook's
# run time.
#
#   scripts/run-notebooks.sh                      # every notebook
#   scripts/run-notebooks.sh notebooks/01-*.ipynb # some
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(notebooks/*.ipynb); fi
for nb in "${files[@]}"; do
  start=$(date +%s)
  # GoMLX's AVX-512 matrix kernels stay off for notebooks (README, "To run them").
  GOMLX_SIMD_AVX512=false jupyter nbconvert --to notebook --execute --inplace \
    --ExecutePreprocessor.timeout=3600 "$nb"
  python3 scripts/stamp_notebooks.py "$nb"
  echo "$nb: $(( $(date +%s) - start )) s"
done

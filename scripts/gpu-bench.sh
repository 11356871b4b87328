#!/usr/bin/env bash
# Benchmark of issue 5, for a GPU machine (it has no Go toolchain and no network). From the repository
# root on the build machine:
#
#   CGO_ENABLED=1 go build -tags xla -o .gpu/ ./vaisgplvm/cmd/vaisgplvm   # .gpu/ is git-ignored; the data is embedded
#
# then, with .gpu carried, on the GPU machine from the repository root:
#
#   scripts/gpu-probe.sh     # first: does the plugin start, and with which library path (PIP_CUDA_LIBS)
#   scripts/gpu-bench.sh
#
# It times one training iteration (median of REPS after one warm-up) and one epoch of MF, IWVI and
# VAIS on oilflow (N 1000, Q 10, M 50, K 5, batch 100) and on Frey (N 1965, D 560, Q 20, M 50,
# K in KS, batch 100) in float64 and float32 through XLA on CUDA, and GPyTorch's Bayesian GPLVM on the
# same data, batch and dtypes (scripts/gpytorch_bench.py), then writes the JSON results to RESULTS
# and the table to docs/benchmarks.md (scripts/bench_table.py).
#
# Environment: BIN (default .gpu/vaisgplvm), BACKEND (default
# xla:<JAX's CUDA PJRT plugin>), PJRT_PLUGIN (the plugin's path), RESULTS (default out/gpu-bench),
# KS (default 5,10,15,20,25), REPS (default 20), DTYPES (default "float64 float32 tf32"; tf32 is
# float32 with TensorFloat-32 matrix products, our backend spec's ",tf32" and torch's allow_tf32),
# GPYTORCH (default 1; 0 skips it), DOC (default docs/benchmarks.md), PIP_CUDA_LIBS (1: NVIDIA pip
# libraries on LD_LIBRARY_PATH).
#
# Where each command may run only minutes (our device tool: 10), run it in pieces into one results
# tree, e.g. DTYPES=float64 GPYTORCH=0, then DTYPES=float32 GPYTORCH=0, then DTYPES=tf32 with
# GPYTORCH=1, each with RESULTS under the tool's $OUT; merge the fetched directories and render the
# table here: python3 scripts/bench_table.py MERGED > docs/benchmarks.md. GPyTorch runs the dtypes in
# GPYTORCH_DTYPES (default DTYPES): set GPYTORCH_DTYPES="float64 float32 tf32" in the run that has
# GPYTORCH=1.
#
# PREFETCH (default 1; 0 skips it) times Frey MF, IWVI and VAIS K = 5 in float64 with each step's
# inputs built in the step (bench --prefetch=false) and prepared by the previous step on another
# goroutine (--prefetch=true, the default everywhere else): RESULTS/prefetch_off.json, prefetch_on.json.
#
# F64EXACT (default 1; 0 skips it) times Frey MF, IWVI and VAIS K = 5 and 25 in float64 once more with
# NVIDIA_TF32_OVERRIDE=0 and --xla_gpu_enable_triton_gemm=false set in the environment (the backend
# keeps a user's settings; ,f64 only stops it from adding its own): the float64 rows' settings from
# b9e33fb to 4773487, against XLA's defaults in the main float64 rows (needs float64 in DTYPES):
# RESULTS/frey_f64exact.
#
# HLO=1 adds one run that has XLA dump each compiled step graph after optimisation (XLA_FLAGS
# --xla_dump_to=HLO_DUMP --xla_dump_hlo_as_text; the backend appends its own flag to these) for
# oilflow VAIS and Frey MF and VAIS at K = 5 (float64), and writes RESULTS/hlo_kernels.txt: per dumped
# module, the kernels its step launches (lines of XLA's thunk sequence: fused kernels, cuBLAS calls,
# copies), the lines with a fusion( or custom-call( instruction and with any instruction. The dump
# (thousands of files, too many for the device tool to bring back with RESULTS) goes to HLO_DUMP
# when set and is kept there, else to a temporary directory removed once counted.
set -euo pipefail
bin=${BIN:-.gpu/vaisgplvm}
results=${RESULTS:-out/gpu-bench}
ks=${KS:-5,10,15,20,25}
reps=${REPS:-20}
dtypes=${DTYPES:-float64 float32 tf32}
doc=${DOC:-docs/benchmarks.md}
BACKEND=${BACKEND:-$(scripts/cuda-backend.sh)}
# PIP_CUDA_LIBS=1: put the NVIDIA pip libraries on LD_LIBRARY_PATH (when gpu-probe.sh says "works: piplibs").
if [ "${PIP_CUDA_LIBS:-0}" = 1 ]; then export LD_LIBRARY_PATH=$(scripts/cuda-backend.sh --libs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
mkdir -p "$results" "$(dirname "$doc")"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; } > "$results/device.txt"
echo "$0 KS=$ks REPS=$reps DTYPES=\"$dtypes\" BACKEND=$BACKEND" > "$results/command.txt"
# float32 rows get exact float32 products from the backend itself (it sets NVIDIA_TF32_OVERRIDE=0
# and --xla_gpu_enable_triton_gemm=false before the CUDA plugin loads, unless the spec ends in ,tf32
# or ,f64: vaisgplvm/backend/precision.go); float64 rows run with XLA's defaults (the command adds
# ,f64 for --dtype float64, since 4773487); tf32 rows ask for TF32.
for dt in $dtypes; do
  spec=$BACKEND dtype=$dt
  if [ "$dt" = tf32 ]; then spec="$BACKEND,tf32" dtype=float32; fi
  "$bin" bench --backend "$spec" --dtype "$dtype" --batch 100 --iters "$reps" > "$results/oilflow_$dt.json"
  "$bin" reproduce --table 6 --methods mf,iwvi,vais --ks "$ks" --reps "$reps" --backend "$spec" \
    --dtype "$dtype" --out "$results/frey_$dt" > /dev/null
done
if [ "${PREFETCH:-1}" = 1 ]; then
  for p in off on; do
    flag=false; [ "$p" = on ] && flag=true
    "$bin" bench --backend "$BACKEND" --dataset frey --batch 100 --k 5 --methods mf,iwvi,vais --iters "$reps" \
      --prefetch=$flag > "$results/prefetch_$p.json"
  done
fi
if [ "${F64EXACT:-1}" = 1 ]; then
  NVIDIA_TF32_OVERRIDE=0 XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_enable_triton_gemm=false" \
    "$bin" reproduce --table 6 --methods mf,iwvi,vais --ks 5,25 --reps "$reps" --backend "$BACKEND" \
    --dtype float64 --out "$results/frey_f64exact" > /dev/null
fi
if [ "${HLO:-0}" = 1 ]; then
  # One dump directory per process: XLA numbers modules per process, so two processes' first
  # modules would both be module_0000 and the second would overwrite the first.
  dump=${HLO_DUMP:-$(mktemp -d)}
  mkdir -p "$dump/oilflow" "$dump/frey"
  flags="${XLA_FLAGS:+$XLA_FLAGS }--xla_dump_hlo_as_text"
  XLA_FLAGS="$flags --xla_dump_to=$dump/oilflow" "$bin" bench --backend "$BACKEND" --batch 100 --methods vais --iters 2 \
    > "$results/hlo_oilflow.json"
  XLA_FLAGS="$flags --xla_dump_to=$dump/frey" "$bin" bench --backend "$BACKEND" --dataset frey --batch 100 --k 5 \
    --methods mf,vais --iters 2 > "$results/hlo_frey.json"
  # Kernels a step launches: XLA's thunk sequence (one line per fused kernel, cuBLAS call or copy).
  for f in "$dump"/*/*after_optimizations.txt; do
    [ -f "$f" ] || continue
    thunks=${f%after_optimizations.txt}
    thunks=$(ls "${thunks%.sm_*}".*thunk_sequence_after_thunk_passes.txt 2>/dev/null | head -1 || true)
    printf '%s\tkernels %d\tfusions %d\tcustom_calls %d\tinstructions %d\n' "$(basename "$(dirname "$f")")/$(basename "$f")" \
      "$(if [ -n "$thunks" ]; then grep -cE '^ *[0-9]+: k(CustomKernel|CublasLtMatmul|Gemm|Copy|Kernel|DynamicSliceFusion)' "$thunks" || true; else echo 0; fi)" \
      "$(grep -c ' fusion(' "$f" || true)" "$(grep -c ' custom-call(' "$f" || true)" "$(grep -cE '^ +(ROOT )?[^ ]+ = ' "$f" || true)"
  done > "$results/hlo_kernels.txt"
  [ -n "${HLO_DUMP:-}" ] || rm -rf "$dump"
fi
if [ "${GPYTORCH:-1}" != 0 ]; then
  python3 scripts/gpytorch_bench.py --data data --batch 100 --iters "$reps" \
    --dtypes "$(echo ${GPYTORCH_DTYPES:-$dtypes} | tr ' ' ',')" > "$results/gpytorch.json" \
    || echo "gpu-bench: the GPyTorch run failed (see above); its column stays empty" >&2
fi
python3 scripts/bench_table.py "$results" > "$doc"
echo "gpu-bench: wrote $doc and $results/" >&2

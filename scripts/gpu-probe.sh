#!/usr/bin/env bash
# First command of a GPU session (issue 5): does our cross-built command start XLA on this machine's
# CUDA PJRT plugin, and if not, why? One run gathers what a second would need, because the device
# tool gives few minutes. From the repository root, with .gpu carried (see gpu-bench.sh's header):
#
#   OUT=... scripts/gpu-probe.sh        # results in $OUT/probe (default out/gpu-probe)
#
# It records the machine (GPU, driver, glibc, Python packages), the plugin's dynamic section (NEEDED,
# RUNPATH) and the libraries ldd cannot find, then tries `bench` (oilflow, all methods, 3 iterations)
# with the plugin (A) as it is, (B, only when A fails) with the NVIDIA pip libraries on LD_LIBRARY_PATH
# (cuda-backend.sh --libs), and (C) with --backend auto, which must find JAX's plugin by itself; then times the
# largest graph (Frey VAIS K 25, float32) with whichever of A/B worked. summary.txt has one line per
# attempt: exit status, seconds, and the backend line the command printed. PROBE_TIMEOUT (seconds,
# default 240) bounds each attempt.
set -uo pipefail
bin=${BIN:-.gpu/vaisgplvm}
dir=${OUT:-out}/gpu-probe
mkdir -p "$dir"
sum=$dir/summary.txt
: > "$sum"
{
  nvidia-smi || echo "no nvidia-smi"
  ldd --version 2>&1 | head -1
  python3 -V
  python3 -m pip list 2>/dev/null | grep -i -E '^(jax|jaxlib|jax-cuda|torch|gpytorch|nvidia)' || echo "pip list failed"
} > "$dir/machine.txt" 2>&1
spec=$(scripts/cuda-backend.sh 2> "$dir/plugin.err")
plugin=${spec#xla:}
echo "plugin: ${plugin:-none} ($(cat "$dir/plugin.err"))" >> "$sum"
if [ -f "$plugin" ]; then
  readelf -d "$plugin" | grep -E 'NEEDED|RUNPATH|RPATH' > "$dir/plugin-dynamic.txt" 2>&1
  ldd "$plugin" > "$dir/plugin-ldd.txt" 2>&1
  echo "ldd not found: $(grep -c 'not found' "$dir/plugin-ldd.txt")" >> "$sum"
fi
libs=$(scripts/cuda-backend.sh --libs 2>/dev/null)
echo "pip NVIDIA lib dirs: ${libs:-none}" >> "$sum"

attempt() { # name, extra environment (NAME=VALUE, or "" for none), backend spec, bench args...
  local name=$1 envset=$2 backend=$3
  shift 3
  local start=$(date +%s%N) rc
  env ${envset:+"$envset"} timeout "${PROBE_TIMEOUT:-240}" "$bin" bench --backend "$backend" "$@" > "$dir/$name.json" 2> "$dir/$name.err"
  rc=$?
  printf '%s\trc=%d\t%ds\t%s\n' "$name" "$rc" $(( ($(date +%s%N) - start) / 1000000000 )) \
    "$(grep -m1 '^backend' "$dir/$name.err" || tail -1 "$dir/$name.err")" >> "$sum"
  return $rc
}
pip_env="LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
works=none
if [ -n "$spec" ]; then
  attempt A_plugin "" "$spec" --iters 3 --batch 100 && works=as-is
  if [ "$works" = none ]; then attempt B_piplibs "$pip_env" "$spec" --iters 3 --batch 100 && works=piplibs; fi
fi
attempt C_auto "" auto --iters 3 --batch 100
case $works in
as-is) attempt D_frey_vais_k25_f32 "" "$spec" --dataset frey --methods vais --dtype float32 --iters 3 ;;
piplibs) attempt D_frey_vais_k25_f32 "$pip_env" "$spec" --dataset frey --methods vais --dtype float32 --iters 3 ;;
*) echo "XLA did not start: see A_plugin.err and B_piplibs.err" >> "$sum" ;;
esac
echo "works: $works (as-is: the plugin alone; piplibs: with PIP_CUDA_LIBS=1 in gpu-test.sh / gpu-bench.sh)" >> "$sum"
cat "$sum"

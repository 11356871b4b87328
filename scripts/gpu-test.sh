#!/usr/bin/env bash
# The library's test suite on XLA through a PJRT plugin (issue 5), for a GPU machine that has no Go
# toolchain. Two steps, from the repository root:
#
#   scripts/gpu-test.sh build     # here (Go, cgo): test binaries built with -tags xla into .gpu/tests.tar.xz
#   scripts/gpu-test.sh run       # there, with .gpu/tests.tar.xz carried: runs each binary in its package directory
#
# build writes one stripped test binary per package that uses a backend (data, metrics and plots never
# touch a backend and are left out) into one tar, xz-compressed with a 384 MiB dictionary so that the
# code the binaries share is stored once: 14 binaries become one 21 MB file, TESTS (default
# .gpu/tests.tar.xz); xz each binary alone gave 63 MB, too close to the device tool's 64 MiB per call.
# run unpacks it into a temporary directory (384 MiB of memory for xz).
#
# run: every test binary with VAISGPLVM_TEST_BACKEND (the tests' backend, see internal/testutil) and
# VAISGPLVM_BACKEND (the commands' backend) set to BACKEND (default xla:<JAX's CUDA PJRT plugin>); the
# datasets are embedded in the binaries. It writes one log per
# package and appends a line (package, exit status, seconds, failed tests) to RESULTS/summary.txt
# (default out/gpu-test) and exits non-zero when any package fails. The notebooks package is left out (it needs
# Go and Jupyter). Set TESTFLAGS (e.g. "-test.run TestFloat32 -test.v") to pass flags to every binary, PKG_TIMEOUT
# (seconds, default 600) to stop a package's binary, ONLY (a regexp on package names) to run some.
# If XLA reductions make a bit-exact test differ between runs, note it: XLA_FLAGS can ask the GPU for
# deterministic ops where the plugin's XLA version supports such a flag.
set -euo pipefail
mode=${1:-}
tests=${TESTS:-.gpu/tests.tar.xz}
case "$mode" in
build)
  work=$(mktemp -d)
  for pkg in $(go list ./vaisgplvm/...); do
    rel=${pkg#github.com/vaisgplvm/vaisgplvm/}
    case "$rel" in vaisgplvm/metrics | vaisgplvm/study/plots) continue ;; esac
    name=$(echo "$rel" | tr / _)
    CGO_ENABLED=1 go test -c -tags xla -ldflags="-s -w" -o "$work/$name.test" "./$rel"
    [ -f "$work/$name.test" ] && echo "$name -> $rel" >&2
  done
  mkdir -p "$(dirname "$tests")"
  (cd "$work" && tar cf - *.test) | xz -T2 --lzma2=preset=6,dict=384MiB > "$tests"
  echo "gpu-test: built $(ls "$work"/*.test | wc -l) test binaries into $tests ($(du -sh "$tests" | cut -f1))" >&2
  rm -rf "$work"
  ;;
run)
  results=${RESULTS:-out/gpu-test}
  BACKEND=${BACKEND:-$(scripts/cuda-backend.sh)}
  export VAISGPLVM_TEST_BACKEND=$BACKEND VAISGPLVM_BACKEND=$BACKEND
  # PIP_CUDA_LIBS=1: put the NVIDIA pip libraries on LD_LIBRARY_PATH (when gpu-probe.sh says "works: piplibs").
  if [ "${PIP_CUDA_LIBS:-0}" = 1 ]; then export LD_LIBRARY_PATH=$(scripts/cuda-backend.sh --libs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
  # Exact float32 products on NVIDIA GPUs (the float32 tests' tolerances need them) come from the
  # backend itself (vaisgplvm/backend/precision.go), so gp TestProjectedFloat32 and train
  # TestFloat32MatchesFloat64 also check that its in-process setting works.
  mkdir -p "$results"
  fail=0 bin=$(mktemp -d)
  touch "$results/summary.txt"
  xz -dc "$tests" | tar xf - -C "$bin" && chmod +x "$bin"/*.test
  for tb in "$bin"/*.test; do
    name=$(basename "$tb" .test)
    rel=$(echo "$name" | tr _ /)
    if [ -n "${ONLY:-}" ] && ! echo "$rel" | grep -qE "$ONLY"; then continue; fi
    start=$(date +%s)
    set +e
    (cd "$rel" && timeout "${PKG_TIMEOUT:-600}" "$tb" -test.v ${TESTFLAGS:-}) > "$results/$name.log" 2>&1
    rc=$?
    set -e
    failed=$(grep -E '^\s*--- FAIL' "$results/$name.log" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | tr '\n' ' ' || true)
    printf '%s\t%d\t%ds\t%s\n' "$rel" "$rc" $(( $(date +%s) - start )) "$failed" | tee -a "$results/summary.txt"
    [ "$rc" = 0 ] || fail=1
    rm -f "$tb"
  done
  echo "gpu-test: backend $BACKEND; logs in $results" >&2
  exit $fail
  ;;
*)
  echo "usage: scripts/gpu-test.sh build|run" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# The library's test suite on XLA through a PJRT plugin (issue 5), for a GPU machine that has no Go
# toolchain. Two steps, from the repository root:
#
#   scripts/gpu-test.sh build     # here (Go, cgo): test binaries built with -tags xla into .gpu/tests
#   scripts/gpu-test.sh run       # there, with .gpu/tests carried: runs each binary in its package directory
#
# build writes one stripped, xz-compressed binary per package that uses a backend (<pkg>.test.xz,
# about 5 MB each; data, metrics and plots never touch a backend and are left out). The device tool
# carries at most 64 MiB per call: move the files into several directories (.gpu/testsA, ...) and run
# them in turns with TESTS=.gpu/testsA. run unpacks into a temporary directory.
#
# run: every test binary with VAISGPLVM_TEST_BACKEND (the tests' backend, see internal/testutil) and
# VAISGPLVM_BACKEND (the commands' backend) set to BACKEND (default xla:<JAX's CUDA PJRT plugin>),
# VAISGPLVM_DATA to .gpu/data (copy ../shared/data there before carrying). It writes one log per
# package and appends a line (package, exit status, seconds, failed tests) to RESULTS/summary.txt
# (default out/gpu-test) and exits non-zero when any package fails. The notebooks package is left out (it needs
# Go and Jupyter). Set TESTFLAGS (e.g. "-test.run TestFloat32 -test.v") to pass flags to every binary.
# If XLA reductions make a bit-exact test differ between runs, note it: XLA_FLAGS can ask the GPU for
# deterministic ops where the plugin's XLA version supports such a flag.
set -euo pipefail
mode=${1:-}
tests=${TESTS:-.gpu/tests}
case "$mode" in
build)
  mkdir -p "$tests"
  for pkg in $(go list ./vaisgplvm/...); do
    rel=${pkg#github.com/vaisgplvm/vaisgplvm/}
    case "$rel" in vaisgplvm/metrics | vaisgplvm/plots) continue ;; esac
    name=$(echo "$rel" | tr / _)
    CGO_ENABLED=1 go test -c -tags xla -ldflags="-s -w" -o "$tests/$name.test" "./$rel"
    if [ -f "$tests/$name.test" ]; then
      xz -6 -T2 -f "$tests/$name.test"
      echo "$name -> $rel" >&2
    fi
  done
  echo "gpu-test: built $(ls "$tests"/*.test.xz | wc -l) test binaries into $tests ($(du -sh "$tests" | cut -f1))" >&2
  ;;
run)
  results=${RESULTS:-out/gpu-test}
  BACKEND=${BACKEND:-$(scripts/cuda-backend.sh)}
  export VAISGPLVM_TEST_BACKEND=$BACKEND VAISGPLVM_BACKEND=$BACKEND
  # PIP_CUDA_LIBS=1: put the NVIDIA pip libraries on LD_LIBRARY_PATH (when gpu-probe.sh says "works: piplibs").
  if [ "${PIP_CUDA_LIBS:-0}" = 1 ]; then export LD_LIBRARY_PATH=$(scripts/cuda-backend.sh --libs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
  export VAISGPLVM_DATA=${VAISGPLVM_DATA:-$PWD/.gpu/data}
  mkdir -p "$results"
  root=$PWD fail=0 bin=$(mktemp -d)
  touch "$results/summary.txt"
  for xzf in "$tests"/*.test.xz; do
    name=$(basename "$xzf" .test.xz)
    rel=$(echo "$name" | tr _ /)
    xz -dc "$xzf" > "$bin/$name.test" && chmod +x "$bin/$name.test"
    start=$(date +%s)
    set +e
    (cd "$rel" && "$bin/$name.test" -test.v ${TESTFLAGS:-}) > "$results/$name.log" 2>&1
    rc=$?
    set -e
    failed=$(grep -E '^\s*--- FAIL' "$results/$name.log" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | tr '\n' ' ' || true)
    printf '%s\t%d\t%ds\t%s\n' "$rel" "$rc" $(( $(date +%s) - start )) "$failed" | tee -a "$results/summary.txt"
    [ "$rc" = 0 ] || fail=1
    rm -f "$bin/$name.test"
  done
  echo "gpu-test: backend $BACKEND; logs in $results" >&2
  exit $fail
  ;;
*)
  echo "usage: scripts/gpu-test.sh build|run" >&2
  exit 2
  ;;
esac

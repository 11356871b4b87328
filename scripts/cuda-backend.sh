#!/usr/bin/env bash
# Prints the backend spec xla:<JAX's CUDA PJRT plugin> for gpu-bench.sh and gpu-test.sh: $PJRT_PLUGIN
# when set, else jax_plugins/xla_cuda13/xla_cuda_plugin.so from python3's JAX; exits 1 with a message
# when there is none.
set -euo pipefail
plugin=${PJRT_PLUGIN:-$(python3 -c 'import os, jax_plugins.xla_cuda13 as p; print(os.path.join(os.path.dirname(p.__file__), "xla_cuda_plugin.so"))' 2>/dev/null || true)}
if [ ! -f "$plugin" ]; then
  echo "no CUDA PJRT plugin found (JAX's jax_plugins/xla_cuda13); set PJRT_PLUGIN or BACKEND" >&2
  exit 1
fi
echo "xla:$plugin"

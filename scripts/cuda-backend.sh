#!/usr/bin/env bash
# Prints the backend spec xla:<JAX's CUDA PJRT plugin> for gpu-bench.sh and gpu-test.sh: $PJRT_PLUGIN
# when set, else jax_plugins/xla_cuda13/xla_cuda_plugin.so (then xla_cuda12) from python3's JAX;
# exits 1 with a message when there is none.
#
#   scripts/cuda-backend.sh --libs   prints instead the colon-separated lib directories of the
#                                    NVIDIA pip packages beside JAX (site-packages/nvidia/*/lib and
#                                    nvidia/cu*/lib), for LD_LIBRARY_PATH: JAX's Python code preloads
#                                    these libraries before it loads the plugin, a Go program does not.
set -euo pipefail
if [ "${1:-}" = --libs ]; then
  python3 - <<'PY'
import glob, os, site
dirs = []
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for d in sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib"))):
        if d not in dirs:
            dirs.append(d)
print(":".join(dirs))
PY
  exit 0
fi
plugin=${PJRT_PLUGIN:-$(python3 -c '
import importlib, os
for m in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
    try:
        p = importlib.import_module(m)
    except ImportError:
        continue
    print(os.path.join(os.path.dirname(p.__file__), "xla_cuda_plugin.so"))
    break
' 2>/dev/null || true)}
if [ ! -f "$plugin" ]; then
  echo "no CUDA PJRT plugin found (JAX's jax_plugins/xla_cuda13 or xla_cuda12); set PJRT_PLUGIN or BACKEND" >&2
  exit 1
fi
echo "xla:$plugin"

package backend

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// jaxPluginGlobs are where a pip-installed JAX keeps its CUDA PJRT plugin, relative to a Python
// prefix (a virtual environment, a conda environment, ~/.local, /usr/local, ...). JAX names the
// file xla_cuda_plugin.so, which GoMLX's search by name (pjrt_c_api_NAME_plugin.so on
// $PJRT_PLUGIN_LIBRARY_PATH) does not match.
var jaxPluginGlobs = []string{
	"lib/python3*/site-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
	"lib/python3*/dist-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
	"lib/python3/dist-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
}

// systemPrefixes are the system-wide Python prefixes searched after the user's (see pythonPrefixes).
var systemPrefixes = []string{"/usr/local", "/usr", "/opt/conda", "/opt/venv"}

// pythonPrefixes are the Python installation prefixes searched for JAX's CUDA plugin, in order:
// the active virtual and conda environments, the prefix of the python3 first on $PATH (a virtual
// environment's bin/python3 names the environment even when it is not activated: the GPU machines'
// /opt/torch/.venv), the user's ~/.local, then systemPrefixes. Nothing is run.
func pythonPrefixes() []string {
	var prefixes []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := os.Getenv(env); p != "" {
			prefixes = append(prefixes, p)
		}
	}
	if py, err := exec.LookPath("python3"); err == nil {
		if abs, err := filepath.Abs(py); err == nil {
			prefixes = append(prefixes, filepath.Dir(filepath.Dir(abs)))
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		prefixes = append(prefixes, filepath.Join(home, ".local"))
	}
	return append(prefixes, systemPrefixes...)
}

// jaxCUDAPlugins returns the absolute paths of JAX's CUDA PJRT plugins installed under prefixes
// (see jaxPluginGlobs), each once (symbolic links resolved), the newest CUDA major version first
// within a prefix. It only looks at file names: nothing is loaded.
func jaxCUDAPlugins(prefixes []string) []string {
	var found, seen []string
	for _, prefix := range prefixes {
		var here []string
		for _, pattern := range jaxPluginGlobs {
			matches, _ := filepath.Glob(filepath.Join(prefix, pattern))
			here = append(here, matches...)
		}
		// xla_cuda13 before xla_cuda12: the directory names differ only in the version.
		slices.Sort(here)
		slices.Reverse(here)
		for _, p := range here {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || slices.Contains(seen, real) {
				continue
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				continue
			}
			seen = append(seen, real)
			found = append(found, abs)
		}
	}
	return found
}

// pluginCandidates orders the plugins an xla or auto spec tries: GoMLX's plugin named cuda, then
// JAX's CUDA plugins (absolute paths), then cpu, then any other named plugin.
func pluginCandidates(named, jaxCUDA []string) []string {
	var out []string
	if slices.Contains(named, "cuda") {
		out = append(out, "cuda")
	}
	out = append(out, jaxCUDA...)
	if slices.Contains(named, "cpu") {
		out = append(out, "cpu")
	}
	for _, n := range named {
		if n != "cuda" && n != "cpu" {
			out = append(out, n)
		}
	}
	return out
}

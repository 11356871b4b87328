package backend

import (
	"fmt"
	"io"
	"os"
	"strings"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Start starts the backend named by spec for graphs of dtype ("float64" or "float32"; "" is
// float64) and total trainings run jobs at a time (ForDType, then OpenShared), and writes one line
// on log (when not nil) saying which backend and why; for XLA the line also names the PJRT plugin,
// its C API version and the device count; for the pure-Go backend it names the matrix kernels
// (MatMulKernels), with a second line when SIMDNote has advice. Errors are *option.Error about the setting "Backend",
// naming $VAISGPLVM_BACKEND instead when spec is "" and that variable chose the backend.
func Start(spec, dtype string, jobs, total int, log io.Writer) (backends.Backend, error) {
	if dtype == "" {
		dtype = "float64"
	}
	c, err := OpenShared(ForDType(spec, dtype), jobs, total)
	if err != nil {
		if spec == "" && os.Getenv(EnvVar) != "" {
			return nil, option.Of("Backend", "$%s: %v (unset it or fix it, or give Backend)", EnvVar, err)
		}
		return nil, option.Of("Backend", "Backend: %v", err)
	}
	desc, note := "", ""
	if strings.HasPrefix(c.Spec, "xla") {
		desc = "; " + c.Backend.Description()
	} else {
		kernels, ch := MatMulKernels(), Chosen()
		desc, note = "; matrix kernels: "+kernels, simdNote(kernels)
		if chosen != nil && ch.Kernels == kernels {
			desc, note = fmt.Sprintf("; matrix kernels: %s; CPU: %s", ch, ch.CPU), ""
		}
	}
	if log != nil {
		fmt.Fprintf(log, "backend: %s (%s%s)\n", c.Spec, c.Reason, desc)
		if note != "" {
			fmt.Fprintf(log, "backend: note: %s\n", note)
		}
	}
	return c.Backend, nil
}

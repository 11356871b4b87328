package cmf

import "github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"

// Rise is how much a training curve still climbed at its end (metrics.Rise).
type Rise = metrics.Rise

// CurveRise returns the Rise of a curve of -bound per point per step (Model.Curve): see
// metrics.CurveRise.
func CurveRise(curve []float64) (Rise, error) { return metrics.CurveRise(curve) }

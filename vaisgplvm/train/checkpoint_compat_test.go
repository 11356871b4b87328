package train

import (
	"reflect"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestSavedConfigRoundTrip: every field of model.Config survives the checkpoint's flat form: each
// field set to a distinct non-zero value by reflection, flattened and rebuilt, compares equal, and
// savedConfig has exactly as many fields as model.Config's parts together.
func TestSavedConfigRoundTrip(t *testing.T) {
	var c model.Config
	n := 0
	for _, part := range []reflect.Value{reflect.ValueOf(&c.ModelConfig).Elem(), reflect.ValueOf(&c.BoundConfig).Elem(),
		reflect.ValueOf(&c.TrainConfig).Elem()} {
		for i := 0; i < part.NumField(); i++ {
			n++
			f := part.Field(i)
			switch f.Kind() {
			case reflect.String:
				f.SetString("s" + part.Type().Field(i).Name)
			case reflect.Int:
				f.SetInt(int64(n))
			case reflect.Uint64:
				f.SetUint(uint64(n))
			case reflect.Float64:
				f.SetFloat(float64(n) + 0.5)
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Map:
				f.Set(reflect.ValueOf(map[string]float64{"s" + part.Type().Field(i).Name: float64(n)}))
			default:
				t.Fatalf("field %s of kind %s: extend this test and savedConfig", part.Type().Field(i).Name, f.Kind())
			}
		}
	}
	if got := toSaved(c).config(); !got.Equal(c) {
		t.Errorf("round trip lost fields:\\n got %+v\\nwant %+v", got, c)
	}
	if m := reflect.TypeOf(savedConfig{}).NumField(); m != n {
		t.Errorf("savedConfig has %d fields, model.Config's parts %d", m, n)
	}
}

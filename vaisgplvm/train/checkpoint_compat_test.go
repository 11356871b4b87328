package train

import (
	"reflect"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// fillDistinct sets every field of the struct v points to (through embedded structs) to a distinct
// non-zero value, returning how many it set; a field of a kind it does not know fails t.
func fillDistinct(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		*n++
		switch f.Kind() {
		case reflect.Struct:
			*n--
			fillDistinct(t, f, n)
		case reflect.String:
			f.SetString("s" + name)
		case reflect.Int:
			f.SetInt(int64(*n))
		case reflect.Uint64:
			f.SetUint(uint64(*n))
		case reflect.Float64:
			f.SetFloat(float64(*n) + 0.5)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]float64{"s" + name: float64(*n) + 0.25}))
		default:
			t.Fatalf("field %s of kind %s: extend this test", name, f.Kind())
		}
	}
}

// TestConfigRoundTrip: every field of model.Config, each set to a distinct non-zero value, survives
// the checkpoint's versioned JSON form exactly.
func TestConfigRoundTrip(t *testing.T) {
	var c model.Config
	n := 0
	fillDistinct(t, reflect.ValueOf(&c).Elem(), &n)
	raw, err := model.MarshalConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := model.ParseConfig(model.ConfigVersion, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(c) {
		t.Errorf("round trip lost fields (%d set):\n got %+v\nwant %+v", n, got, c)
	}
	if _, err := model.ParseConfig(model.ConfigVersion+1, raw); err == nil {
		t.Error("a newer version: want an error")
	}
	if _, err := model.ParseConfig(model.ConfigVersion, []byte(`{"q": 2, "no_such_field": 1}`)); err == nil {
		t.Error("an unknown field: want an error")
	}
}

// TestLegacyConfig: a version-0 checkpoint's flat configuration maps each of its fields to the
// model.Config field of the same name.
func TestLegacyConfig(t *testing.T) {
	var s savedConfig
	n := 0
	fillDistinct(t, reflect.ValueOf(&s).Elem(), &n)
	c := reflect.ValueOf(s.config())
	sv := reflect.ValueOf(s)
	for i := 0; i < sv.NumField(); i++ {
		name := sv.Type().Field(i).Name
		f := c.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("savedConfig.%s has no model.Config field of that name", name)
			continue
		}
		if !reflect.DeepEqual(f.Interface(), sv.Field(i).Interface()) {
			t.Errorf("savedConfig.%s = %v became %v", name, sv.Field(i).Interface(), f.Interface())
		}
	}
}

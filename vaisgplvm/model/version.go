package model

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ConfigVersion is the version of Config's JSON form (its json field names and meanings) that
// checkpoints embed. Raise it when a field is renamed or changes meaning, and add the step from
// the previous version to migrations; adding a field with a zero default needs neither (an older
// JSON form lacks it and decodes to the zero value).
const ConfigVersion = 1

// migrations[v] rewrites the JSON object of a version-v configuration into version v+1's.
var migrations = map[int]func(map[string]any) error{}

// MarshalConfig returns c's JSON form at ConfigVersion.
func MarshalConfig(c Config) ([]byte, error) {
	return json.Marshal(c)
}

// ParseConfig reads a configuration written as JSON at version (1 ... ConfigVersion), migrating it
// to the current form. Errors: an unknown version (a newer vaisgplvm wrote it), bad JSON, or a
// field this version does not know.
func ParseConfig(version int, raw []byte) (Config, error) {
	if version < 1 || version > ConfigVersion {
		return Config{}, fmt.Errorf("configuration version %d: this vaisgplvm reads versions 1 to %d (a newer one wrote it?)", version, ConfigVersion)
	}
	for v := version; v < ConfigVersion; v++ {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return Config{}, fmt.Errorf("configuration: %w", err)
		}
		if err := migrations[v](obj); err != nil {
			return Config{}, fmt.Errorf("configuration version %d: %w", v, err)
		}
		var err error
		if raw, err = json.Marshal(obj); err != nil {
			return Config{}, fmt.Errorf("configuration: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

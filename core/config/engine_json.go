package config

import (
	"encoding/json"
	"reflect"
	"strings"
)

// engine.scheduler holds vLLM's engine arguments. Another backend's spec gives
// its engine's options in a block of its own (engine.trtllm) and leaves
// engine.scheduler out: refused when given (nonZeroField), and left out of the
// canonical spec (MarshalJSON), so that the canonical spec decodes again.

// MarshalJSON writes engine with its fields in order, leaving out
// engine.scheduler (vLLM's, empty) when the backend is not vLLM.
func (e Engine) MarshalJSON() ([]byte, error) {
	type plain Engine // without this method
	b, err := json.Marshal(plain(e))
	if err != nil || e.Backend == BackendVLLM || e.Backend == "" {
		return b, err
	}
	return dropKey(b, "scheduler")
}

// dropKey removes top-level key from the JSON object b, keeping the order of
// the others.
func dropKey(b []byte, key string) ([]byte, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	out := []byte{'{'}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k == key {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(k)
		out = append(append(append(out, kb...), ':'), v...)
	}
	return append(out, '}'), nil
}

// nonZeroField is the JSON key of the struct v's first field that is not
// zero, or "".
func nonZeroField(v any) string {
	rv := reflect.ValueOf(v)
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		if !rv.Field(i).IsZero() {
			return strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		}
	}
	return ""
}

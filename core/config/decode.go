package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Error is a problem with one field of the spec. Field is the dotted path
// ("engine.scheduler.max_num_seqs"); Python's ConfigError carries the same path.
// Infeasible marks a spec that is well formed but names a deployment that
// cannot start (the model does not fit the GPUs, as vLLM refuses to start):
// Python raises InfeasibleError, a ConfigError, and a sweep records the point
// as "infeasible" rather than "error".
type Error struct {
	Field      string
	Msg        string
	Infeasible bool
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func errorf(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Decode reads a JSON spec strictly (an unknown field, a wrong type or a
// non-finite number is an *Error naming its dotted path), fills the defaults of
// defaults.go and validates the result. Relative paths are kept as given.
func Decode(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, &Error{Msg: "spec is not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &Error{Msg: "spec has trailing data after the JSON object"}
	}
	return fromRaw(raw)
}

// DecodeYAML is Decode for YAML text.
func DecodeYAML(data []byte) (*Spec, error) {
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		// yaml.v3 quotes an invalid map key whole: a deeply nested one
		// made a message of kilobytes
		return nil, &Error{Msg: "spec is not valid YAML: " + cut(err.Error(), 200)}
	}
	return fromRaw(raw)
}

// DecodeFile reads a YAML or JSON spec file and resolves its relative paths
// against the file's folder (ResolvePaths).
func DecodeFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	s, err := DecodeYAML(data) // YAML is a superset of JSON
	if err != nil {
		return nil, err
	}
	s.ResolvePaths(filepath.Dir(path))
	return s, nil
}

// ResolvePaths makes the spec's file paths absolute against dir and cleans
// them (filepath.Join / filepath.Clean): traffic.source.path (a trace),
// engine.perf.database (source aic), engine.model_config_dir, and
// engine.model and engine.system when they look like paths (LooksLikePath);
// a built-in model or system name is left alone. This is the one path rule:
// the Python compiler asks the core to apply it (pybind.Normalize with the
// config file's folder).
func (s *Spec) ResolvePaths(dir string) {
	abs := func(p string) string {
		if p == "" {
			return p
		}
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	switch t := s.Traffic.Source.Type.(type) {
	case MooncakeSource:
		t.Path = abs(t.Path)
		s.Traffic.Source.Type = t
	case AzureSource:
		t.Path = abs(t.Path)
		s.Traffic.Source.Type = t
	case LLMServingSimSource:
		t.Path = abs(t.Path)
		s.Traffic.Source.Type = t
	}
	if p, ok := s.Engine.Perf.Source.(AICPerf); ok {
		p.Database = abs(p.Database)
		s.Engine.Perf.Source = p
	}
	s.Engine.ModelConfigDir = abs(s.Engine.ModelConfigDir)
	if LooksLikePath(s.Engine.Model) {
		s.Engine.Model = abs(s.Engine.Model)
	}
	if LooksLikePath(s.Engine.System) {
		s.Engine.System = abs(s.Engine.System)
	}
}

// LooksLikePath tells a file path from a name in engine.model and
// engine.system: a path starts with "." or "/" or ends in .json, .yaml or .yml.
func LooksLikePath(s string) bool {
	return strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") ||
		strings.HasSuffix(s, ".json") || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}

// JSON is the canonical form of a spec: defaults filled, keys in struct order.
func (s *Spec) JSON() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("config: marshal of a decoded spec failed: " + err.Error())
	}
	return b
}

func fromRaw(raw any) (*Spec, error) {
	if raw == nil {
		return nil, &Error{Msg: "spec is empty"}
	}
	var s Spec
	seen := map[string]bool{}
	if err := decodeValue(raw, reflect.ValueOf(&s).Elem(), "", seen); err != nil {
		return nil, err
	}
	applyDefaults(&s, func(p string) bool { return seen[p] })
	// 0 means "not given" in the spec (vLLM's per-system default), so a 0
	// given is refused here, where it is still told from one left out
	sc := &s.Engine.Scheduler
	for _, f := range []struct {
		path string
		v    int
	}{{"engine.scheduler.max_num_seqs", sc.MaxNumSeqs}, {"engine.scheduler.max_num_batched_tokens", sc.MaxNumBatchedTokens}} {
		if seen[f.path] && f.v == 0 {
			return nil, checkInt(f.path, "Scheduler."+strings.TrimPrefix(f.path, "engine.scheduler."), 0)
		}
	}
	for _, pl := range s.Engine.Workers.pools() { // likewise a pool's own limits (Pool.Scheduler)
		if o := pl.pool.Scheduler; o != nil {
			for _, f := range []struct {
				key string
				v   int
			}{{"max_num_seqs", o.MaxNumSeqs}, {"max_num_batched_tokens", o.MaxNumBatchedTokens}} {
				if path := pl.path + ".scheduler." + f.key; seen[path] && f.v == 0 {
					return nil, checkInt(path, "PoolScheduler."+f.key, 0)
				}
			}
		}
	}
	if bw := "engine.workers.disaggregated.kv_transfer.bandwidth_gb_per_s"; seen[bw] && s.Engine.Workers.Disaggregated.KVTransfer.BandwidthGBPerS == 0 {
		return nil, checkFloat(bw, "KVTransfer.bandwidth_gb_per_s", 0) // left out: the system's network
	}
	if err := firstErr(s.Engine.refuseTRTLLMZeros(seen), s.Engine.refuseSGLangZeros(seen)); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, plainLengthField(err, seen)
	}
	return &s, nil
}

// plainLengthField names a length written as a plain integer (isl: 0) by its own
// field, not by the "value" of the fixed length it stands for, which the user never
// wrote (traffic.source.isl, not traffic.source.isl.value). A mapping's value
// ({kind: fixed} without it, or with value: 0) is still named as such.
func plainLengthField(err error, seen map[string]bool) error {
	e, ok := err.(*Error)
	if !ok || !strings.HasSuffix(e.Field, ".value") || seen[e.Field] {
		return err
	}
	parent := strings.TrimSuffix(e.Field, ".value")
	if !seen[parent] || seen[parent+".kind"] {
		return err
	}
	return &Error{Field: parent, Msg: e.Msg, Infeasible: e.Infeasible}
}

var lengthType = reflect.TypeOf(Length{})

// emptyOK lists the string fields where "" is a setting, not a mistake.
var emptyOK = map[string]bool{
	"engine.model_config_dir": true, // no folder: built-in models and paths only
}

// decodeValue stores raw (from encoding/json with UseNumber, or from yaml.v3)
// into v, strictly, recording every dotted path present in seen.
func decodeValue(raw any, v reflect.Value, path string, seen map[string]bool) error {
	if path != "" {
		seen[path] = true
	}
	if v.Kind() == reflect.Pointer {
		if raw == nil {
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := decodeValue(raw, p.Elem(), path, seen); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	if raw == nil && v.Kind() == reflect.Struct && v.Type() != lengthType && path != "" {
		// an optional block given as null is the block left out (README:
		// `null` for an optional block is the same as leaving it out), so
		// `--set engine.scheduler=null` drops a block the config wrote
		delete(seen, path)
		return nil
	}
	if raw == nil {
		return errorf(path, "must not be null")
	}
	if v.Type() == lengthType {
		if _, ok := raw.(map[string]any); !ok {
			i, err := toInt(raw, path)
			if err != nil {
				return errorf(path, "expected an integer or a mapping {kind, …}, got %s", describe(raw))
			}
			v.Set(reflect.ValueOf(Length{Kind: FixedLength{Value: i}}))
			return nil
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return errorf(path, "expected a mapping, got %s", describe(raw))
		}
		if b, ok := v.Addr().Interface().(unionBlock); ok {
			return decodeUnion(m, b, v, path, seen)
		}
		fields, names := fieldsOf(v.Type())
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic: the first bad key in sorted order is reported
		for _, k := range keys {
			i, ok := fields[k]
			if !ok {
				return unknownField(v.Type(), path, k, names)
			}
			if nullEnum(v.Type(), k, m[k]) {
				continue
			}
			if err := decodeValue(m[k], v.Field(i), join(path, k), seen); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			if isNumber(raw) { // backend_version: 0.10 is YAML's float 0.1
				return errorf(path, "expected a string, got %s (write it in quotes: unquoted, YAML reads 0.10 as the number 0.1)", describe(raw))
			}
			return errorf(path, "expected a string, got %s", describe(raw))
		}
		if s == "" && !emptyOK[path] {
			return errorf(path, "must not be empty (leave the field out for its default)")
		}
		if len(s) > MaxStringBytes {
			return errorf(path, "is %d bytes long, more than any name or path (at most %d)", len(s), MaxStringBytes)
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			return errorf(path, "expected true or false, got %s", describe(raw))
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		i, err := toInt(raw, path)
		if err != nil {
			return err
		}
		v.SetInt(int64(i))
	case reflect.Uint64:
		if u, ok := toUint64(raw); ok { // 2^63 … 2^64 − 1 (a seed) do not fit toInt
			v.SetUint(u)
			return nil
		}
		i, err := toInt(raw, path)
		if err != nil {
			return err
		}
		if i < 0 {
			return errorf(path, "must be ≥ 0, got %d", i)
		}
		v.SetUint(uint64(i))
	case reflect.Float64:
		f, err := toFloat(raw, path)
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case reflect.Slice:
		list, ok := raw.([]any)
		if !ok {
			return errorf(path, "expected a list, got %s", describe(raw))
		}
		out := reflect.MakeSlice(v.Type(), len(list), len(list))
		for i, x := range list {
			if err := decodeValue(x, out.Index(i), fmt.Sprintf("%s[%d]", path, i), seen); err != nil {
				return err
			}
		}
		v.Set(out)
	default:
		panic("config: unsupported field kind " + v.Kind().String() + " at " + path)
	}
	return nil
}

// nullEnum reports whether raw, the value of struct t's field key, is a null
// for an enumerated string (stringEnums): that is the field left out, as for
// an optional block (its default, or a required one's refusal; the schema
// takes the null: nullable).
func nullEnum(t reflect.Type, key string, raw any) bool { return raw == nil && isEnum(t, key) }

// isEnum reports whether struct t's field key is an enumerated string (stringEnums).
func isEnum(t reflect.Type, key string) bool {
	_, ok := stringEnums[t.Name()+"."+key]
	return ok
}

// nullField reports whether field f of struct t takes a null as the field left
// out: an optional block (a pointer, or a struct other than a length that is
// not required: decodeValue) or an enumerated string (nullEnum).
func nullField(t reflect.Type, f reflect.StructField) bool {
	name := strings.Split(f.Tag.Get("json"), ",")[0]
	return f.Type.Kind() == reflect.Pointer ||
		f.Type.Kind() == reflect.Struct && f.Type != lengthType && !strings.Contains(f.Tag.Get("spec"), "required") ||
		f.Type.Kind() == reflect.String && isEnum(t, name)
}

// quote is s Go-quoted for a message, cut to 64 bytes ("…" marks a cut), so
// that a huge value (a data file read as a config) cannot flood the message.
func quote(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:64]) + "…"
}

// clip is quote without the quotes, for a key inside a dotted path.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}

// cut is s cut to at most n bytes at a character boundary ("…" marks a cut).
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// isNumber reports whether raw is a number as the readers give one.
func isNumber(raw any) bool {
	switch raw.(type) {
	case json.Number, int, uint64, float64:
		return true
	}
	return false
}

func describe(raw any) string {
	switch x := raw.(type) {
	case string:
		return "the string " + quote(x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case json.Number:
		return "the number " + x.String()
	case int, uint64, float64:
		return fmt.Sprintf("the number %v", x)
	}
	return fmt.Sprintf("%T", raw)
}

func toFloat(raw any, path string) (float64, error) {
	var f float64
	switch x := raw.(type) {
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, errorf(path, "expected a number, got %s", x)
		}
	case int:
		f = float64(x)
	case float64:
		f = x
	default:
		return 0, errorf(path, "expected a number, got %s", describe(raw))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errorf(path, "must be a finite number, got %v", f)
	}
	return f, nil
}

// toUint64 reads a whole number in [0, 2^64 − 1] written as an integer.
func toUint64(raw any) (uint64, bool) {
	switch x := raw.(type) {
	case json.Number:
		u, err := strconv.ParseUint(x.String(), 10, 64)
		return u, err == nil
	case uint64: // yaml.v3 gives uint64 for integers above 2^63 − 1
		return x, true
	}
	return 0, false
}

func toInt(raw any, path string) (int, error) {
	switch x := raw.(type) {
	case json.Number:
		i, err := x.Int64()
		if err == nil {
			return int(i), nil
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errorf(path, "the integer %s is out of range (at most 2^63 − 1)", clip(x.String()))
		}
		// 1e5 or 2.0: a whole number written as a float is that integer
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int(f), nil
		}
	case int:
		return x, nil
	case uint64:
		return 0, errorf(path, "the integer %d is out of range (at most 2^63 − 1)", x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), nil
		}
	default:
		return 0, errorf(path, "expected an integer, got %s", describe(raw))
	}
	return 0, errorf(path, "expected an integer, got %s", describe(raw))
}

package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeYAML: any text given as a YAML spec decodes to a spec whose
// canonical JSON decodes again to the same JSON, or to a *config.Error whose
// message stays short (a value is quoted in at most 64 bytes); never a panic.
func FuzzDecodeYAML(f *testing.F) {
	for _, s := range []string{
		minimal,
		// an alias bomb of ~300 bytes (9^8 values expanded)
		"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nengine: *e\n",
		"engine: " + strings.Repeat("[", 200) + strings.Repeat("]", 200),
		"engine: " + strings.Repeat("{a: ", 200) + "1" + strings.Repeat("}", 200),
		"execution: {seed: " + strings.Repeat("9", 200) + "}",
		"execution: {seed: 18446744073709551616, max_memory_gb: 1e-300}",
		"engine: {model: m, system: s, scheduler: {gpu_memory_utilization: 1.0e-9, max_model_len: 4611686018427387904}}",
		"traffic: {source: {type: synthetic, num_requests: 1, isl: 1, osl: 1}, load: {mode: rate, rate_rps: 1, arrival: gamma, cv: 1.0e-200}}",
		"engine: {model: m, system: s, perf: {source: linear, base_ms: 1e9, per_prefill_token_ms: 1e5, per_decode_seq_ms: 1e5}}",
		"engine: {model: m, system: s, perf: {source: roofline, compute_efficiency: 1.0e-300}}",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n",
		"\x00\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := DecodeYAML([]byte(text))
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("not a *config.Error: %T %v", err, err)
			}
			if len(ce.Msg) > 2000 {
				t.Fatalf("a %d-byte message: %.200s…", len(ce.Msg), ce.Msg)
			}
			return
		}
		again, err := Decode(s.JSON())
		if err != nil {
			t.Fatalf("the canonical spec does not decode: %v", err)
		}
		if string(again.JSON()) != string(s.JSON()) {
			t.Fatalf("the canonical spec changes when decoded again")
		}
	})
}

// A YAML syntax error quoting a deeply nested map key whole is cut to 200
// bytes of yaml.v3's words after the prefix (30 levels: 918 bytes before).
func TestYAMLErrorIsCut(t *testing.T) {
	text := "engine: {" + strings.Repeat("{a: ", 30) + "1" + strings.Repeat("}", 30) + ": 1}\n" // a map as a key
	_, err := DecodeYAML([]byte(text))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a *config.Error: %v", err)
	}
	if !strings.HasPrefix(ce.Msg, "spec is not valid YAML: yaml: ") || len(ce.Msg) > len("spec is not valid YAML: ")+200+len("…") {
		t.Fatalf("message of %d bytes: %.300s", len(ce.Msg), ce.Msg)
	}
}

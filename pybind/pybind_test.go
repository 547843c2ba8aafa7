package pybind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envelope(t *testing.T, s string) map[string]map[string]any {
	t.Helper()
	var out map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &out), s)
	require.Len(t, out, 1, "an envelope has exactly one member")
	return out
}

// A panic in the core becomes an error envelope, never a crash of the caller.
func TestGuardRecoversPanics(t *testing.T) {
	e := envelope(t, guard(func() string { panic("boom") }))
	assert.Equal(t, "panic", e["error"]["kind"])
	assert.Contains(t, e["error"]["message"], "boom")
}

func TestErrorKinds(t *testing.T) {
	e := envelope(t, Normalize(`{"engine": {"model": "m", "system": "h100_sxm", "bogus": 1}}`))
	assert.Equal(t, "config", e["error"]["kind"])
	assert.Equal(t, "engine.bogus", e["error"]["field"])

	e = envelope(t, Run(`not json`))
	assert.Equal(t, "config", e["error"]["kind"])

	trace := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 5, "output_length": 1}
{"timestamp": 1, "input_length": 5}
`), 0o644))
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm"},
	  "traffic": {"source": {"type": "mooncake", "path": "` + trace + `"}, "load": {"mode": "trace"}}}`
	e = envelope(t, Run(spec))
	assert.Equal(t, "data", e["error"]["kind"])
	assert.Equal(t, trace, e["error"]["file"])
	assert.Equal(t, 2.0, e["error"]["line"])
	assert.Equal(t, "output_length", e["error"]["field"])
}

// RunColumnar writes the columns to the given file and describes them.
func TestRunColumnar(t *testing.T) {
	data := filepath.Join(t.TempDir(), "cols")
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
	  "perf": {"source": "linear", "base_ms": 2, "per_prefill_token_ms": 0.01, "per_decode_seq_ms": 0.1}},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 3, "isl": 100, "osl": 2},
	  "load": {"mode": "concurrency", "concurrency": 1}}}`
	e := envelope(t, RunColumnar(spec, data))
	cols := e["report"]["columns"].(map[string]any)
	assert.Equal(t, 3.0, cols["n"])
	b, err := os.ReadFile(data)
	require.NoError(t, err)
	assert.NotEmpty(t, b)
	assert.Equal(t, 3.0, e["report"]["summary"].(map[string]any)["completed"])
}

// The JSON entry point never panics past guard and always answers an envelope.
func FuzzNormalize(f *testing.F) {
	f.Add(`{"engine": {"model": "m", "system": "h100_sxm"}}`)
	f.Add(`{"traffic": {"source": {"isl": {"kind": "normal", "mean": 1e308}}}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, spec string) {
		var out map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(Normalize(spec)), &out))
		require.Len(t, out, 1)
	})
}

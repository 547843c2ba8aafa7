package pybind

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/report"
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
	e := envelope(t, guard(func() string { panic("boom\nsecond line") }))
	assert.Equal(t, "panic", e["error"]["kind"])
	// one line for the user; the Go stack apart, for the bug report
	assert.Equal(t, "aisimulate core panic: boom second line", e["error"]["message"])
	assert.Contains(t, e["error"]["detail"], "goroutine ")
	assert.Contains(t, e["error"]["detail"], "TestGuardRecoversPanics")
}

// A message quoting a huge value is cut to 4 KiB, saying how much was cut.
func TestErrorMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6,000 bytes
	got := clipMessage(long)
	// 4096 is a rune boundary (é is 2 bytes): 2,048 é kept, 6,000 − 4,096 = 1,904 bytes cut
	assert.Equal(t, strings.Repeat("é", 2048)+"… (1904 more bytes)", got)
	assert.Equal(t, "short", clipMessage("short"))

	e := envelope(t, Normalize(`{"engine": {"model": "`+strings.Repeat("m", 1_000_000)+`", "system": "h100_sxm"}}`, "/"))
	assert.Equal(t, "engine.model", e["error"]["field"])
	assert.Equal(t, "engine.model: is 1000000 bytes long, more than any name or path (at most 4096)", e["error"]["message"])
}

func TestErrorKinds(t *testing.T) {
	e := envelope(t, Normalize(`{"engine": {"model": "m", "system": "h100_sxm", "bogus": 1}}`, "/"))
	assert.Equal(t, "config", e["error"]["kind"])
	assert.Equal(t, "engine.bogus", e["error"]["field"])

	e = envelope(t, Run(`not json`))
	assert.Equal(t, "config", e["error"]["kind"])
	assert.NotContains(t, e["error"], "infeasible")

	// Llama-3.1-70B bf16 (≈ 131 GiB of weights) on one 80 GiB H100: a valid spec
	// whose deployment cannot start.
	e = envelope(t, Run(`{"engine": {"model": "meta-llama/Llama-3.1-70B-Instruct", "system": "h100_sxm"},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 8, "osl": 2},
	    "load": {"mode": "concurrency", "concurrency": 1}}}`))
	assert.Equal(t, "config", e["error"]["kind"])
	assert.Equal(t, "engine.workers.aggregated.tp", e["error"]["field"])
	assert.Equal(t, true, e["error"]["infeasible"])

	trace := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 5, "output_length": 1}
{"timestamp": 1, "input_length": 5}
`), 0o644))
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "workers": {"aggregated": {"tp": 2}}},
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
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "workers": {"aggregated": {"tp": 2}},
	  "perf": {"source": "linear", "base_ms": 2, "per_prefill_token_ms": 0.01, "per_decode_seq_ms": 0.1}},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 3, "isl": 100, "osl": 2},
	  "load": {"mode": "concurrency", "concurrency": 1}}}`
	var out struct {
		Report struct {
			Columns report.Columnar `json:"columns"`
			Summary report.Summary  `json:"summary"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(RunColumnar(spec, data)), &out))
	assert.Equal(t, 3, out.Report.Columns.N)
	b, err := os.ReadFile(data)
	require.NoError(t, err)
	assert.NotEmpty(t, b)
	assert.Equal(t, 3, out.Report.Summary.Completed)
}

// The JSON entry point never panics past guard and always answers an envelope.
func FuzzNormalize(f *testing.F) {
	f.Add(`{"engine": {"model": "m", "system": "h100_sxm"}}`)
	f.Add(`{"traffic": {"source": {"isl": {"kind": "normal", "mean": 1e308}}}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, spec string) {
		var out map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(Normalize(spec, "/data")), &out))
		require.Len(t, out, 1)
	})
}

// Check builds the deployment without replaying: the metadata of what would
// run, or the error a replay would give for the same spec.
func TestCheck(t *testing.T) {
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "scheduler": {"num_gpu_blocks": 100, "max_model_len": 1600},
	  "workers": {"aggregated": {"count": 3}}},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 1000000, "isl": 10, "osl": 2},
	  "load": {"mode": "concurrency", "concurrency": 1}}}`
	var checked struct {
		Check struct {
			Metadata report.Metadata `json:"metadata"`
		} `json:"check"`
	}
	require.NoError(t, json.Unmarshal([]byte(Check(spec, "{}")), &checked))
	meta := checked.Check.Metadata
	require.NotNil(t, meta.Workers)
	require.NotNil(t, meta.NumGPUBlocks)
	assert.Equal(t, 3, *meta.Workers)
	assert.Equal(t, 100, *meta.NumGPUBlocks)
	e := envelope(t, Check(`{"engine": {"model": "nobody/None", "system": "h100_sxm"},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 10, "osl": 2}, "load": {"mode": "concurrency", "concurrency": 1}}}`, "{}"))
	assert.Equal(t, "config", e["error"]["kind"])
	assert.Equal(t, "engine.model", e["error"]["field"])
	// a billion requests would need ~640 GB: Check says so before anything runs
	e = envelope(t, Check(strings.Replace(spec, `"num_requests": 1000000,`, `"num_requests": 1000000000,`, 1), "{}"))
	assert.Equal(t, "execution.max_memory_gb", e["error"]["field"])
	e = envelope(t, Check(spec, `{"run": "1"}`))
	assert.Equal(t, "simulation", e["error"]["kind"])
	assert.Contains(t, e["error"]["message"], `check options: json: unknown field "run"`)
}

// A check whose run is stopped reports "interrupted" (Python: KeyboardInterrupt).
func TestCheckStopped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"timestamp": 0, "input_length": 5, "output_length": 2}`+"\n"), 0o644))
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "scheduler": {"num_gpu_blocks": 100, "max_model_len": 1600}},
	  "traffic": {"source": {"type": "mooncake", "path": "` + path + `"}, "load": {"mode": "trace"}}}`
	id := NewRun()
	defer Forget(id)
	require.Contains(t, Check(spec, `{"run_id": "`+id+`"}`), `"check"`)
	Stop(id)
	e := envelope(t, Check(spec, `{"run_id": "`+id+`"}`))
	assert.Equal(t, "interrupted", e["error"]["kind"])
}

// Estimate prices a spec without running it (numbers: core/replay memory tests).
func TestEstimate(t *testing.T) {
	e := envelope(t, Estimate(`{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "scheduler": {"num_gpu_blocks": 100, "max_model_len": 1600}},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 1000, "isl": 10, "osl": 2},
	  "load": {"mode": "concurrency", "concurrency": 4}}, "execution": {"max_memory_gb": 1}}`))
	assert.Equal(t, 1000.0, e["estimate"]["requests"])
	assert.Equal(t, 4.0, e["estimate"]["in_flight"])
	assert.Equal(t, 1e9, e["estimate"]["budget_bytes"])
}

// Catalogue lists the built-ins, then each folder's entries sorted by name; a
// name found twice is listed once, from the first folder (where a replay
// finds it); a missing folder is reported in errors, not fatal.
func TestCatalogue(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	cfg := `{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "hidden_size": 64,
		"num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512}`
	for _, f := range []string{filepath.Join(a, "z--M_config.json"), filepath.Join(a, "b--M_config.json"),
		filepath.Join(b, "z--M_config.json"), filepath.Join(b, "c--M_config.json"),
		filepath.Join(b, "Qwen--Qwen3-8B_config.json")} {
		require.NoError(t, os.WriteFile(f, []byte(cfg), 0o644))
	}
	req, _ := json.Marshal(map[string]any{"model_config_dirs": []string{a, "/nonexistent", b}})
	e := envelope(t, Catalogue(string(req)))
	cat := e["catalogue"]
	var names, sources []string
	for _, m := range cat["models"].([]any) {
		names = append(names, m.(map[string]any)["name"].(string))
		sources = append(sources, m.(map[string]any)["source"].(string))
	}
	assert.Equal(t, []string{"Qwen/Qwen3-32B", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B-Instruct",
		"meta-llama/Llama-3.1-8B-Instruct", "b/M", "z/M", "c/M"}, names)
	assert.Equal(t, filepath.Join(a, "z--M_config.json"), sources[5])
	assert.Len(t, cat["systems"], len(hardware.BuiltinNames()))
	assert.Equal(t, []any{"/nonexistent: open /nonexistent: no such file or directory"}, cat["errors"])
	e = envelope(t, Catalogue(`[`))
	assert.Equal(t, "config", e["error"]["kind"])
}

// Normalize resolves relative paths against the folder it is given; Enums
// lists the allowed values of the enumerated fields.
func TestNormalizeResolvesPathsAndEnums(t *testing.T) {
	e := envelope(t, Normalize(`{"engine": {"model": "m", "system": "sys.yaml", "perf": {"source": "aic", "database": "tables"}},
	  "traffic": {"source": {"type": "mooncake", "path": "../t.jsonl"}, "load": {"mode": "trace"}}}`, "/data/configs"))
	engine := e["spec"]["engine"].(map[string]any)
	assert.Equal(t, "m", engine["model"])
	assert.Equal(t, "/data/configs/sys.yaml", engine["system"])
	assert.Equal(t, "/data/configs/tables", engine["perf"].(map[string]any)["database"])
	assert.Equal(t, "/data/t.jsonl", e["spec"]["traffic"].(map[string]any)["source"].(map[string]any)["path"])

	var enums map[string]map[string][]string
	require.NoError(t, json.Unmarshal([]byte(Enums("")), &enums))
	assert.Equal(t, []string{"mooncake", "azure", "llmservingsim", "synthetic", "sessions"}, enums["enums"]["traffic.source.type"])
}

// Normalize fills max_num_seqs and max_num_batched_tokens as vLLM derives them
// for the system: 1024 and 8192 on an H100 (80 GiB), 256 and
// 2048 on an A100 (80 GiB, but an A100) and an L40S (46,068 MiB); a given
// value is kept; a system that does not read leaves them out (the replay
// names engine.system).
func TestNormalizeFillsSchedulerDefaultsPerSystem(t *testing.T) {
	sched := func(system, scheduler string) map[string]any {
		e := envelope(t, Normalize(`{"engine": {"model": "m", "system": "`+system+`"`+scheduler+`},
		  "traffic": {"source": {"type": "mooncake", "path": "/t.jsonl"}, "load": {"mode": "trace"}}}`, "/"))
		require.Contains(t, e, "spec")
		return e["spec"]["engine"].(map[string]any)["scheduler"].(map[string]any)
	}
	pair := func(sc map[string]any) [2]any { return [2]any{sc["max_num_seqs"], sc["max_num_batched_tokens"]} }
	assert.Equal(t, [2]any{1024.0, 8192.0}, pair(sched("h100_sxm", "")))
	assert.Equal(t, [2]any{256.0, 2048.0}, pair(sched("a100_sxm", "")))
	assert.Equal(t, [2]any{256.0, 2048.0}, pair(sched("l40s", "")))
	assert.Equal(t, [2]any{64.0, 8192.0}, pair(sched("h100_sxm", `, "scheduler": {"max_num_seqs": 64}`)))
	assert.Equal(t, [2]any{nil, nil}, pair(sched("/nowhere/sys.yaml", "")))

	e := envelope(t, Normalize(`{"engine": {"model": "m", "system": "a100_sxm", "scheduler": {"max_num_seqs": 4096}},
	  "traffic": {"source": {"type": "mooncake", "path": "/t.jsonl"}, "load": {"mode": "trace"}}}`, "/"))
	assert.Equal(t, "engine.scheduler.max_num_batched_tokens", e["error"]["field"])
}

// A run reports its progress to Progress and stops on Stop: stopped before it
// starts, Replay answers an "interrupted" envelope at once; run to its end,
// Progress shows every request sent and finished.
func TestRunControl(t *testing.T) {
	spec := `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "scheduler": {"max_model_len": 4096},
	  "perf": {"source": "linear", "base_ms": 2, "per_prefill_token_ms": 0.01, "per_decode_seq_ms": 0.1}},
	  "traffic": {"source": {"type": "synthetic", "num_requests": 50, "isl": 100, "osl": 2},
	  "load": {"mode": "concurrency", "concurrency": 2}}}`
	data := filepath.Join(t.TempDir(), "cols")

	id := NewRun()
	Stop(id)
	e := envelope(t, Replay(spec, `{"run_id": "`+id+`"}`, data))
	assert.Equal(t, "interrupted", e["error"]["kind"])
	assert.Contains(t, e["error"]["message"], "replay stopped")
	Forget(id)
	assert.Equal(t, `{"progress":null}`, Progress(id))

	id = NewRun()
	defer Forget(id)
	p := envelope(t, Progress(id))["progress"]
	assert.Equal(t, false, p["started"])
	e = envelope(t, Replay(spec, `{"run_id": "`+id+`"}`, data))
	require.Contains(t, e, "report")
	p = envelope(t, Progress(id))["progress"]
	assert.Equal(t, true, p["ended"])
	assert.Equal(t, 50.0, p["sent"])
	assert.Equal(t, 50.0, p["finished"])
	assert.Equal(t, 50.0, p["expected"])

	e = envelope(t, Replay(spec, `{"bogus": 1}`, data))
	assert.Contains(t, e["error"]["message"], "replay options")
}

// BinaryKind names a head given in hexadecimal as the trace readers do, and
// refuses bad hex or a head longer than BinaryKindHeadBytes.
func TestBinaryKind(t *testing.T) {
	assert.JSONEq(t, `{"binary": {"kind": "gzip-compressed"}}`, BinaryKind("1f8b0800"))
	assert.JSONEq(t, `{"binary": {"kind": ""}}`, BinaryKind(hex.EncodeToString([]byte(`{"timestamp": 0}`))))
	assert.JSONEq(t, `{"binary": {"kind": "xz-compressed"}}`, BinaryKind(hex.EncodeToString([]byte("\xfd7zXZ\x00"))))
	for _, bad := range []string{"1f8", "zz", strings.Repeat("00", BinaryKindHeadBytes+1)} {
		assert.Contains(t, BinaryKind(bad), `"kind":"config"`, bad)
		assert.Contains(t, BinaryKind(bad), `"field":"head"`, bad)
	}
}

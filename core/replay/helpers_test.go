package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// linearEngine is the engine of the worked examples (docs/design.md): pass ms = 2.0 +
// 0.01 × prompt tokens computed + 0.1 × decoding requests, with a KV cache of
// %d blocks and a max_model_len of %d tokens (use linearEngineFor).
const linearEngine = `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  scheduler: {max_num_batched_tokens: 512, max_num_seqs: 4, block_size: 16, enable_prefix_caching: true, num_gpu_blocks: %d, max_model_len: %d}
`

// linearEngineFor is linearEngine with a cache of blocks and the largest
// max_model_len it holds (16 tokens a block), at most the model's 40,960:
// the start-up check refuses a cache that cannot hold one max_model_len request.
func linearEngineFor(blocks int) string {
	return fmt.Sprintf(linearEngine, blocks, min(16*blocks, 40960))
}

// traceRow is one Mooncake JSONL row.
type traceRow struct {
	ts      float64
	in, out int
	hashes  []int
}

func writeTrace(t *testing.T, rows []traceRow) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		ids := make([]string, len(r.hashes))
		for i, h := range r.hashes {
			ids[i] = fmt.Sprint(h)
		}
		fmt.Fprintf(&b, `{"timestamp": %v, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
			r.ts, r.in, r.out, strings.Join(ids, ", "))
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// runYAML decodes a YAML spec and replays it.
func runYAML(t *testing.T, yml string) *report.Report {
	t.Helper()
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	rep, err := Run(s)
	require.NoError(t, err)
	return rep
}

// frontEndCase is one layout of a front-end worked example: the workers
// (engine.workers.aggregated) and each request's times (ms): reaching its
// engine, first token, end.
type frontEndCase struct {
	workers string
	want    [][3]float64
}

// checkFrontEnd replays spec(workers) for each case; every request must
// complete at its times.
func checkFrontEnd(t *testing.T, spec func(workers string) string, cases []frontEndCase) {
	t.Helper()
	for _, tc := range cases {
		rep := runYAML(t, spec(tc.workers))
		require.Len(t, rep.Records, len(tc.want))
		for i, want := range tc.want {
			r := rep.Records[i]
			assert.Equal(t, report.StatusCompleted, r.Status)
			assert.InDelta(t, want[0], msOf(r.ArrivalNs), 1e-9, "%s: request %d reaches its engine", tc.workers, i)
			assert.InDelta(t, want[1], msOf(r.FirstTokenNs), 1e-9, "%s: request %d first token", tc.workers, i)
			assert.InDelta(t, want[2], msOf(r.EndNs), 1e-9, "%s: request %d end", tc.workers, i)
		}
	}
}

// configErrorOf decodes and runs yml, which must fail with a *config.Error
// at field whose message contains msg.
func configErrorOf(t *testing.T, yml, field, msg string) {
	t.Helper()
	s, err := config.DecodeYAML([]byte(yml))
	if err == nil {
		_, err = Run(s)
	}
	var ce *config.Error
	require.True(t, errors.As(err, &ce), "%s: %v", field, err)
	assert.Equal(t, field, ce.Field)
	assert.Contains(t, ce.Msg, msg)
}

// traceSpec is the linear engine replaying rows in trace mode.
func traceSpec(t *testing.T, blocks int, rows []traceRow, extra string) string {
	return linearEngineFor(blocks) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
%s`, writeTrace(t, rows), extra)
}

// msOf converts a report time back to ms with nanosecond exactness.
func msOf(ns int64) float64 { return float64(ns) / 1e6 }

func replaceOnce(s, old, new string) string {
	i := strings.Index(s, old)
	if i < 0 {
		panic("replaceOnce: " + old + " not found")
	}
	return s[:i] + new + s[i+len(old):]
}

func writeRaw(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// sharedAIC is ../shared/data/aic beside the checkout (model configs and the
// perf tables); the test is skipped when its tables are absent.
func sharedAIC(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	shared := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "aic")
	if _, err := os.Stat(filepath.Join(shared, "systems", "data")); err != nil {
		t.Skip("shared perf tables not found")
	}
	return shared
}

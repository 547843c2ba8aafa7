package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// sglangLinear is an SGLang server pricing every pass at 10 ms, its token
// pool capped by max_total_tokens; extra goes into engine.sglang.
func sglangLinear(trace, extra string) string {
	return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  backend: sglang
  perf: {source: linear, base_ms: 10, per_prefill_token_ms: 0, per_decode_seq_ms: 0}
  sglang: {max_total_tokens: 4096%s}
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, extra, trace)
}

// The overlap scheduler (SGLang's default: event_loop_overlap forms pass n+1
// while pass n runs, and takes new requests only between passes): R1 (t = 0)
// prefills over [0, 10); R2 arrives at 5 ms, during it, and misses pass 2
// (R1's decode, formed at 10 before R2 is received), so it prefills in pass
// 3 over [20, 30): TTFT 25 ms. With --disable-overlap-schedule it joins the
// queue at once and prefills in pass 2 (prefill first) over [10, 20): 15 ms.
func TestSGLangOverlapScheduledStep(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 3}, {ts: 5, in: 100, out: 2}})
	for _, tc := range []struct {
		extra string
		ttft  float64
	}{{"", 25}, {", disable_overlap_schedule: true", 15}} {
		rep := runYAML(t, sglangLinear(trace, tc.extra))
		r2 := rep.Records[1]
		require.Equal(t, report.StatusCompleted, r2.Status)
		assert.InDelta(t, tc.ttft, float64(r2.FirstTokenNs-r2.SendNs)/1e6, 1e-9, "sglang%s", tc.extra)
	}
}

// The report carries the resolved server arguments and the engine's
// cached_tokens: a second request of the same 600 tokens (two 512-token
// ids, the second partly) after the first finished finds 599 of them in the
// radix tree, token by token (all but the last, which it computes to
// sample); vLLM's 16-token blocks would give 592.
func TestSGLangReportsItsArgsAndCachedTokens(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 600, out: 2, hashes: []int{1, 2}}, {ts: 1000, in: 600, out: 2, hashes: []int{1, 2}}})
	rep := runYAML(t, sglangLinear(trace, ""))
	assert.Equal(t, 599, rep.Records[1].CachedTokens)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, 4096, args["max_total_num_tokens"])
	assert.Equal(t, true, args["radix_cache"])
	assert.Equal(t, "0.5.9", args["release"])
	// a given release: SGLang's, with none of vLLM's notes on it
	rep = runYAML(t, strings.Replace(sglangLinear(trace, ""), "backend: sglang", "backend: sglang\n  backend_version: 0.5.6.post2", 1))
	require.NotNil(t, rep.Metadata.BackendVersion)
	assert.Equal(t, "0.5.6", rep.Metadata.BackendVersion.Release)
	for _, n := range rep.Metadata.BackendVersion.Notes {
		assert.NotContains(t, n, "vLLM")
	}
	assert.Equal(t, "0.5.6", rep.Metadata.Pools[0].EngineArgs["release"])
}

// P/D with SGLang servers: a prompt prefills over [0, 10) on the prefill
// server, its KV moves in 1 ms (latency; the bandwidth makes the bytes
// negligible), and the decode server's first pass, formed when it arrives,
// samples token 1 ten ms later: TTFT 21 ms; each later token 10 ms more.
func TestSGLangDisaggregated(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 3}})
	yml := replaceOnce(sglangLinear(trace, ""), "  sglang:", `  workers:
    disaggregated:
      prefill: {count: 1, tp: 1}
      decode: {count: 1, tp: 1}
      kv_transfer: {bandwidth_gb_per_s: 1000000, latency_ms: 1}
  sglang:`)
	rep := runYAML(t, yml)
	r := rep.Records[0]
	require.Equal(t, report.StatusCompleted, r.Status)
	assert.InDelta(t, 21, float64(r.FirstTokenNs-r.SendNs)/1e6, 0.01)
	assert.InDelta(t, 41, float64(r.EndNs-r.SendNs)/1e6, 0.01)
	assert.Equal(t, false, rep.Metadata.Pools[1].EngineArgs["radix_cache"], "a decode server runs SGLang's ChunkCache")
}

// A Mooncake session in deltas_without_responses mode under SGLang: turn 1's
// prompt is turn 0's 40 tokens, the 20 received and its own 30 (90); the
// tree holds turn 0's 59 tokens of KV (prompt and reply but its last), of
// which turn 1 finds the conversation's 3 full 16-token hash blocks (48): the
// pieces' hashes name whole blocks, so the 11 tokens after them, the same in
// both turns, are not matched (SGLang's token-level match would find 59).
func TestSGLangDeltas(t *testing.T) {
	path := writeRaw(t, `{"session_id": 7, "timestamp": 0, "input_length": 40, "output_length": 20, "hash_ids": [1, 2, 3]}
{"session_id": 7, "delay": 0, "input_length": 30, "output_length": 2, "hash_ids": [4, 5]}
`)
	rep := runYAML(t, fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  backend: sglang
  perf: {source: linear, base_ms: 10, per_prefill_token_ms: 0, per_decode_seq_ms: 0}
  sglang: {max_total_tokens: 4096}
traffic:
  source: {type: mooncake, path: %s, isl_block_size: 16, context_mode: deltas_without_responses}
  load: {mode: trace}
`, path))
	for _, r := range rep.Records {
		require.Equal(t, report.StatusCompleted, r.Status)
	}
	assert.Equal(t, 90, rep.Records[1].InputTokens)
	assert.Equal(t, 48, rep.Records[1].CachedTokens)
}

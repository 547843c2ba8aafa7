package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Async scheduling (engine.scheduler.async_scheduling), with the linear engine
// of helpers_test.go (pass ms = 2.0 + 0.01 × prompt tokens + 0.1 × decodes).
// A (100 in, 3 out) is sent at 0 to an idle worker; B (50 in, 2 out) at 1 ms,
// during A's prefill.
//
//	sync:  pass 1 [0, 3.0] A prefill (2 + 1.0); pass 2 [3.0, 5.6] A decode + B
//	       prefill (2 + 0.1 + 0.5); pass 3 [5.6, 7.8] both decode (2 + 0.2).
//	       B: TTFT 5.6 − 1 = 4.6 ms, E2E 7.8 − 1 = 6.8 ms.
//	async: pass 2 was formed at 3.0 before B could join it: [3.0, 5.1] A decode
//	       alone (2.1); pass 3 [5.1, 7.7] A's last decode + B prefill (2.6);
//	       pass 4 [7.7, 9.8] B decode (2.1). B: TTFT 7.7 − 1 = 6.7 ms, E2E 8.8 ms.
//
// A reached an idle worker, so its TTFT is 3.0 ms either way.
func TestAsyncSchedulingJoinsThePassAfterNext(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 100, out: 3, hashes: []int{1}}, {ts: 1, in: 50, out: 2, hashes: []int{2}}}
	for _, tc := range []struct {
		name             string
		sched            string
		bTTFT, bE2E, aE2 float64
	}{
		{"sync", "", 4.6, 6.8, 7.8},
		{"async", "async_scheduling: true, ", 6.7, 8.8, 7.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yml := replaceOnce(traceSpec(t, 100, rows, ""), "scheduler: {", "scheduler: {"+tc.sched)
			rep := runYAML(t, yml)
			require.Equal(t, 2, rep.Summary.Completed)
			a, b := rep.Records[0], rep.Records[1]
			ttftA, _ := a.TTFT()
			ttftB, _ := b.TTFT()
			assert.InDelta(t, 3.0, ttftA, 1e-9)
			assert.InDelta(t, tc.aE2, a.E2E(), 1e-9)
			assert.InDelta(t, tc.bTTFT, ttftB, 1e-9)
			assert.InDelta(t, tc.bE2E, b.E2E(), 1e-9)
		})
	}
}

// A request held while the pass that was running ends with nothing left to
// run joins the next pass at once (vLLM's engine then has no batch in flight):
// A (100 in, 1 out) finishes with its prefill at 3.0; B, sent at 1 ms, runs in
// [3.0, 5.5] (2 + 0.5): TTFT 4.5 ms with or without async scheduling.
func TestAsyncSchedulingIdleAfterPassRunsHeldAtOnce(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 100, out: 1, hashes: []int{1}}, {ts: 1, in: 50, out: 1, hashes: []int{2}}}
	for _, sched := range []string{"", "async_scheduling: true, "} {
		rep := runYAML(t, replaceOnce(traceSpec(t, 100, rows, ""), "scheduler: {", "scheduler: {"+sched))
		ttft, ok := rep.Records[1].TTFT()
		require.True(t, ok)
		assert.InDelta(t, 4.5, ttft, 1e-9, sched)
	}
}

// A request canceled by the client while it waits in the inbox never reaches
// the engine. With request_timeout_ms 1.5, A (sent at 0) is canceled at 1.5 ms
// and B (sent at 1 ms, held during A's prefill pass [0, 3.0]) at 2.5 ms; the
// pass still runs to 3.0, and no pass follows: B is skipped when the inbox is
// flushed, so the worker ran exactly one pass.
func TestAsyncSchedulingCanceledInInbox(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 100, out: 3, hashes: []int{1}}, {ts: 1, in: 50, out: 2, hashes: []int{2}}}
	yml := replaceOnce(traceSpec(t, 100, rows, ""), "scheduler: {", "scheduler: {async_scheduling: true, ")
	yml = replaceOnce(yml, "load: {mode: trace}", "load: {mode: trace, request_timeout_ms: 1.5}")
	rep := runYAML(t, yml)
	assert.Equal(t, "canceled", rep.Records[0].Status)
	assert.Equal(t, "canceled", rep.Records[1].Status)
	assert.Equal(t, []int64{1}, rep.Metadata.WorkerPasses)
}

// An LLMServingSim workload (token ids per prompt) replayed in trace mode with
// the linear engine: B shares A's first 35 tokens, so its two full 16-token
// blocks (32 tokens) are cached when it arrives at 100 ms (A ended at 4.5 ms:
// prefill 2 + 0.40, one decode 2.1); C shares 20 tokens, one block. Each then
// computes only its last 5 tokens: TTFT 2 + 0.05 = 2.05 ms.
func TestLLMServingSimWorkloadHitsThePrefixCache(t *testing.T) {
	ids := func(from, to int, tail ...int) string {
		s := "["
		for i := from; i <= to; i++ {
			s += fmt.Sprint(i) + ","
		}
		for _, x := range tail {
			s += fmt.Sprint(x) + ","
		}
		return s[:len(s)-1] + "]"
	}
	path := writeRaw(t, `{"input_toks": 40, "output_toks": 2, "arrival_time_ns": 0, "input_tok_ids": `+ids(1, 40)+`}
{"input_toks": 37, "output_toks": 2, "arrival_time_ns": 100000000, "input_tok_ids": `+ids(1, 35, 99, 99)+`}
{"input_toks": 21, "output_toks": 2, "arrival_time_ns": 200000000, "input_tok_ids": `+ids(1, 20, 7)+`}
`)
	yml := linearEngineFor(100) + fmt.Sprintf(`
traffic:
  source: {type: llmservingsim, path: %s}
  load: {mode: trace}
`, path)
	rep := runYAML(t, yml)
	require.Equal(t, 3, rep.Summary.Completed)
	assert.Equal(t, []int{0, 32, 16}, []int{rep.Records[0].CachedTokens, rep.Records[1].CachedTokens, rep.Records[2].CachedTokens})
	for i, want := range []float64{2.4, 2.05, 2.05} {
		ttft, _ := rep.Records[i].TTFT()
		assert.InDelta(t, want, ttft, 1e-9, "request %d", i)
	}
}

// engine.backend_version 0.15.1 alone gives that release's async scheduling
// (the async timings above), 0.13.0 the synchronous ones; the metadata says
// which release applied.
func TestBackendVersionSetsAsyncScheduling(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 100, out: 3, hashes: []int{1}}, {ts: 1, in: 50, out: 2, hashes: []int{2}}}
	for _, tc := range []struct {
		version, release string
		bTTFT            float64
	}{{"0.15.1", "0.15.1", 6.7}, {"0.13.0", "0.13.0", 4.6}, {"v0.14.0rc1", "0.14.0", 6.7}} {
		yml := replaceOnce(traceSpec(t, 100, rows, ""), "system: h100_sxm", "system: h100_sxm\n  backend_version: "+tc.version)
		rep := runYAML(t, yml)
		ttftB, _ := rep.Records[1].TTFT()
		assert.InDelta(t, tc.bTTFT, ttftB, 1e-9, tc.version)
		require.NotNil(t, rep.Metadata.BackendVersion, tc.version)
		assert.Equal(t, tc.release, rep.Metadata.BackendVersion.Release)
		assert.Equal(t, tc.version, rep.Metadata.BackendVersion.Given)
	}
}

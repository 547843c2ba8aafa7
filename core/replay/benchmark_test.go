package replay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vLLM's benchmark as InferenceX runs it (tool vllm_bench_serve, variant
// inferencex), on the linear engine of helpers_test.go (pass ms = 2.0 + 0.01
// × prompt tokens computed + 0.1 × decodes), every length fixed (100 in, 2
// out), max_concurrency 2, 4 prompts, 2 warm-ups:
//
//	warm-up: both copies of prompt 0 at 0, in one pass (the second finds
//	         the first's 6 full blocks, cached as that pass is formed, and
//	         computes 4 tokens): [0, 3.04] 104 tokens, first tokens; [3.04,
//	         5.24] both decode and end.
//	measured from 5.24: prompt 0 again, its 6 full blocks (96 tokens) cached,
//	         computes 4; prompt 1 computes 100: [5.24, 8.28] (2 + 1.04); [8.28,
//	         10.48] decodes: TTFT 3.04, E2E 5.24 each.
//	         prompts 2, 3 at 10.48: [10.48, 14.48] (2 + 2.0), [14.48, 16.68]:
//	         TTFT 4.0, E2E 6.2.
//
// The warm-ups are not reported; the window is 5.24 → 16.68 ms.
func TestVLLMBenchServeWarmsUpWithTheFirstPrompt(t *testing.T) {
	yml := linearEngineFor(100) + `
traffic:
  benchmark: {tool: vllm_bench_serve, variant: inferencex, random_input_len: 100, random_output_len: 2,
              num_prompts: 4, max_concurrency: 2, num_warmups: 2, ignore_eos: true}
`
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	assert.Equal(t, 4, rep.Summary.Completed)
	want := []struct {
		id        int64
		cached    int
		ttft, e2e float64
		sendMs    float64
	}{{2, 96, 3.04, 5.24, 5.24}, {3, 0, 3.04, 5.24, 5.24}, {4, 0, 4.0, 6.2, 10.48}, {5, 0, 4.0, 6.2, 10.48}}
	for i, w := range want {
		r := rep.Records[i]
		assert.Equal(t, w.id, r.RequestID, "record %d", i)
		assert.Equal(t, w.cached, r.CachedTokens, "record %d", i)
		ttft, _ := r.TTFT()
		assert.InDelta(t, w.ttft, ttft, 1e-9, "record %d", i)
		assert.InDelta(t, w.e2e, r.E2E(), 1e-9, "record %d", i)
		assert.InDelta(t, w.sendMs, msOf(r.SendNs), 1e-9, "record %d", i)
	}
	assert.InDelta(t, 16.68-5.24, rep.Summary.DurationMs, 1e-9)
	assert.Equal(t, 2, rep.Metadata.WarmupRequests)
	require.NotNil(t, rep.Metadata.Benchmark)
	assert.Equal(t, "vllm_bench_serve", rep.Metadata.Benchmark.Tool)
	var tr map[string]map[string]any
	require.NoError(t, json.Unmarshal(rep.Metadata.Benchmark.Traffic, &tr))
	assert.Equal(t, "first", tr["load"]["warmup_prompt"])
	var spec map[string]map[string]any
	require.NoError(t, json.Unmarshal(rep.Metadata.Spec, &spec))
	assert.Contains(t, spec["traffic"], "benchmark", "metadata.spec is the spec as given")
	assert.NotContains(t, spec["traffic"], "source")
}

// AIPerf's warm-up draws from its dataset instead: with 2 entries, sequential
// sampling (entries 0, 1, 0, 1, …), the 2 warm-ups send entries 0 and 1 and
// every measured request finds its prompt cached (96 of 100 tokens).
func TestAIPerfWarmsUpFromItsDataset(t *testing.T) {
	yml := linearEngineFor(100) + `
traffic:
  benchmark: {tool: aiperf, concurrency: 2, request_count: 4, warmup_request_count: 2, synthetic_input_tokens_mean: 100,
              output_tokens_mean: 2, num_dataset_entries: 2, dataset_sampling_strategy: sequential, ignore_eos: true}
`
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	for i, r := range rep.Records {
		assert.Equal(t, 96, r.CachedTokens, "record %d", i)
		assert.Equal(t, int64(i+2), r.RequestID)
	}
	assert.Equal(t, 2, rep.Metadata.WarmupRequests)
}

// AIPerf 0.11.0 and 0.12.x mark each warm-up prompt at its start ("warmup"
// ahead of its system message or prompt), as 0.13.0 does under --cache-bust
// warmup_isolation_first_turn: the same run as TestAIPerfWarmsUpFromItsDataset
// then finds nothing of the warm-up's: measured requests 0 and 1 (entries 0
// and 1, sent together) compute their 100 tokens, 2 and 3 find 0's and 1's
// 6 full blocks (96 tokens). 0.13.0 with --cache-bust none is as before 0.11.0.
func TestAIPerfIsolatedWarmupByVersion(t *testing.T) {
	for extra, want := range map[string][]int{
		"version: 0.11.0": {0, 0, 96, 96},
		"version: 0.12.0": {0, 0, 96, 96},
		"version: 0.13.0": {96, 96, 96, 96},
		"version: 0.13.0, cache_bust: warmup_isolation_first_turn": {0, 0, 96, 96},
	} {
		rep := runYAML(t, linearEngineFor(100)+`
traffic:
  benchmark: {tool: aiperf, concurrency: 2, request_count: 4, warmup_request_count: 2, synthetic_input_tokens_mean: 100,
              output_tokens_mean: 2, num_dataset_entries: 2, dataset_sampling_strategy: sequential, ignore_eos: true, `+extra+`}
`)
		require.Len(t, rep.Records, 4, extra)
		cached := make([]int, 4)
		for i, r := range rep.Records {
			cached[i] = r.CachedTokens
		}
		assert.Equal(t, want, cached, extra)
		assert.Equal(t, 2, rep.Metadata.WarmupRequests, extra)
	}
}

// A rate after a warm-up (vLLM's benchmark with --request-rate: the test
// request and the warm-ups at once, gathered, then the arrivals), on the
// linear engine, constant arrivals at 100 req/s (every 10 ms), 3 requests of
// (100 in, 2 out), 2 warm-up copies of the first prompt sent together:
//
//	warm-up: [0, 3.04] one pass: the first copy computes 100 tokens, the
//	         second finds its 6 full blocks (cached as the pass is formed) and
//	         computes 4 (2 + 1.04); [3.04, 5.24] decode: both end at 5.24, the
//	         arrivals start then.
//	arrivals at 5.24, 15.24, 25.24 (the constant process's first arrival is at
//	         its origin, as vLLM sends its first request at once): request 0
//	         (prompt 0, 96 tokens cached) [5.24, 7.28] (2 + 0.04), [7.28, 9.38]
//	         (2.1): TTFT 2.04, E2E 4.14; requests 1, 2 compute 100: [15.24,
//	         18.24] (2 + 1.0), then 2.1: TTFT 3.0, E2E 5.1.
func TestRateAfterAWarmup(t *testing.T) {
	yml := linearEngineFor(100) + `
traffic:
  source: {type: synthetic, num_requests: 3, isl: 100, osl: 2}
  load: {mode: rate, rate_rps: 100, arrival: constant, warmup_requests: 2, warmup_prompt: first}
`
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 3)
	for i, w := range []struct{ send, ttft, e2e float64 }{{5.24, 2.04, 4.14}, {15.24, 3.0, 5.1}, {25.24, 3.0, 5.1}} {
		r := rep.Records[i]
		assert.InDelta(t, w.send, msOf(r.SendNs), 1e-9, "request %d", i)
		ttft, _ := r.TTFT()
		assert.InDelta(t, w.ttft, ttft, 1e-9, "request %d", i)
		assert.InDelta(t, w.e2e, r.E2E(), 1e-9, "request %d", i)
	}
	assert.Equal(t, 96, rep.Records[0].CachedTokens)
	assert.Equal(t, 2, rep.Metadata.WarmupRequests)
	require.NotNil(t, rep.Metadata.WarmupEndMs)
	assert.InDelta(t, 5.24, *rep.Metadata.WarmupEndMs, 1e-9)
}

// genai-perf's warm-up sends the prompts its measured phase starts with
// (perf_analyzer's new contexts start at data step 0): 3 entries in sequence,
// 2 warm-ups (entries 0, 1, sent together: the second shares nothing), then
// 4 measured requests, entries 0, 1, 2, 0: the first two find their
// prompts cached by the warm-up (96 of 100 tokens), entry 2 is new, and the
// fourth finds entry 0 again.
func TestGenAIPerfWarmsUpWithTheLeadingPrompts(t *testing.T) {
	yml := linearEngineFor(100) + `
traffic:
  benchmark: {tool: genai_perf, concurrency: 1, request_count: 4, warmup_request_count: 2, synthetic_input_tokens_mean: 100,
              output_tokens_mean: 2, num_dataset_entries: 3, ignore_eos: true}
`
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	cached := make([]int, 4)
	for i, r := range rep.Records {
		cached[i] = r.CachedTokens
	}
	assert.Equal(t, []int{96, 96, 0, 96}, cached)
	assert.Equal(t, 2, rep.Metadata.WarmupRequests)
}

// vLLM's client stops at its ready check when the test request (the first
// prompt) fails: a 2000-token prompt on the linear engine's max_model_len of
// 1600 (100 blocks of 16) is rejected, and the replay is an error naming the
// benchmark and why, not a run of zero successful requests. Without the
// ready check (ready_check_timeout_sec: 0) vLLM runs the prompts, every one
// rejected: 0 completed, 3 failed.
func TestVLLMBenchServeStopsAtAFailedReadyCheck(t *testing.T) {
	bench := `{tool: vllm_bench_serve, random_input_len: 2000, random_output_len: 2, num_prompts: 3, max_concurrency: 2, ignore_eos: true%s}`
	s, err := config.DecodeYAML([]byte(linearEngineFor(100) + "traffic:\n  benchmark: " + fmt.Sprintf(bench, ", ready_check_timeout_sec: 600") + "\n"))
	require.NoError(t, err)
	_, err = Run(s)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "traffic.benchmark", ce.Field)
	assert.Contains(t, ce.Msg, "initial test request (the first prompt: 2000 input tokens, 2 output) is rejected")
	assert.Contains(t, ce.Msg, "max_model_len (1600)")
	assert.Contains(t, ce.Msg, "Initial test run failed")

	rep := runYAML(t, linearEngineFor(100)+"traffic:\n  benchmark: "+fmt.Sprintf(bench, ", ready_check_timeout_sec: 0")+"\n")
	assert.Equal(t, 0, rep.Summary.Completed)
	assert.Equal(t, 3, rep.Summary.Rejected)
}

// inference-perf's client holds at most num_workers × worker_max_concurrency
// requests in a rate stage; a send that finds them all taken would wait for
// a slot, which the replay does not model, so it refuses the run naming the
// fields. 1000 requests in 1 s on the linear engine (a pass ≥ 2 ms) have two
// in flight at once: a cap of 1 binds; 3 requests 1 s apart never overlap.
func TestInferencePerfClientCapBinds(t *testing.T) {
	ip := `{tool: inference_perf, api: {type: completion, streaming: true}, ignore_eos: true,
              data: {type: random, input_distribution: {min: 50, max: 50, mean: 50, std_dev: 0, total_count: 1000},
                     output_distribution: {min: 4, max: 4, mean: 4, std_dev: 0, total_count: 1000}},
              load: {type: constant, num_workers: 1, worker_max_concurrency: 1, stages: [%s]}}`
	s, err := config.DecodeYAML([]byte(linearEngineFor(100) + "traffic:\n  benchmark: " + fmt.Sprintf(ip, "{rate: 1000, duration: 1}") + "\n"))
	require.NoError(t, err)
	_, err = Run(s)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "traffic.benchmark.load.num_workers", ce.Field)
	assert.Contains(t, ce.Msg, "2 requests would be in flight at once, but inference-perf's 1 worker(s) hold at most 1")
	rep := runYAML(t, linearEngineFor(100)+"traffic:\n  benchmark: "+fmt.Sprintf(ip, "{rate: 1, duration: 3}")+"\n")
	assert.Equal(t, 3, rep.Summary.Completed)
}

// vLLM bench serve times its run from the benchmark's start, before the first
// arrival's delay, to the end of its last request (benchmark() in
// vllm/benchmarks/serve.py): with Poisson arrivals at 100 req/s the first
// prompt goes after a drawn gap, and the duration still starts at 0 (no
// warm-up, no ready check) and ends with the last response.
func TestVLLMBenchServeDurationFromItsStart(t *testing.T) {
	yml := linearEngineFor(100) + `
traffic:
  benchmark: {tool: vllm_bench_serve, random_input_len: 100, random_output_len: 2, num_prompts: 3,
              request_rate: 100, ignore_eos: true, ready_check_timeout_sec: 0}
`
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 3)
	first, last := rep.Records[0].SendNs, int64(0)
	for _, r := range rep.Records {
		first, last = min(first, r.SendNs), max(last, r.EndNs)
	}
	require.Positive(t, first, "the first prompt waits its drawn delay")
	assert.Zero(t, rep.Metadata.WindowStartMs)
	assert.InDelta(t, msOf(last), rep.Summary.DurationMs, 1e-9)
	assert.InDelta(t, 3/(msOf(last)/1e3), *rep.Summary.RequestThroughputRPS, 1e-9)
}

// AIPerf's grace period on the linear engine (pass ms = 2 + 0.01 × prompt
// tokens + 0.1 × decodes): concurrency 1, prompts of 100 tokens (distinct
// entries), 2 output tokens, benchmark_duration 6 ms. Request 0: [0, 3.0]
// prefill, [3.0, 5.1] decode, ends 5.1; request 1 is sent at 5.1 (before
// 6 ms), first token 8.1, end 10.2; no request is sent after 6 ms.
//
//	0.11.0 (no default grace): request 1 is canceled at 6.0 ms, in prefill.
//	0.11.0 with benchmark_grace_period 0.003: canceled at 9.0, after its
//	       first token.
//	0.12.0 (30 s): request 1 ends at 10.2 and counts.
func TestAIPerfGracePeriodCancels(t *testing.T) {
	for extra, want := range map[string]struct {
		completed, canceled int
		cancelMs            float64
	}{
		"version: 0.11.0": {1, 1, 6.0},
		"version: 0.11.0, benchmark_grace_period: 0.003": {1, 1, 9.0},
		"version: 0.12.0": {2, 0, 0},
	} {
		rep := runYAML(t, linearEngineFor(100)+`
traffic:
  benchmark: {tool: aiperf, concurrency: 1, benchmark_duration: 0.006, synthetic_input_tokens_mean: 100,
              output_tokens_mean: 2, num_dataset_entries: 100, dataset_sampling_strategy: sequential, ignore_eos: true, `+extra+`}
`)
		assert.Equal(t, want.completed, rep.Summary.Completed, extra)
		assert.Equal(t, want.canceled, rep.Summary.Canceled, extra)
		require.Len(t, rep.Records, 2, extra)
		r := rep.Records[1]
		assert.InDelta(t, 5.1, msOf(r.SendNs), 1e-9, extra)
		if want.canceled > 0 {
			assert.Equal(t, "canceled", r.Status, extra)
			assert.InDelta(t, want.cancelMs, msOf(r.EndNs), 1e-9, extra)
			assert.Contains(t, r.Reason, "traffic.stop.grace_s", extra)
		} else {
			assert.InDelta(t, 10.2, msOf(r.EndNs), 1e-9, extra)
		}
		assert.InDelta(t, 5.1, rep.Summary.E2E.Mean, 1e-9, "request 0 is the only one timed, or both at 5.1: %s", extra)
	}
}

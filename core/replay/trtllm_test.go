package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// trtllmEngine is the worked examples' linear engine (docs/design.md) served
// by TensorRT-LLM: max_num_tokens 512 with chunked prefill, max_batch_size 4,
// 16 tokens a block, the KV cache capped at 16,000 tokens; %s is more of
// engine.trtllm.
const trtllmEngine = `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  backend: trtllm
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  trtllm:
    max_batch_size: 4
    max_num_tokens: 512
    enable_chunked_prefill: true
    kv_cache_config: {tokens_per_block: 16, max_tokens: 16000}
    %s
`

// Worked example 1 on TensorRT-LLM (docs/trtllm.md). Without the overlap
// scheduler the timeline is vLLM's: r1's 1,000-token context in chunks of 512
// and 488 (FIRST_COME_FIRST_SERVED: the cut chunk ends on a block boundary),
// r2 (arrived at 10.00 during the second) joins the third iteration:
//
//	I1 0 → 7.12      r1 context 512
//	I2 7.12 → 14.00  r1 context 488           r1 #1
//	I3 14.00 → 17.10 r1 gen, r2 context 100   r1 #2, r2 #1
//	I4 17.10 → 19.30 r1 gen, r2 gen           r1 #3, r2 #2
//
// With the overlap scheduler (TensorRT-LLM's default) the executor has formed
// I3 before it fetches r2, so r2 waits one iteration more:
//
//	I3 14.00 → 16.10 r1 gen                   r1 #2
//	I4 16.10 → 19.20 r1 gen, r2 context 100   r1 #3, r2 #1
//	I5 19.20 → 21.30 r2 gen                   r2 #2
func TestTRTLLMWorkedExample1(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}, {ts: 10, in: 100, out: 2, hashes: []int{3}}}
	for _, tc := range []struct {
		extra                      string
		r1End, r2First, r2End, dur float64
	}{
		{"disable_overlap_scheduler: true", 19.30, 17.10, 19.30, 19.30},
		{"", 19.20, 19.20, 21.30, 21.30},
	} {
		yml := fmt.Sprintf(trtllmEngine, tc.extra) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, writeTrace(t, rows))
		rep := runYAML(t, yml)
		require.Len(t, rep.Records, 2, tc.extra)
		r1, r2 := rep.Records[0], rep.Records[1]
		assert.InDelta(t, 14.00, msOf(r1.FirstTokenNs), 1e-9, tc.extra)
		assert.InDelta(t, tc.r1End, msOf(r1.EndNs), 1e-9, tc.extra)
		assert.InDelta(t, tc.r2First, msOf(r2.FirstTokenNs), 1e-9, tc.extra)
		assert.InDelta(t, tc.r2End, msOf(r2.EndNs), 1e-9, tc.extra)
		assert.InDelta(t, tc.dur, rep.Summary.DurationMs, 1e-9, tc.extra)
		assert.Equal(t, 1000, *rep.Metadata.NumGPUBlocks, "16,000 tokens of 16-token blocks")
		assert.Equal(t, 16, rep.Metadata.BlockSize)
	}
}

// A TensorRT-LLM spec refuses vLLM's engine.scheduler, naming where the
// setting goes.
func TestTRTLLMRefusesEngineScheduler(t *testing.T) {
	yml := fmt.Sprintf(trtllmEngine, "") + `  scheduler: {max_num_seqs: 8}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 10, osl: 2}
  load: {mode: concurrency, concurrency: 1}
`
	_, err := config.DecodeYAML([]byte(yml))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "engine.scheduler.max_num_seqs")
	assert.Contains(t, err.Error(), "max_batch_size")
}

// trtllmPDOneRequest is the TensorRT-LLM engine as one context server (pool
// prefill) and one generation server, 50 GB/s + 0.2 ms at 100,000 B a token,
// replaying one 1,000-token request of 3 output tokens.
func trtllmPDOneRequest(t *testing.T, prefill string) string {
	return replaceOnce(fmt.Sprintf(trtllmEngine, ""), "  perf:", `  workers:
    disaggregated:
      prefill: `+prefill+`
      decode: {count: 1}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2, kv_bytes_per_token: 100000}
  perf:`) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, writeTrace(t, []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}}))
}

// P/D on TensorRT-LLM (docs/trtllm.md, "Disaggregated"): one context and one
// generation server of the linear engine, 100,000 KV bytes per token at
// 50 GB/s and 0.2 ms. r1 (1,000 prompt, 3 output) computes its context in
// 7.12 + 6.88 ms (ends 14.00), moves 100 MB in 2.2 ms (16.20), and the
// generation server's three steps of 2.1 ms give its tokens at 18.30, 20.40
// and 22.50 (the overlap scheduler changes nothing for a request alone).
func TestTRTLLMDisaggregated(t *testing.T) {
	yml := trtllmPDOneRequest(t, "{count: 1}")
	rep := runYAML(t, yml)
	r := rep.Records[0]
	assert.InDelta(t, 18.30, msOf(r.FirstTokenNs), 1e-9)
	assert.InDelta(t, 22.50, msOf(r.EndNs), 1e-9)
	assert.InDelta(t, 2.20, float64(r.TransferNs)/1e6, 1e-9)
}

// A P/D pool's own engine.trtllm (a context server's own options): the
// context server with max_num_tokens 1000 computes r1's 1,000-token context
// in one iteration (2 + 10 ms, ends 12.00) while the generation server keeps
// engine.trtllm; the transfer (2.2 ms) and the three generation steps follow:
// tokens at 16.30, 18.40 and 20.50.
func TestTRTLLMPoolOptions(t *testing.T) {
	yml := trtllmPDOneRequest(t, "{count: 1, trtllm: {max_batch_size: 4, max_num_tokens: 1000, kv_cache_config: {tokens_per_block: 16, max_tokens: 16000}}}")
	rep := runYAML(t, yml)
	r := rep.Records[0]
	assert.InDelta(t, 16.30, msOf(r.FirstTokenNs), 1e-9)
	assert.InDelta(t, 20.50, msOf(r.EndNs), 1e-9)
	_, err := config.DecodeYAML([]byte(replaceOnce(yml, "backend: trtllm", "backend: vllm")))
	assert.ErrorContains(t, err, "holds TensorRT-LLM's options")
}

// Attention DP places requests as TensorRT-LLM's executor does
// (trtllm.Family.Rank), counting what waits in a rank's inbox: r1 (t = 0)
// starts a pass on rank 0 and r2–r4 arrive during it (the overlap scheduler
// holds them). r2 goes to rank 1 (rank 0 is at the expected count 1), r3 to
// rank 0 (expected 2, both at 1 request of 100 tokens: the lower rank), r4
// to rank 1. The inboxes join the queues once the group's second pass (r1's
// first decode) is formed, so its third computes r3's context on rank 0 and
// r2's and r4's on rank 1. vLLM's balancer, blind to the inboxes, would have
// put all three on rank 1.
func TestTRTLLMAttentionDPPlacement(t *testing.T) {
	needSharedConfigs(t)
	rows := []traceRow{{ts: 0, in: 100, out: 4}, {ts: 0.1, in: 100, out: 4}, {ts: 0.2, in: 100, out: 4}, {ts: 0.3, in: 100, out: 4}}
	tl := adpTimeline(t, rows, "").Timeline.Passes
	require.GreaterOrEqual(t, len(tl), 6)
	assert.Equal(t, []int32{1, 0}, []int32{tl[0].PrefillRequests, tl[1].PrefillRequests}, "r1 alone on rank 0")
	assert.Equal(t, []int32{1, 2}, []int32{tl[4].PrefillRequests, tl[5].PrefillRequests}, "r3 on rank 0, r2 and r4 on rank 1")
}

// qwen235TRTLLM heads a spec of Qwen3-235B-A22B-FP8 on h200_sxm served by
// TensorRT-LLM, priced by the roofline (the shared model configs).
var qwen235TRTLLM = `
engine:
  model: Qwen/Qwen3-235B-A22B-FP8
  model_config_dir: ` + sharedModelConfigs + `
  system: h200_sxm
  backend: trtllm
  perf: {source: roofline}
`

// adpTimeline replays trace rows on one TensorRT-LLM worker of Qwen3-235B-A22B
// on two attention-DP ranks (max_batch_size 8, max_num_tokens 1000, roofline)
// with more engine settings (extra, YAML lines), with its timeline.
func adpTimeline(t *testing.T, rows []traceRow, extra string) *report.Report {
	t.Helper()
	yml := qwen235TRTLLM + fmt.Sprintf(`  workers: {aggregated: {count: 1, tp: 2, enable_expert_parallel: true}}
  trtllm: {max_batch_size: 8, max_num_tokens: 1000, enable_attention_dp: true}
%straffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, extra, writeTrace(t, rows))
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	rep, err := Run(s, WithTimeline())
	require.NoError(t, err)
	return rep
}

// Attention DP with the API server's shared event loop: a request is placed on
// a rank when it reaches the API server, and reaches the engine only after its
// input processing (1 ms for 100 tokens at 10 µs a token, in turn on the
// server's one loop: r1 at 1 ms, r2 at 2, r3 at 3, r4 at 4). The requests in
// input processing count on their rank as the overlap inbox's do, so four
// sent together go 2 and 2 (r1 rank 0, r2 rank 1: rank 0 holds one; r3 rank
// 0, r4 rank 1): the first iteration, from 1 ms, computes r1's context alone
// (rank 1 idle), the third r3's on rank 0 and r2's and r4's on rank 1;
// uncounted, all four went to rank 0.
func TestTRTLLMAttentionDPSharedLoop(t *testing.T) {
	needSharedConfigs(t)
	rows := []traceRow{{ts: 0, in: 100, out: 4}, {ts: 0, in: 100, out: 4}, {ts: 0, in: 100, out: 4}, {ts: 0, in: 100, out: 4}}
	rep := adpTimeline(t, rows, "  tokenization: {send_ms: 0, per_token_us: 10, shared_event_loop: true}\n")
	tl := rep.Timeline.Passes
	require.GreaterOrEqual(t, len(tl), 6)
	assert.Equal(t, []int32{1, 0}, []int32{tl[0].PrefillRequests, tl[1].PrefillRequests}, "r1 on rank 0, r2 still on the loop")
	assert.InDelta(t, 1.0, msOf(tl[0].StartNs), 1e-9, "after r1's input processing")
	assert.Equal(t, []int32{1, 2}, []int32{tl[4].PrefillRequests, tl[5].PrefillRequests}, "r3 on rank 0, r2 and r4 on rank 1")
	assert.Equal(t, 4, rep.Summary.Completed)
}

// One front end for every attention-DP rank: trtllm-serve's one OpenAI
// server tokenizes every prompt and handles every rank's responses on its
// one asyncio loop (engine.RankPlanner: the leader rank gathers the ranks'
// responses), so the worker's one loop serves both ranks, FIFO. Four
// requests of 100 prompt / 2 output tokens at t = 0, 10 µs a prompt token
// (1 ms of input processing each), 1.5 ms of output processing an
// iteration, 10 ms an iteration, no overlap scheduler; the executor places
// them on ranks 0, 1, 0, 1 (those in input processing count on their rank).
// A dense model: the ranks run their iterations on their own.
//
//	loop:   r0 in 0 → 1, r1 1 → 2, r2 2 → 3, r3 3 → 4 (each reaches its rank)
//	rank 0: r0 context 1 → 11, its output 11 → 12.5; r0 generation with r2's
//	        context (there at 3) 11 → 21, output 21 → 22.5 (r0 ends, r2's
//	        first token); r2 generation 21 → 31, output 31 → 32.5
//	rank 1: r1 context 2 → 12, its output waits for rank 0's: 12.5 → 14;
//	        r1 generation with r3's context 12 → 22, output waits for rank
//	        0's: 22.5 → 24; r3 generation 22 → 32, output 32.5 → 34
//
// Two servers of one rank each (their own loops, the same placement) run
// both as rank 0 runs above: r0 and r1 reach their engines at 1 (first
// token 12.5, end 22.5), r2 and r3 at 2 (22.5, 32.5).
func TestTRTLLMAttentionDPOneFrontEnd(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 2}, {ts: 0, in: 100, out: 2}, {ts: 0, in: 100, out: 2}, {ts: 0, in: 100, out: 2}})
	spec := func(workers string) string {
		return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  backend: trtllm
  perf: {source: linear, base_ms: 10, per_prefill_token_ms: 0, per_decode_seq_ms: 0}
  workers:
    aggregated: %s
  tokenization: {send_ms: 0, per_token_us: 10, shared_event_loop: true}
  detokenization: {base_us: 1500, per_token_us: 0}
  trtllm: {max_batch_size: 4, max_num_tokens: 512, disable_overlap_scheduler: true, enable_attention_dp: true}
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, workers, trace)
	}
	checkFrontEnd(t, spec, []frontEndCase{
		{"{count: 1, tp: 2}", [][3]float64{{1, 12.5, 22.5}, {2, 14, 24}, {3, 22.5, 32.5}, {4, 24, 34}}},
		{"{count: 2, tp: 1}", [][3]float64{{1, 12.5, 22.5}, {1, 12.5, 22.5}, {2, 22.5, 32.5}, {2, 22.5, 32.5}}},
	})
}

// TensorRT-LLM's MTP runs the checkpoint's own multi-token-prediction layers
// (update_spec_config_from_model_config reads config.json's
// num_nextn_predict_layers; MTPForCausalLM builds them by model type): a
// model without them, or of a family TensorRT-LLM builds no MTP layer for,
// is refused, naming speculative_config (the pool's own block when it has
// one); DeepSeek-R1 (one MTP layer, which TensorRT-LLM's MTP-Eagle mode runs
// as often as num_nextn_predict_layers asks) is served.
func TestTRTLLMMTPNeedsTheModelsLayers(t *testing.T) {
	needSharedConfigs(t)
	const mtp = "speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3}"
	spec := func(model, trtllm, workers string) string {
		return fmt.Sprintf(`
engine:
  model: %s
  model_config_dir: %s
  system: h200_sxm
  backend: trtllm
  perf: {source: roofline}
  workers: %s
  trtllm: {max_batch_size: 8, max_num_tokens: 4096, %s}
traffic:
  source: {type: synthetic, num_requests: 4, isl: 100, osl: 5}
  load: {mode: concurrency, concurrency: 2}
`, model, sharedModelConfigs, workers, trtllm)
	}
	agg := "{aggregated: {count: 1, tp: 8}}"
	for _, tc := range []struct{ model, trtllm, workers, field, msg string }{
		{"Qwen/Qwen3-32B", mtp, agg, "engine.trtllm.speculative_config", "no multi-token-prediction layers"},
		{"moonshotai/Kimi-K2-Instruct", mtp, agg, "engine.trtllm.speculative_config", "num_nextn_predict_layers = 0"},
		{"XiaomiMiMo/MiMo-7B-Base", mtp, "{aggregated: {count: 1, tp: 1}}", "engine.trtllm.speculative_config",
			"MiMoForCausalLM"},
		{"Qwen/Qwen3-32B", "", `{disaggregated: {prefill: {count: 1, tp: 2}, decode: {count: 1, tp: 2, trtllm: {` + mtp + `}},
    kv_transfer: {bandwidth_gb_per_s: 50}}}`, "engine.workers.disaggregated.decode.trtllm.speculative_config",
			"no multi-token-prediction layers"},
	} {
		_, err := runErr(t, spec(tc.model, tc.trtllm, tc.workers))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, tc.model)
		assert.Equal(t, tc.field, ce.Field, tc.model)
		assert.Contains(t, ce.Msg, tc.msg, tc.model)
	}
	rep := runYAML(t, spec("deepseek-ai/DeepSeek-R1", mtp, agg))
	assert.Equal(t, 4, rep.Summary.Completed)
}

// MTP's acceptance per draft position through the replay: one DeepSeek-R1
// request of 100 prompt and 12 output tokens, 3 drafts, on the linear engine
// without the overlap scheduler (a context iteration 2.0 + 100 · 0.01 = 3.0
// ms, a generation step 2.0 + 0.1 = 2.1 ms). After the context's token 11
// are left (the passes: the context iteration and the steps):
//   - acceptance_rates [0.75, 0.5, 0.5]: 1.3125 drafts a step (TestMTPStepPerPosition),
//     steps of 2, 2, 2, 3, 2 tokens: 5 steps, the end at 3.0 + 5 · 2.1 = 13.5 ms;
//   - left out, AIConfigurator's 0.85, 0.3, 0: 0.85 + 0.85 · 0.3 = 1.105 a step,
//     one draft each of the first 6 steps (⌊1.105 k⌋ = k): 2 tokens a step,
//     the 11th token in step 6, the end at 3.0 + 6 · 2.1 = 15.6 ms;
//   - acceptance_rate 0.85 for every draft: 0.85 + 0.7225 + 0.614125 ≈ 2.19 a
//     step, steps of 3, 3, 3 and the last 2: 4 steps, 3.0 + 4 · 2.1 = 11.4 ms.
func TestTRTLLMMTPAcceptancePerPosition(t *testing.T) {
	needSharedConfigs(t)
	for _, tc := range []struct {
		acceptance string
		passes     int64
		endMs      float64
	}{
		{", acceptance_rates: [0.75, 0.5, 0.5]", 6, 13.5},
		{"", 7, 15.6},
		{", acceptance_rate: 0.85", 5, 11.4},
	} {
		rep := runYAML(t, fmt.Sprintf(`
engine:
  model: deepseek-ai/DeepSeek-R1
  model_config_dir: %s
  system: h200_sxm
  backend: trtllm
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  workers: {aggregated: {count: 1, tp: 8}}
  trtllm:
    max_batch_size: 8
    max_num_tokens: 4096
    disable_overlap_scheduler: true
    speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3%s}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 100, osl: 12}
  load: {mode: concurrency, concurrency: 1}
`, sharedModelConfigs, tc.acceptance))
		assertSpecTimeline(t, rep, tc.acceptance, tc.passes, tc.endMs)
	}
}

// moe_expert_parallel_size below the tp_size splits the experts both ways
// (tensorrt_llm/mapping.py: moe_tp_size = tp_size / moe_ep_size): Qwen3-235B
// at TP 4 with 2 runs at moe_tp 2 × moe_ep 2; a size that does not divide
// the GPUs, one given with enable_expert_parallel, or the split both ways
// with attention DP is refused naming the option; 4 is
// enable_expert_parallel's layout (the same report).
func TestTRTLLMMoEExpertParallelSize(t *testing.T) {
	needSharedConfigs(t)
	spec := func(trtllm, pool string) string {
		return qwen235TRTLLM + fmt.Sprintf(`  workers: {aggregated: {count: 1, tp: 4%s}}
  trtllm: {max_batch_size: 8, max_num_tokens: 4096%s}
traffic:
  source: {type: synthetic, num_requests: 4, isl: 100, osl: 5}
  load: {mode: concurrency, concurrency: 2}
`, pool, trtllm)
	}
	rep := runYAML(t, spec(", moe_expert_parallel_size: 2", ""))
	assert.Equal(t, 4, rep.Summary.Completed)
	all := runYAML(t, spec(", moe_expert_parallel_size: 4", ""))
	ep := runYAML(t, spec("", ", enable_expert_parallel: true"))
	assert.Equal(t, ep.Summary, all.Summary)
	for _, tc := range []struct{ trtllm, pool, msg string }{
		{", moe_expert_parallel_size: 3", "", "3 does not divide the worker's 4 GPUs"},
		{", moe_expert_parallel_size: 2", ", enable_expert_parallel: true", "give one of them"},
		{", moe_expert_parallel_size: 2, enable_attention_dp: true", "", "not simulated with enable_attention_dp"},
	} {
		_, err := runErr(t, spec(tc.trtllm, tc.pool))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, tc.trtllm)
		assert.Equal(t, "engine.trtllm.moe_expert_parallel_size", ce.Field, tc.trtllm)
		assert.Contains(t, ce.Msg, tc.msg, tc.trtllm)
	}
}

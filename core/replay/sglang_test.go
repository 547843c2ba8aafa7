package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf"
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

// DP attention (a pool's data_parallel_size with engine.backend sglang): a
// server of tp × dp GPUs is dp attention ranks, each its own scheduler and
// token pool; server_args.py divides chunked_prefill_size by dp and each rank
// runs max_running_requests // dp requests; the data-parallel controller
// hands new requests to the ranks in turn. R1 (t = 0) runs on rank 0 and is
// done by 30 ms; R2 (t = 100) goes to rank 1, where vLLM's least-loaded rule
// would pick rank 0 again (both idle, the lowest rank).
func TestSGLangDPAttentionRoundRobin(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 3}, {ts: 100, in: 100, out: 3}})
	yml := replaceOnce(sglangLinear(trace, ", max_running_requests: 8, chunked_prefill_size: 1024"), "  sglang:", `  workers:
    aggregated: {count: 1, tp: 1, data_parallel_size: 2}
  sglang:`)
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	rep, err := Run(s, WithTimeline())
	require.NoError(t, err)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, 512, args["chunked_prefill_size"])
	assert.Equal(t, 4, args["max_running_requests"])
	assert.Equal(t, 2, args["dp_size"])
	assert.Equal(t, 2, args["tp_size"])
	var ranks []int32
	for _, p := range rep.Timeline.Passes {
		if p.PrefillRequests > 0 {
			ranks = append(ranks, p.Worker)
		}
	}
	assert.Equal(t, []int32{0, 1}, ranks)
}

// One front end for every data-parallel rank: SGLang's one TokenizerManager
// and one DetokenizerManager serve all the ranks of a server
// (engine.PoolPlan.OneFrontEnd), so the worker's one loop processes every
// prompt and hands out every rank's outputs, FIFO. Four requests of 100
// prompt / 2 output tokens at t = 0, 10 µs a prompt token (1 ms of input
// processing each), 1.5 ms of output processing a pass, 10 ms a pass, no
// overlap scheduler; the controller places them on ranks 0, 1, 0, 1.
//
//	loop:   r0 in 0 → 1, r1 1 → 2, r2 2 → 3, r3 3 → 4 (each reaches its rank)
//	rank 0: r0 prefills 1 → 11, its output 11 → 12.5; r2 (there at 3)
//	        prefills 11 → 21, output 21 → 22.5; decode 21 → 31, 31 → 32.5
//	rank 1: r1 prefills 2 → 12, its output waits for rank 0's: 12.5 → 14;
//	        r3 prefills 12 → 22, output 22.5 → 24; decode 22 → 32,
//	        output 32.5 → 34
//
// Two servers of one rank each (their own front ends, the same placement)
// run both workers as rank 0 runs above, r1 and r3 one step ahead:
// r1 reaches its engine at 1 (first token 12.5, end 32.5), r3 at 2 (22.5,
// 32.5).
func TestSGLangDPOneFrontEnd(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 2}, {ts: 0, in: 100, out: 2}, {ts: 0, in: 100, out: 2}, {ts: 0, in: 100, out: 2}})
	spec := func(workers string) string {
		return replaceOnce(sglangLinear(trace, ", disable_overlap_schedule: true"), "  sglang:", "  workers:\n    aggregated: "+workers+
			"\n  tokenization: {send_ms: 0, per_token_us: 10, shared_event_loop: true}\n  detokenization: {base_us: 1500, per_token_us: 0}\n  sglang:")
	}
	checkFrontEnd(t, spec, []frontEndCase{
		{"{count: 1, tp: 1, data_parallel_size: 2}", [][3]float64{{1, 12.5, 32.5}, {2, 14, 34}, {3, 22.5, 32.5}, {4, 24, 34}}},
		{"{count: 2, tp: 1}", [][3]float64{{1, 12.5, 32.5}, {1, 12.5, 32.5}, {2, 22.5, 32.5}, {2, 22.5, 32.5}}},
	})
}

// Per-pool server arguments: a P/D decode server with its own
// max_running_requests, every other field from engine.sglang.
func TestSGLangPoolArguments(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 3}})
	yml := replaceOnce(sglangLinear(trace, ", max_running_requests: 64"), "  sglang:", `  workers:
    disaggregated:
      prefill: {count: 1, tp: 1, sglang: {max_running_requests: 1}}
      decode: {count: 1, tp: 1}
      kv_transfer: {bandwidth_gb_per_s: 1000000, latency_ms: 1}
  sglang:`)
	rep := runYAML(t, yml)
	assert.Equal(t, 1, rep.Metadata.Pools[0].EngineArgs["max_running_requests"])
	assert.Equal(t, 4096, rep.Metadata.Pools[0].EngineArgs["max_total_num_tokens"], "max_total_tokens from engine.sglang")
	assert.Equal(t, 64, rep.Metadata.Pools[1].EngineArgs["max_running_requests"])
}

// kv_transfer without a bandwidth: the system's network, one NIC per
// attention rank. Qwen3-32B's bf16 KV is 64 layers × 8 KV heads × 128 × 2 ×
// 2 B = 262,144 B a token; prefill TP 4 → decode TP 2 moves it over two
// links of h100_sxm's 50 GB/s: 4,000 tokens take 1.048576e9 B / 100 GB/s =
// 10.49 ms (the report's transfer). An MLA model's latent KV is whole on
// every rank: one link.
func TestKVTransferFromTheNetwork(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 4000, out: 2}})
	yml := replaceOnce(sglangLinear(trace, ""), "  sglang: {max_total_tokens: 4096", `  workers:
    disaggregated:
      prefill: {count: 1, tp: 4}
      decode: {count: 1, tp: 2}
      kv_transfer: {}
  sglang: {max_total_tokens: 8192`)
	rep := runYAML(t, yml)
	r := rep.Records[0]
	require.Equal(t, report.StatusCompleted, r.Status)
	assert.Equal(t, int64(262144), *rep.Metadata.KVTransferBytesPerToken)
	assert.InDelta(t, 4000*262144/100e9*1e3, float64(r.TransferNs)/1e6, 1e-6)
	// a given 0 is refused (left out means the network)
	_, err := config.DecodeYAML([]byte(strings.Replace(yml, "kv_transfer: {}", "kv_transfer: {bandwidth_gb_per_s: 0}", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bandwidth_gb_per_s")
}

// EAGLE through the replay: speculative_num_steps 2 at acceptance 0.5 turns
// a 6-token output into a prefill and three decode passes of 10 ms (1, 1, 2,
// 2 tokens: TestEAGLEDecodeVerifiesDrafts), the last token at 40 ms; SGLang
// then runs at most 48 requests when none is given, without the overlap
// scheduler unless spec v2, and without mixed chunks.
func TestSGLangEAGLE(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 6}})
	rep := runYAML(t, sglangLinear(trace, ", speculative_algorithm: NEXTN, speculative_num_steps: 2, speculative_acceptance_rate: 0.5, enable_mixed_chunk: true"))
	r := rep.Records[0]
	require.Equal(t, report.StatusCompleted, r.Status)
	assert.InDelta(t, 10, float64(r.FirstTokenNs-r.SendNs)/1e6, 1e-9)
	assert.InDelta(t, 40, float64(r.EndNs-r.SendNs)/1e6, 1e-9)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, 48, args["max_running_requests"])
	assert.Equal(t, false, args["overlap_schedule"])
	assert.Equal(t, false, args["enable_mixed_chunk"])
	assert.Equal(t, 3, args["speculative_num_draft_tokens"])
	assert.Equal(t, []float64{0.5, 0.5}, args["speculative_acceptance_rates"])
	rep = runYAML(t, sglangLinear(trace, ", speculative_algorithm: EAGLE, speculative_num_steps: 2, enable_spec_v2: true"))
	assert.Equal(t, true, rep.Metadata.Pools[0].EngineArgs["overlap_schedule"])
}

// The acceptance of each draft, as the other engines take it: with
// speculative_acceptance_rates [1, 0.5] a decode keeps 1 + 1 × 0.5 = 1.5
// drafts on average, so a 6-token output is the prefill's token (10 ms),
// then 2 and 3 tokens (carry 1.5 → 1, then 0.5 + 1.5 = 2): done at 30 ms.
// Neither given, speculative_num_steps 2 takes DefaultMTPAcceptanceRates'
// first two, [0.85, 0.3] (AIConfigurator's default): 0.85 + 0.85 × 0.3 =
// 1.105 a decode, so 2, 2, 2 tokens (carry 1.105, 1.21, 1.315): 40 ms. The
// old default of 0.85 at every position (0.85 + 0.7225 = 1.5725) would end
// at 30 ms. Both fields at once, or more rates than drafts, are refused.
func TestSGLangEAGLEAcceptanceByDraft(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 6}})
	for _, tc := range []struct {
		extra string
		endMs float64
		rates []float64
	}{
		{", speculative_acceptance_rates: [1, 0.5]", 30, []float64{1, 0.5}},
		{"", 40, []float64{0.85, 0.3}},
		{", speculative_acceptance_rate: 0.5", 40, []float64{0.5, 0.5}},
		{", speculative_acceptance_rate: 0.85", 30, []float64{0.85, 0.85}},
	} {
		rep := runYAML(t, sglangLinear(trace, ", speculative_algorithm: EAGLE, speculative_num_steps: 2"+tc.extra))
		r := rep.Records[0]
		require.Equal(t, report.StatusCompleted, r.Status, tc.extra)
		assert.InDelta(t, tc.endMs, float64(r.EndNs-r.SendNs)/1e6, 1e-9, tc.extra)
		assert.Equal(t, tc.rates, rep.Metadata.Pools[0].EngineArgs["speculative_acceptance_rates"], tc.extra)
	}
	for extra, field := range map[string]string{
		", speculative_acceptance_rates: [0.9], speculative_acceptance_rate: 0.5": "engine.sglang.speculative_acceptance_rates",
		", speculative_acceptance_rates: [0.9, 0.5, 0.2]":                         "engine.sglang.speculative_acceptance_rates",
		", speculative_acceptance_rates: [0.9, 1.5]":                              "engine.sglang.speculative_acceptance_rates[1]",
	} {
		_, err := config.DecodeYAML([]byte(sglangLinear(trace, ", speculative_algorithm: EAGLE, speculative_num_steps: 2"+extra)))
		require.Error(t, err, extra)
		assert.Contains(t, err.Error(), field, extra)
	}
	_, err := config.DecodeYAML([]byte(sglangLinear(trace, ", speculative_acceptance_rates: [0.9]")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "speculative_acceptance_rates")
}

// Piecewise CUDA graphs for extend passes are on by default from 0.5.10
// (server_args.py disable_piecewise_cuda_graph = False), up to
// chunked_prefill_size tokens for a GQA model such as Qwen3-32B (8192 on an
// H100), at most the given max_total_tokens (4096 here); off before
// (0.5.9: enable_piecewise_cuda_graph = False) and, at 0.5.10 only, with
// speculative decoding (_handle_piecewise_cuda_graph; 0.5.11 keeps them,
// and runs EAGLE's spec v2 with the overlap scheduler by default). Their
// memory enters mem_fraction_static (_handle_gpu_memory_settings), by hand
// for the H100's 81,920 MiB at TP 1: 4096 tokens are 8 + 14 + 8 + 8 + 12 =
// 50 capture sizes, 400 MiB, so reserved = 512 + 1.5 · 8192 + 2 · 256 +
// 128 + 400 = 13,840: 68,080 / 81,920 = 0.8311 → 0.831 (0.5.9: 13,440,
// 0.836); with NEXTN 4 GiB more: 0.786 at 0.5.10 (no graphs: 17,536) and
// 0.781 at 0.5.11 (17,936).
func TestSGLangPiecewiseGraphsByRelease(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 2}})
	v := func(rel, extra string) map[string]any {
		y := strings.Replace(sglangLinear(trace, extra), "backend: sglang", "backend: sglang\n  backend_version: "+rel, 1)
		return runYAML(t, y).Metadata.Pools[0].EngineArgs
	}
	on := v("0.5.10", "")
	assert.Equal(t, 8192, on["chunked_prefill_size"])
	assert.Equal(t, 4096, on["piecewise_cuda_graph_max_tokens"])
	assert.NotContains(t, v("0.5.9", ""), "piecewise_cuda_graph_max_tokens")
	// the report keeps the server argument (3000); the graphs replay up to the
	// largest captured size, 2816 (TestPiecewiseLargestIsTheLargestCapturedSize);
	// a chunk of 2 captures none
	assert.Equal(t, 3000, v("0.5.10", ", chunked_prefill_size: 3000")["piecewise_cuda_graph_max_tokens"])
	assert.NotContains(t, v("0.5.10", ", chunked_prefill_size: 2"), "piecewise_cuda_graph_max_tokens")
	assert.Equal(t, 0.831, on["mem_fraction_static"])
	assert.Equal(t, 0.836, v("0.5.9", "")["mem_fraction_static"])
	const nextn = ", speculative_algorithm: NEXTN, speculative_num_steps: 2"
	spec10, spec11 := v("0.5.10", nextn), v("0.5.11", nextn)
	assert.NotContains(t, spec10, "piecewise_cuda_graph_max_tokens")
	assert.Equal(t, 0.786, spec10["mem_fraction_static"])
	assert.Equal(t, false, spec10["overlap_schedule"])
	// from 0.5.11 speculative decoding keeps the graphs on (their memory is
	// reserved), but an EAGLE target's extend pass asks for every hidden
	// state (CaptureHiddenMode.FULL), which can_run refuses: never replayed
	assert.NotContains(t, spec11, "piecewise_cuda_graph_max_tokens")
	assert.Equal(t, 0.781, spec11["mem_fraction_static"])
	assert.Equal(t, true, spec11["overlap_schedule"])
	assert.Equal(t, false, v("0.5.11", nextn+", disable_overlap_schedule: true")["overlap_schedule"])
}

// A P/D decode server's max_running_requests (its pool's server argument)
// caps its running batch (disaggregation/decode.py get_new_prebuilt_batch):
// R1 and R2 (100 prompt tokens, 3 output) prefill together over [0, 10) and
// arrive at the decode server at 11 (1 ms of transfer). With
// max_running_requests 1, R1 decodes its 3 tokens over [11, 41); under the
// overlap scheduler the pass formed at 41 is R1's discarded last decode
// (its finish is processed after that pass is launched, so it still fills
// the batch) over [41, 51), and R2 decodes over [51, 81): TTFT 61 ms. Without
// overlap on the decode server R2 starts at 41: TTFT 51 ms, end 71. (Without
// the cap both decode together: TTFT 21 ms.)
func TestSGLangDecodeServerMaxRunningRequests(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 3}, {ts: 0, in: 100, out: 3}})
	for _, c := range []struct {
		decode    string
		ttft, end float64
	}{
		{"", 21, 41},
		{", sglang: {max_running_requests: 1}", 61, 81},
		{", sglang: {max_running_requests: 1, disable_overlap_schedule: true}", 51, 71},
	} {
		yml := replaceOnce(sglangLinear(trace, ""), "  sglang:", `  workers:
    disaggregated:
      prefill: {count: 1, tp: 1}
      decode: {count: 1, tp: 1`+c.decode+`}
      kv_transfer: {bandwidth_gb_per_s: 1000000, latency_ms: 1}
  sglang:`)
		rep := runYAML(t, yml)
		r := rep.Records[1]
		require.Equal(t, report.StatusCompleted, r.Status, c.decode)
		assert.InDelta(t, c.ttft, float64(r.FirstTokenNs-r.SendNs)/1e6, 0.01, c.decode)
		assert.InDelta(t, c.end, float64(r.EndNs-r.SendNs)/1e6, 0.01, c.decode)
	}
}

// sglangDeepEPSpec is Qwen3-235B on H200 under SGLang, P/D, each side one
// server of TP 2 and pool's other fields, the roofline
// pricing; the sides' sglang blocks are prefill and decode.
func sglangDeepEPSpec(t *testing.T, pool, prefill, decode string) string {
	needSharedConfigs(t)
	return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-235B-A22B-FP8
  model_config_dir: %s
  system: h200_sxm
  backend: sglang
  perf: {source: roofline}
  workers:
    disaggregated:
      prefill: {count: 1, tp: 2%s, sglang: %s}
      decode: {count: 1, tp: 2%s, sglang: %s}
traffic:
  source: {type: synthetic, num_requests: 8, isl: 512, osl: 8}
  load: {mode: concurrency, concurrency: 8}
`, sharedModelConfigs, pool, prefill, pool, decode)
}

// SGLang's DeepEP (--moe-a2a-backend deepep): --deepep-mode auto runs the
// normal kernels for a prefill batch and the low-latency ones for a decode
// batch, so a P/D prefill server prices as normal and a decode server as
// low_latency; the two kernels, and DeepEP against the experts' all-reduce,
// price the same passes differently. DeepEP needs expert parallelism over
// DP ranks; deepep_mode needs DeepEP; all2all_backend is vLLM's.
func TestSGLangDeepEPModes(t *testing.T) {
	const ep = ", data_parallel_size: 8, enable_expert_parallel: true"
	prefillPass := make([]perf.Batch, 8)
	decodePass := make([]perf.Batch, 8)
	for i := range prefillPass {
		prefillPass[i].Prefill = []perf.Chunk{{NewTokens: 512}}
		prefillPass[i].Samplers = 1
		for range 16 {
			decodePass[i].AddDecode(600)
		}
		decodePass[i].Samplers = 16
	}
	price := func(prefill, decode string) (int64, int64) {
		s, err := config.DecodeYAML([]byte(sglangDeepEPSpec(t, ep, prefill, decode)))
		require.NoError(t, err)
		d, err := Pricing(s, nil)
		require.NoError(t, err)
		require.True(t, d.Pools[0].Lockstep)
		return d.Pools[0].GroupPassTime(prefillPass), d.Pools[1].GroupPassTime(decodePass)
	}
	autoP, autoD := price("{moe_a2a_backend: deepep}", "{moe_a2a_backend: deepep, deepep_mode: auto}")
	normalP, normalD := price("{moe_a2a_backend: deepep, deepep_mode: normal}", "{moe_a2a_backend: deepep, deepep_mode: normal}")
	_, llD := price("{moe_a2a_backend: deepep, deepep_mode: low_latency}", "{moe_a2a_backend: deepep, deepep_mode: low_latency}")
	noneP, noneD := price("{}", "{moe_a2a_backend: none}")
	assert.Equal(t, normalP, autoP, "auto on a prefill server: normal")
	assert.Equal(t, llD, autoD, "auto on a decode server: low_latency")
	assert.NotEqual(t, normalD, llD)
	assert.NotEqual(t, noneP, normalP)
	assert.NotEqual(t, noneD, llD)

	rep := runYAML(t, sglangDeepEPSpec(t, ep, "{moe_a2a_backend: deepep}", "{moe_a2a_backend: deepep}"))
	assert.Equal(t, 8, rep.Summary.Completed)
	assert.Equal(t, "normal", rep.Metadata.Pools[0].EngineArgs["deepep_mode_priced"])
	assert.Equal(t, "low_latency", rep.Metadata.Pools[1].EngineArgs["deepep_mode_priced"])
	assert.Equal(t, "auto", rep.Metadata.Pools[1].EngineArgs["deepep_mode"])

	const pf = "engine.workers.disaggregated.prefill"
	for _, c := range []struct{ pool, prefill, field, msg string }{
		{ep, "{deepep_mode: normal}", pf + ".sglang.deepep_mode", "give moe_a2a_backend deepep"},
		{ep, "{moe_a2a_backend: mooncake}", pf + ".sglang.moe_a2a_backend", "mooncake"},
		{", enable_expert_parallel: true", "{moe_a2a_backend: deepep}", pf, "needs expert parallelism over data-parallel attention ranks"},
		{ep + ", all2all_backend: deepep_low_latency", "{}", pf + ".all2all_backend", "SGLang's is engine.sglang.moe_a2a_backend"},
	} {
		configErrorOf(t, sglangDeepEPSpec(t, c.pool, c.prefill, "{}"), c.field, c.msg)
	}
}

// engine.sglang.ep_size below the server's GPUs splits the experts both ways
// (SGLang's parallel_state.py: moe_tp_size = tp_size // ep_size): Qwen3-235B
// at TP 8 with ep_size 2 runs its experts 2 ways expert-parallel, each split
// 8 / 2 = 4 ways; ep_size 8 is enable_expert_parallel's layout (the same
// report); a size that does not divide the GPUs, one given with
// enable_expert_parallel, the split both ways with DP attention, and a DeepEP
// server below all GPUs are refused naming the option.
func TestSGLangEPSize(t *testing.T) {
	needSharedConfigs(t)
	spec := func(sglang, pool string) string {
		return sglangEPSpec("{aggregated: {count: 1, tp: 8"+pool+"}}", sglang)
	}
	s, err := config.DecodeYAML([]byte(spec(", ep_size: 2", "")))
	require.NoError(t, err)
	dep, err := buildDeployment(s, nil)
	require.NoError(t, err)
	p := dep.pools[0].parallel()
	assert.Equal(t, 2, p.MoEEP())
	assert.Equal(t, 4, p.MoETP())
	assert.Equal(t, "TP8 EP2", p.String())
	rep := runYAML(t, spec(", ep_size: 2", ""))
	assert.Equal(t, 4, rep.Summary.Completed)
	assert.Equal(t, 2, rep.Metadata.Pools[0].EngineArgs["ep_size"])

	all := runYAML(t, spec(", ep_size: 8", ""))
	ep := runYAML(t, spec("", ", enable_expert_parallel: true"))
	assert.Equal(t, ep.Summary, all.Summary)
	for _, tc := range []struct{ sglang, pool, msg string }{
		{", ep_size: 3", "", "3 does not divide the worker's 8 GPUs"},
		{", ep_size: 2", ", enable_expert_parallel: true", "give one of them"},
		{", ep_size: 2", ", data_parallel_size: 2", "not simulated with engine.workers.aggregated.data_parallel_size"},
		{", ep_size: 2, moe_a2a_backend: deepep", ", data_parallel_size: 2", "SGLang sets ep_size = tp_size"},
	} {
		_, err := runErr(t, spec(tc.sglang, tc.pool))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, tc.sglang+tc.pool)
		assert.Equal(t, "engine.sglang.ep_size", ce.Field, tc.sglang+tc.pool)
		assert.Contains(t, ce.Msg, tc.msg, tc.sglang+tc.pool)
	}
}

// A P/D pool's own sglang block takes engine.sglang's ep_size when it leaves
// it out (config.inheritSGLang), so a refused ep_size given in engine.sglang
// names engine.sglang.ep_size, and one the pool's block gives names that
// block's: 3 does not divide the pools' 2 GPUs.
func TestSGLangEPSizeFieldOfAnInheritedValue(t *testing.T) {
	needSharedConfigs(t)
	spec := func(engine, prefill string) string {
		return sglangEPSpec("{disaggregated: {prefill: {count: 1, tp: 2, sglang: {max_running_requests: 8"+prefill+
			"}}, decode: {count: 1, tp: 2, sglang: {max_running_requests: 8}}}}", engine)
	}
	for _, c := range []struct{ engine, prefill, field string }{
		{", ep_size: 3", "", "engine.sglang.ep_size"},
		{"", ", ep_size: 3", "engine.workers.disaggregated.prefill.sglang.ep_size"},
	} {
		_, err := runErr(t, spec(c.engine, c.prefill))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, c.field)
		assert.Equal(t, c.field, ce.Field)
		assert.Contains(t, ce.Msg, "3 does not divide the worker's 2 GPUs")
	}
}

// sglangEPSpec is Qwen3-235B on H200 under SGLang with the given
// engine.workers (a flow mapping) and engine.sglang fields after
// max_running_requests 8 (", ep_size: 2").
func sglangEPSpec(workers, sglang string) string {
	return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-235B-A22B-FP8
  model_config_dir: %s
  system: h200_sxm
  backend: sglang
  perf: {source: roofline}
  workers: %s
  sglang: {max_running_requests: 8%s}
traffic:
  source: {type: synthetic, num_requests: 4, isl: 100, osl: 5}
  load: {mode: concurrency, concurrency: 2}
`, sharedModelConfigs, workers, sglang)
}

// The request pool from 0.5.10 (model_runner_kv_cache_mixin.py
// _resolve_max_num_reqs) is max_running_requests, a given one capped at the
// estimate: 4096 tokens of Qwen3-32B's 40,960-token context give int(4096 /
// 40960 · 512) = 51, lifted to 2048, so a given 8192 runs 2048 requests at
// 0.5.10 and 8192 at 0.5.9 (whose pool was the given value); left out, both
// run min(2048, 4096 / 2) = 2048.
func TestSGLangRequestPoolByRelease(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 2}})
	v := func(rel, extra string) any {
		y := strings.Replace(sglangLinear(trace, extra), "backend: sglang", "backend: sglang\n  backend_version: "+rel, 1)
		return runYAML(t, y).Metadata.Pools[0].EngineArgs["max_running_requests"]
	}
	assert.Equal(t, 8192, v("0.5.9", ", max_running_requests: 8192"))
	assert.Equal(t, 2048, v("0.5.10", ", max_running_requests: 8192"))
	assert.Equal(t, 2048, v("0.5.9", ""))
	assert.Equal(t, 2048, v("0.5.10", ""))
}

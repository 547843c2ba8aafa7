package replay

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf"
)

const sharedModelConfigs = "../../../shared/data/aic/model_configs"

func needSharedConfigs(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(sharedModelConfigs); err != nil {
		t.Skip("shared model configs not present")
	}
}

// TestDPLoadBalancer: a dense worker with data_parallel_size 2 places each
// request on the rank with the lowest 4·waiting + running (vLLM's DP load
// balancer), ties to the lower rank. Linear engine: one pass = 2 ms + 0.01
// ms per prompt token + 0.1 ms per decode. Requests of 100 prompt / 2
// output tokens at t = 0, 0, 0 and 3 ms: the first goes to rank 0 (both
// idle), the second to rank 1 (rank 0 has one waiting: score 4 against
// 0), the third to rank 0 (4 against 4, the lower rank). Rank 0 prefills
// both in one pass (2 + 2 = 4 ms) and decodes them (2.2 ms): 2 passes.
// Rank 1's prefill ends at 3 ms (2 + 1), so at 3 ms it runs one decoding
// request (score 1) while rank 0, still in its first pass, runs two
// (score 2): the fourth goes to rank 1, which then runs a mixed pass (its
// decode plus the new prefill) and a last decode: 3 passes. Records name
// the worker (the vLLM server), 0 for all.
func TestDPLoadBalancer(t *testing.T) {
	rows := []traceRow{{0, 100, 2, []int{1}}, {0, 100, 2, []int{2}}, {0, 100, 2, []int{3}}, {3, 100, 2, []int{4}}}
	yml := replaceOnce(traceSpec(t, 1000, rows, ""), "perf: {source: linear",
		"workers: {aggregated: {count: 1, tp: 1, data_parallel_size: 2}}\n  perf: {source: linear")
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	for _, r := range rep.Records {
		assert.Equal(t, 0, r.Worker)
		assert.Equal(t, "completed", r.Status)
	}
	passes := rep.Metadata.WorkerPasses
	require.Len(t, passes, 2)
	assert.Equal(t, []int64{2, 3}, passes)
	// request 3 on rank 1: the mixed pass 3 → 6.1 ms (2 + 1.0 + 0.1) gives
	// its first token, its decode 6.1 → 8.2 ms (2 + 0.1) its last
	assert.InDelta(t, 6.1, msOf(rep.Records[3].FirstTokenNs), 1e-9)
	assert.InDelta(t, 8.2, msOf(rep.Records[3].EndNs), 1e-9)
	assert.Equal(t, 2, *rep.Metadata.DataParallelSize)
	// GPU hours count TP × DP GPUs
	assert.Equal(t, 2, rep.Metadata.GPUs)
}

// moeSpec is Qwen3-235B-A22B-FP8 on h200_sxm (roofline) in layout `pool`.
func moeSpec(t *testing.T, pool, traffic string) string {
	needSharedConfigs(t)
	return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-235B-A22B-FP8
  model_config_dir: %s
  system: h200_sxm
  perf: {source: roofline}
  workers: {aggregated: %s}
  scheduler: {max_num_seqs: 32, max_num_batched_tokens: 4096, max_model_len: 32768}
%s`, sharedModelConfigs, pool, traffic)
}

// TestMoELockstepRanks: the DP ranks of a MoE worker run every pass
// together, so they are busy for the same time and run the same number of
// passes (an idle rank runs vLLM's dummy pass), even when one rank has
// more requests.
func TestMoELockstepRanks(t *testing.T) {
	rep := runYAML(t, moeSpec(t, "{count: 1, tp: 2, data_parallel_size: 2}", `
traffic:
  source: {type: synthetic, num_requests: 12, isl: 700, osl: 30}
  load: {mode: concurrency, concurrency: 3}
`))
	assert.Equal(t, 12, rep.Summary.Completed)
	busy := rep.Metadata.WorkerBusyMs
	passes := rep.Metadata.WorkerPasses
	require.Len(t, busy, 2)
	assert.Equal(t, busy[0], busy[1])
	assert.Equal(t, passes[0], passes[1])
	assert.Equal(t, 4, rep.Metadata.GPUs)
	pools := rep.Metadata.Pools
	assert.Equal(t, 2, *pools[0].DataParallelSize)
	assert.False(t, *pools[0].EnableExpertParallel)
}

// TestMoEMooncakeInvariants replays 300 Mooncake requests on a MoE model
// with expert parallelism and data parallelism: every request ends once
// (INV-1), KV blocks are conserved (INV-2, checked by Run), timelines are
// ordered (INV-3, INV-4), and the same spec gives the same records (INV-5).
func TestMoEMooncakeInvariants(t *testing.T) {
	if _, err := os.Stat(mooncakeTrace); err != nil {
		t.Skip("shared Mooncake trace not present")
	}
	yml := moeSpec(t, "{count: 2, tp: 2, data_parallel_size: 2, enable_expert_parallel: true, placement: least_outstanding}",
		fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace, speedup: 8}
  stop: {max_requests: 300}
`, mooncakeTrace))
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 300)
	s := rep.Summary
	assert.Equal(t, 300, s.Completed+s.Rejected+s.Failed+s.Canceled)
	assert.Positive(t, s.TotalCachedTokens)
	for _, r := range rep.Records {
		assert.LessOrEqual(t, r.SendNs, r.ArrivalNs)
		assert.LessOrEqual(t, r.ArrivalNs, r.EndNs)
		assert.LessOrEqual(t, r.EndNs, r.ReleaseNs)
		assert.Contains(t, []int{0, 1}, r.Worker)
	}
	kv := rep.Metadata.KVBlocks
	require.Len(t, kv, 4) // 2 workers × 2 ranks
	for _, w := range kv {
		assert.Equal(t, w.Allocated+w.Reused, w.Released)
	}
	again := runYAML(t, yml)
	assert.Equal(t, rep.Records, again.Records)
}

// TestMoELayoutErrors: layouts vLLM refuses are config errors naming the
// field.
func TestMoELayoutErrors(t *testing.T) {
	needSharedConfigs(t)
	traffic := `
traffic:
  source: {type: synthetic, num_requests: 1, isl: 10, osl: 2}
  load: {mode: concurrency, concurrency: 1}
`
	for _, tc := range []struct{ pool, field, msg string }{
		// 1536 / 8 = 192 expert columns per GPU, not a multiple of the fp8 block
		{"{count: 1, tp: 8}", "engine.workers.aggregated.tp", "not divisible by the fp8 weight block"},
		{"{count: 1, tp: 4, data_parallel_size: 4}", "engine.workers.aggregated.data_parallel_size", "not divisible by the fp8 weight block"},
		{"{count: 1, tp: 4, data_parallel_size: 512}", "engine.workers.aggregated.data_parallel_size", "must be ≤ 1024"},
		{"{count: 1, tp: 4, data_parallel_size: 0}", "engine.workers.aggregated.data_parallel_size", "must be ≥ 1"},
	} {
		configErrorOf(t, moeSpec(t, tc.pool, traffic), tc.field, tc.msg)
	}
	// expert parallelism on a dense model
	s, err := config.DecodeYAML([]byte(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  workers: {aggregated: {count: 1, tp: 2, enable_expert_parallel: true}}
` + traffic))
	require.NoError(t, err)
	_, err = Run(s)
	var ce *config.Error
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "engine.workers.aggregated.enable_expert_parallel", ce.Field)
	assert.Contains(t, ce.Msg, "needs a mixture-of-experts model")
	// the linear source cannot price lockstep ranks
	yml := replaceOnce(moeSpec(t, "{count: 1, tp: 2, data_parallel_size: 2}", traffic), "perf: {source: roofline}",
		"perf: {source: linear, base_ms: 1, per_prefill_token_ms: 0, per_decode_seq_ms: 0}")
	s, err = config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	_, err = Run(s)
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "engine.perf.source", ce.Field)
	// named by its source, not by its fields' values
	assert.Equal(t, "linear cannot price a data-parallel mixture-of-experts worker (use roofline or aic)", ce.Msg)
}

// TestMultiNodeDataParallel: 16 H200 (two nodes of 8) as TP 2 × DP 8 with
// expert parallelism run, each rank with its own cache, and the all-to-all
// backend changes the step: DeepEP's low-latency kernels send only each
// token's expert pairs where the default all-gathers every rank's tokens to
// every rank over the network. A TP group wider than a node is refused.
func TestMultiNodeDataParallel(t *testing.T) {
	traffic := `
traffic:
  source: {type: synthetic, num_requests: 64, isl: 512, osl: 16}
  load: {mode: concurrency, concurrency: 32}
`
	agrs := runYAML(t, moeSpec(t, "{count: 1, tp: 2, data_parallel_size: 8, enable_expert_parallel: true}", traffic))
	assert.Equal(t, 64, agrs.Summary.Completed)
	assert.Len(t, agrs.Metadata.WorkerBusyMs, 8)
	ll := runYAML(t, moeSpec(t, "{count: 1, tp: 2, data_parallel_size: 8, enable_expert_parallel: true, all2all_backend: deepep_low_latency}", traffic))
	assert.Equal(t, 64, ll.Summary.Completed)
	assert.NotEqual(t, agrs.Summary.TPOT.Mean, ll.Summary.TPOT.Mean)

	// a TP group over two gb200 trays (4 GPUs each) runs: its all-reduce
	// crosses the network (core/perf/roofline_nodes.go)
	s, err := config.DecodeYAML([]byte(strings.Replace(moeSpec(t, "{count: 1, tp: 8, enable_expert_parallel: true}", traffic), "h200_sxm", "gb200", 1)))
	require.NoError(t, err)
	rep, err := Run(s)
	require.NoError(t, err)
	assert.Equal(t, 64, rep.Summary.Completed)
	var ce *config.Error
	_, err = config.DecodeYAML([]byte(moeSpec(t, "{count: 1, tp: 2, data_parallel_size: 8, all2all_backend: pplx}", traffic)))
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "engine.workers.aggregated.all2all_backend", ce.Field)
}

// TestAll2AllBackendsAgree: the spec's all2all_backend values are the ones
// the perf sources price (the config and perf packages each name them).
func TestAll2AllBackendsAgree(t *testing.T) {
	assert.Equal(t, perf.All2AllBackends(), config.Enums()["engine.workers.aggregated.all2all_backend"])
}

// fourHeldRequests is the linear engine on one server of data_parallel_size 2
// (pool options more: ", key: value"), 10 µs of input processing a prompt
// token on the API server's loop, and four requests of 100 prompt / 2 output
// tokens sent at t = 0.
func fourHeldRequests(t *testing.T, more string) string {
	rows := []traceRow{{0, 100, 2, []int{1}}, {0, 100, 2, []int{2}}, {0, 100, 2, []int{3}}, {0, 100, 2, []int{4}}}
	return replaceOnce(traceSpec(t, 1000, rows, ""), "perf: {source: linear",
		"workers: {aggregated: {count: 1, tp: 1, data_parallel_size: 2"+more+"}}\n"+
			"  tokenization: {send_ms: 0, per_token_us: 10, shared_event_loop: true}\n  perf: {source: linear")
}

// TestDPOneAPIServerLoop: with --api-server-count 1 (vLLM's default before
// 0.15.0) one API server event loop processes the inputs of both ranks'
// requests, one after another. The example of
// TestDPLoadBalancerCountsHeldRequests (four requests of 100 prompt / 2
// output tokens at t = 0, 10 µs a prompt token: 1 ms of input processing
// each, placed on ranks 0, 1, 0, 1) on one loop: the requests reach their
// engines at 1, 2, 3 and 4 ms instead of two at 1 ms and two at 2 ms.
// Linear engine (2 ms + 0.01 ms a prompt token + 0.1 ms a decode a pass):
//
//	rank 0: r0 prefills 1 → 4 (2 + 1.0); r2, there at 3, joins r0's decode
//	        in a mixed pass 4 → 7.1 (2 + 1.0 + 0.1), then decodes 7.1 → 9.2
//	rank 1: r1 prefills 2 → 5; r3, there at 4, mixed pass 5 → 8.1, decode
//	        8.1 → 10.2
func TestDPOneAPIServerLoop(t *testing.T) {
	yml := fourHeldRequests(t, ", api_server_count: 1")
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	for i, want := range [][3]float64{{1, 4, 7.1}, {2, 5, 8.1}, {3, 7.1, 9.2}, {4, 8.1, 10.2}} {
		r := rep.Records[i]
		assert.Equal(t, "completed", r.Status)
		assert.InDelta(t, want[0], msOf(r.ArrivalNs), 1e-9, "request %d reaches its engine", i)
		assert.InDelta(t, want[1], msOf(r.FirstTokenNs), 1e-9, "request %d first token", i)
		assert.InDelta(t, want[2], msOf(r.EndNs), 1e-9, "request %d end", i)
	}
	// api_server_count: data_parallel_size is one loop per rank, as absent
	per := runYAML(t, replaceOnce(yml, "api_server_count: 1", "api_server_count: 2"))
	for i, want := range []float64{1, 1, 2, 2} {
		assert.InDelta(t, want, msOf(per.Records[i].ArrivalNs), 1e-9, "request %d, a loop per rank", i)
	}
}

// TestDPLoadBalancerCountsHeldRequests: vLLM's front end adds each request it
// sends to its rank's waiting count at once (DPLBAsyncMPClient.
// get_core_engine_for_request), so requests that a rank holds but its engine
// has not taken in yet count as waiting. Four requests of 100 prompt / 2
// output tokens at t = 0 on one server of data_parallel_size 2, input
// processing on the API server's loop at 10 µs a token (1 ms each): all four
// are placed before any reaches an engine. Counting the held ones, ranks
// alternate (0, 1, 0, 1); counting only the engines' queues, all four went
// to rank 0 and rank 1 stayed idle.
func TestDPLoadBalancerCountsHeldRequests(t *testing.T) {
	rep := runYAML(t, fourHeldRequests(t, ""))
	require.Len(t, rep.Records, 4)
	passes := rep.Metadata.WorkerPasses
	require.Len(t, passes, 2)
	assert.Equal(t, passes[0], passes[1], "the two ranks run the same requests")
	for _, r := range rep.Records {
		assert.Equal(t, "completed", r.Status)
	}
	// per rank: the first reaches its engine at 1 ms and prefills 1 → 4 ms
	// (2 + 1.0); the second, there at 2 ms, joins the first's decode in a
	// mixed pass 4 → 7.1 ms (2 + 1.0 + 0.1), then decodes 7.1 → 9.2 ms
	for i, want := range [][3]float64{{1, 4, 7.1}, {1, 4, 7.1}, {2, 7.1, 9.2}, {2, 7.1, 9.2}} {
		r := rep.Records[i]
		assert.InDelta(t, want[0], msOf(r.ArrivalNs), 1e-9, "request %d reaches its engine", i)
		assert.InDelta(t, want[1], msOf(r.FirstTokenNs), 1e-9, "request %d first token", i)
		assert.InDelta(t, want[2], msOf(r.EndNs), 1e-9, "request %d end", i)
	}
}

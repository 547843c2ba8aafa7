package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// The timeline of worked example 1 (see TestWorkedExample1_TwoRequestsOneWorker),
// block size 16:
//
//	P1 0 → 7.12      r1 prefill 512             blocks ⌈512/16⌉ = 32
//	P2 7.12 → 14.00  r1 prefill 488             ⌈1000/16⌉ = 63 (r2 arrives at 10.00, during P2)
//	P3 14.00 → 17.10 r1 decode, r2 prefill 100  63 (⌈1001/16⌉) + ⌈100/16⌉ = 7 → 70
//	P4 17.10 → 19.30 r1 decode, r2 decode       63 (⌈1002/16⌉) + 7 (⌈101/16⌉) → 70
//
// No request has finished before P4 starts, so no block is cached and
// unreferenced; nothing ever waits at a pass start.
func TestTimelineWorkedExample1(t *testing.T) {
	s, err := config.DecodeYAML([]byte(traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}},
		{ts: 10, in: 100, out: 2, hashes: []int{3}},
	}, "")))
	require.NoError(t, err)
	rep, err := Run(s, WithTimeline())
	require.NoError(t, err)
	require.NotNil(t, rep.Timeline)
	assert.Equal(t, []string{"aggregated"}, rep.Timeline.Pools)
	assert.Equal(t, []int{1000}, rep.Timeline.KVBlocksTotal)
	pass := func(start, end int64, prefill, prefillReqs, decodes, running, used int) report.Pass {
		return report.Pass{StartNs: start, EndNs: end, PrefillTokens: int64(prefill), PrefillRequests: int32(prefillReqs),
			DecodeRequests: int32(decodes), Running: int32(running), KVBlocksUsed: int64(used)}
	}
	assert.Equal(t, []report.Pass{
		pass(0, 7_120_000, 512, 1, 0, 1, 32),
		pass(7_120_000, 14_000_000, 488, 1, 0, 1, 63),
		pass(14_000_000, 17_100_000, 100, 1, 1, 2, 70),
		pass(17_100_000, 19_300_000, 0, 0, 2, 2, 70),
	}, rep.Timeline.Passes)

	// Off by default, and the records do not depend on it.
	s2, err := config.DecodeYAML([]byte(traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}},
		{ts: 10, in: 100, out: 2, hashes: []int{3}},
	}, "")))
	require.NoError(t, err)
	plain, err := Run(s2)
	require.NoError(t, err)
	assert.Nil(t, plain.Timeline)
	assert.Equal(t, plain.Records, rep.Records)
}

// A queue at pass start, P/D pools and worker indices: 3 requests of 600
// prompt tokens at t = 0 on one prefill worker with max_num_seqs 4 and a
// 512-token budget. P1 takes r0's first 512 tokens; r1 and r2 wait (the
// budget is spent), so the first pass records 2 waiting. Every pass of the
// prefill pool is pool 0, of the decode pool pool 1, and the timeline is in
// start order.
func TestTimelinePoolsAndQueue(t *testing.T) {
	yml := replaceOnce(traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 600, out: 2, hashes: []int{1, 2}},
		{ts: 0, in: 600, out: 2, hashes: []int{3, 4}},
		{ts: 0, in: 600, out: 2, hashes: []int{5, 6}},
	}, ""), "  scheduler:", `  workers:
    disaggregated:
      prefill: {count: 1}
      decode: {count: 2}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2}
  scheduler:`)
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	rep, err := Run(s, WithTimeline())
	require.NoError(t, err)
	tl := rep.Timeline
	assert.Equal(t, []string{"prefill", "decode"}, tl.Pools)
	first := tl.Passes[0]
	assert.Equal(t, report.Pass{Pool: 0, Worker: 0, StartNs: 0, EndNs: 7_120_000, PrefillTokens: 512,
		PrefillRequests: 1, Running: 1, Waiting: 2, KVBlocksUsed: 32}, first) // 2 + 0.01 × 512 ms
	decodeWorkers := map[int32]bool{}
	for i, p := range tl.Passes {
		if i > 0 {
			assert.LessOrEqual(t, tl.Passes[i-1].StartNs, p.StartNs, "start order")
		}
		assert.Greater(t, p.EndNs, p.StartNs)
		if p.Pool == 1 {
			decodeWorkers[p.Worker] = true
			assert.Zero(t, p.PrefillTokens, "a decode worker's handed-off requests only decode")
		}
	}
	assert.Equal(t, map[int32]bool{0: true, 1: true}, decodeWorkers, "round robin over both decode workers")
	passes := int64(0)
	for _, w := range rep.Metadata.Pools {
		for _, n := range w.WorkerPasses {
			passes += n
		}
	}
	assert.Equal(t, passes, int64(len(tl.Passes)), "one entry per pass the workers ran")
}

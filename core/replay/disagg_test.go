package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pdEngine is the linear engine of the worked examples as one prefill and one
// decode worker, with 100,000 KV bytes per token moved at bw GB/s + 0.2 ms.
func pdEngine(blocks int, bw float64, extra string) string {
	return linearEngineFor(blocks) + fmt.Sprintf(`  workers:
    disaggregated:
      prefill: {count: 1, tp: 1}
      decode: {count: 1, tp: 1}
      kv_transfer: {bandwidth_gb_per_s: %v, latency_ms: 0.2, kv_bytes_per_token: 100000}
`, bw) + extra
}

// Worked example 5: r1 alone (ISL 1000, OSL 3). Prefill P1, P2 end at 14.00 (no
// client token); transfer of 1e8 bytes at 50 GB/s: 2.0 + 0.2 ms (→ 16.20); the
// decode worker runs three decode passes of 2.1 ms: tokens at 18.30, 20.40, 22.50.
func TestWorkedExample5_Disaggregated(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}}
	rep := runYAML(t, pdEngine(1000, 50, "")+traceTraffic(t, rows, "{mode: trace}"))
	r := rep.Records[0]
	require.Equal(t, "completed", r.Status)
	assert.Equal(t, int64(2_200_000), r.TransferNs)
	assert.Equal(t, int64(18_300_000), r.FirstTokenNs)
	assert.Equal(t, int64(22_500_000), r.EndNs)
	assert.Equal(t, 0, r.PrefillWorker)
	assert.Equal(t, 0, r.DecodeWorker)
	assert.Equal(t, 3, r.OutputTokens)
	// ITL gaps 2.1, 2.1
	assert.InDelta(t, 2.1, rep.Summary.ITL.Mean, 1e-12)
	pools := rep.Metadata.Pools
	assert.InDelta(t, 14.00, pools[0].WorkerBusyMs[0], 1e-9)
	assert.InDelta(t, 6.30, pools[1].WorkerBusyMs[0], 1e-9)
	// two GPUs for 22.5 ms
	assert.InDelta(t, 2*22.5/3.6e6, rep.Summary.GPUHours, 1e-15)
	assert.InDelta(t, 22.5/3.6e6, pools[0].GPUHours, 1e-15)
}

// Halving the bandwidth grows TTFT by exactly the extra transfer time:
// 1e8 bytes at 25 GB/s is 4.0 ms instead of 2.0: every token is 2.0 ms later.
func TestHalvingBandwidthAddsTransferTime(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}}
	fast := runYAML(t, pdEngine(1000, 50, "")+traceTraffic(t, rows, "{mode: trace}")).Records[0]
	slow := runYAML(t, pdEngine(1000, 25, "")+traceTraffic(t, rows, "{mode: trace}")).Records[0]
	assert.Equal(t, int64(4_200_000), slow.TransferNs)
	assert.Equal(t, fast.FirstTokenNs+2_000_000, slow.FirstTokenNs)
	assert.Equal(t, fast.EndNs+2_000_000, slow.EndNs)
}

func TestHandoffWaitsForDecodeBlocks(t *testing.T) {
	// decode cache of 10 blocks (160 tokens): r1 (64 + 80 → 9 blocks) holds most
	// of it; r2's handoff (64 + 1 → 5 blocks) waits until r1 finishes.
	// r1's decode ends at 5.8 + 80 × 2.1 ≈ 174 ms and holds 9 blocks from about
	// 137 ms; r2 arrives at 160 ms, so its 5 blocks are not free at its handoff.
	rows := []traceRow{{ts: 0, in: 64, out: 80, hashes: []int{1}}, {ts: 160, in: 64, out: 4, hashes: []int{2}}}
	rep := runYAML(t, pdEngine(10, 50, "")+traceTraffic(t, rows, "{mode: trace}"))
	r1, r2 := rep.Records[0], rep.Records[1]
	require.Equal(t, "completed", r1.Status)
	require.Equal(t, "completed", r2.Status)
	assert.GreaterOrEqual(t, r2.FirstTokenNs, r1.EndNs, "r2 decodes only after r1 freed its blocks")
}

// The client path behaves as in aggregated replay: detokenization at the decode
// worker, response overhead and closed-loop release, sessions.
func TestDisaggregatedClientPath(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}, {ts: 0, in: 100, out: 2, hashes: []int{3}}}
	rep := runYAML(t, pdEngine(1000, 50, detokExample2)+traceTraffic(t, rows,
		"{mode: concurrency, concurrency: 1, response_overhead: {base_ms: 1.0, per_output_token_us: 100}}"))
	r1, r2 := rep.Records[0], rep.Records[1]
	// decode passes end 18.30, 20.40, 22.50; each job 0.6 ms (one token)
	assert.Equal(t, int64(18_900_000), r1.FirstTokenNs)
	assert.Equal(t, int64(23_100_000), r1.EndNs)
	assert.Equal(t, r1.EndNs+1_300_000, r1.ReleaseNs)
	assert.Equal(t, r1.ReleaseNs, r2.SendNs) // one slot: held through P/D and the overhead
	assert.Equal(t, msOf(r2.EndNs), rep.Summary.DurationMs)

	sess := runYAML(t, pdEngine(4000, 50, "")+`traffic:
  source: {type: sessions, num_sessions: 3, turns: 3, isl: 200, osl: 20}
  load: {mode: concurrency, concurrency: 2, inter_turn_delay_ms: 5}
`)
	require.Len(t, sess.Records, 9)
	for _, r := range sess.Records {
		assert.Equal(t, "completed", r.Status)
		if r.Turn > 0 {
			assert.Positive(t, r.CachedTokens, "later turns reuse the prefill worker's cache")
		}
	}
}

// The Mooncake trace on P/D completes every request that fits, conserves KV
// blocks in both pools (checked by Run), and is deterministic.
func TestDisaggregatedMooncake(t *testing.T) {
	spec := replaceOnce(stressSpec(t), "    aggregated: {count: 2, tp: 2, placement: least_outstanding}",
		`    disaggregated:
      prefill: {count: 1, tp: 2, placement: least_outstanding}
      decode: {count: 1, tp: 2}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2}`)
	a := runYAML(t, spec)
	s := a.Summary
	assert.Equal(t, 400, s.Completed+s.Rejected+s.Failed)
	assert.Positive(t, s.Completed)
	for _, r := range a.Records {
		if r.Status == "completed" && r.OutputTokens > 0 {
			assert.Positive(t, r.TransferNs)
			assert.LessOrEqual(t, r.ArrivalNs+r.TransferNs, r.FirstTokenNs)
		}
	}
	aj, err := a.JSON()
	require.NoError(t, err)
	bj, err := runYAML(t, spec).JSON()
	require.NoError(t, err)
	assert.Equal(t, string(aj), string(bj))
}

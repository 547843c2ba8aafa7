package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// A request whose response has not ended request_timeout_ms after its send is
// canceled by the client: it ends then, with the tokens it received, and waits
// base_ms + per-token overhead; its KV is released (Run checks INV-2).
//
// r1 (ISL 1000, OSL 50) on the worked-example engine: prefill ends at 14.00,
// then decodes of 2.1 ms: token k at 14.00 + 2.1·(k−1). Timeout 20 ms: tokens
// at 14.00, 16.10, 18.20 are received (3), the next would be at 20.30.
func TestTimeoutCancelsRequest(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		rows := []traceRow{{ts: 0, in: 1000, out: 50, hashes: []int{1, 2}}, {ts: 30, in: 100, out: 2, hashes: []int{3}}}
		rep := runYAML(t, mode(clientSpec(1000, "", traceTraffic(t, rows,
			"{mode: trace, request_timeout_ms: 20, response_overhead: {base_ms: 1.0, per_output_token_us: 100}}"))))
		r1, r2 := rep.Records[0], rep.Records[1]
		assert.Equal(t, report.StatusCanceled, r1.Status)
		assert.Contains(t, r1.Reason, "request_timeout_ms (20 ms)")
		assert.Equal(t, int64(20_000_000), r1.EndNs)
		assert.Equal(t, r1.EndNs+1_000_000+int64(r1.OutputTokens)*100_000, r1.ReleaseNs)
		assert.Equal(t, 1, rep.Summary.Canceled)
		assert.Equal(t, report.StatusCompleted, r2.Status, "the engine is free for the next request")
		// canceled requests stay out of latency statistics: only r2's gap
		require.NotNil(t, rep.Summary.ITL)
		assert.Equal(t, rep.Summary.ITL.Min, rep.Summary.ITL.Max)
	})
}

// Aggregated timeline by hand: 3 tokens received before 20 ms.
func TestTimeoutTokensReceivedByHand(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 50, hashes: []int{1, 2}}}
	rep := runYAML(t, clientSpec(1000, "", traceTraffic(t, rows, "{mode: trace, request_timeout_ms: 20}")))
	assert.Equal(t, 3, rep.Records[0].OutputTokens)
	assert.Equal(t, int64(14_000_000), rep.Records[0].FirstTokenNs)
}

// P/D: a request canceled while its KV moves is canceled; both pools free its
// blocks. Prefill ends at 14.00; a 1 GB/s link moves 1e8 bytes in 100 ms, so a
// 50 ms timeout falls inside the transfer.
func TestTimeoutDuringTransfer(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}, {ts: 200, in: 1000, out: 3, hashes: []int{1, 2}}}
	rep := runYAML(t, pdEngine(1000, 1, "")+traceTraffic(t, rows,
		"{mode: trace, request_timeout_ms: 50, response_overhead: {base_ms: 2.0, per_output_token_us: 0}}"))
	r1, r2 := rep.Records[0], rep.Records[1]
	assert.Equal(t, report.StatusCanceled, r1.Status)
	assert.Equal(t, int64(50_000_000), r1.EndNs)
	assert.Equal(t, 0, r1.OutputTokens)
	assert.Equal(t, int64(52_000_000), r1.ReleaseNs) // no output: base only
	assert.Equal(t, report.NoTime, r1.FirstTokenNs)
	// r2 reuses r1's prompt blocks on the prefill worker: they were released, and cached
	assert.Equal(t, 992, r2.CachedTokens)
	assert.Equal(t, report.StatusCanceled, r2.Status) // the same slow link cancels it too
}

// Timeouts on a loaded Mooncake replay, with detokenization queues and (in P/D)
// handoffs waiting for blocks: cancellations hit every stage, and the run still
// conserves requests (INV-1) and KV blocks in every pool (INV-2, checked by Run).
func TestTimeoutsUnderLoad(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		spec := replaceOnce(mode(stressSpec(t)), "  scheduler:", "  detokenization: {base_us: 300, per_token_us: 20}\n  scheduler:")
		spec = replaceOnce(spec, "load: {mode: trace, speedup: 4}", "load: {mode: trace, speedup: 4, request_timeout_ms: 15000}")
		rep := runYAML(t, spec)
		s := rep.Summary
		assert.Equal(t, 400, s.Completed+s.Rejected+s.Failed+s.Canceled)
		assert.Positive(t, s.Canceled)
		assert.Positive(t, s.Completed)
		for _, r := range rep.Records {
			if r.Status == report.StatusCanceled {
				assert.Equal(t, r.SendNs+15_000_000_000, r.EndNs)
			}
		}
	})
}

package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// pdEngine1ms is one prefill and one decode worker of engine1ms joined by a
// 50 GB/s, 0.2 ms link; kvBytes 0 keeps the model's KV bytes per token
// (Qwen3-32B in bf16: 262,144).
func pdEngine1ms(blocks int, kvBytes int) string {
	override := ""
	if kvBytes > 0 {
		override = fmt.Sprintf(", kv_bytes_per_token: %d", kvBytes)
	}
	return engine1ms(blocks) + fmt.Sprintf(`  workers:
    disaggregated:
      prefill: {count: 1, tp: 1}
      decode: {count: 1, tp: 1}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2%s}
`, override)
}

// The decode worker reuses its own prefix cache (vLLM's NixlConnector pulls
// only the blocks the decode worker lacks) and caches the blocks it receives.
// The same 1,024-token prompt (64 blocks of 16) at 0 and at 100 ms, two
// output tokens each, Qwen3-32B's 262,144 KV bytes a token:
//
//	r1: prefill of 512 + 512 tokens (6.12 + 6.12 ms), the whole prompt moves
//	    (1,024 × 262,144 B / 50 GB/s + 0.2 = 5.569 ms), first decode 1.1 ms:
//	    TTFT 12.24 + 5.56870912 + 1.1 = 18.90870912 ms.
//	r2: the prefill worker finds 63 blocks and computes 16 tokens (1.16 ms);
//	    the decode worker finds the same 63 blocks (a lookup leaves the last
//	    token to compute), so 16 tokens move: 16 × 262,144 B / 50 GB/s +
//	    0.2 = 0.28388608 ms; TTFT 1.16 + 0.28388608 + 1.1 = 2.54388608 ms
//	    (7.82870912 ms when the whole prompt moved again).
func TestDecodeWorkerReusesItsPrefixCache(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1024, out: 2, hashes: []int{1, 2}}, {ts: 100, in: 1024, out: 2, hashes: []int{1, 2}}}
	rep := runYAML(t, pdEngine1ms(1000, 0)+traceTraffic(t, rows, "{mode: trace}"))
	r1, r2 := rep.Records[0], rep.Records[1]
	require.Equal(t, report.StatusCompleted, r1.Status)
	require.Equal(t, report.StatusCompleted, r2.Status)
	assert.InDelta(t, 5.56870912, msOf(r1.TransferNs), 1e-6)
	assert.InDelta(t, 18.90870912, ttftOf(r1), 1e-6)
	assert.Equal(t, 1008, r2.CachedTokens, "the prefill worker's hit")
	assert.InDelta(t, 0.28388608, msOf(r2.TransferNs), 1e-6)
	assert.InDelta(t, 2.54388608, ttftOf(r2), 1e-6)
	dec := rep.Metadata.Pools[1].PrefixCache[0]
	assert.Equal(t, int64(2), dec.Requests)
	assert.Equal(t, int64(2*1024), dec.Queries)
	assert.Equal(t, int64(1008), dec.Hits, "the decode worker's own hit")
}

// The decode side reserves exactly a prompt's blocks (vLLM PR 50558), not one
// more: under a small decode pool the extra block made a request wait for
// another to finish. 9 blocks of 16 tokens in each pool, two 64-token prompts
// (4 blocks each) at 0 with one output token, 100,000 KV bytes a token:
//
//	prefill: both prompts in one pass, 1 + 1.28 = 2.28 ms;
//	decode: 4 + 4 blocks reserved at once, both transfers 0.128 + 0.2 ms
//	    (→ 2.608), one decode pass of both, 1 + 0.2 ms: TTFT 3.808 ms each.
//	With 5 blocks each the second waited for the first (its decode pass
//	2.608 → 3.708), then moved and decoded: TTFT 5.136 ms.
func TestDecodeReservationIsThePromptsBlocks(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 64, out: 1, hashes: []int{1}}, {ts: 0, in: 64, out: 1, hashes: []int{2}}}
	rep := runYAML(t, pdEngine1ms(9, 100000)+traceTraffic(t, rows, "{mode: trace}"))
	for _, r := range rep.Records {
		require.Equal(t, report.StatusCompleted, r.Status)
		assert.InDelta(t, 0.328, msOf(r.TransferNs), 1e-9)
		assert.InDelta(t, 3.808, ttftOf(r), 1e-9)
	}
}

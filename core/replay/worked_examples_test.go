package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Worked example 1 (docs/design.md): two requests on one worker.
//
//	P1 0 → 7.12      r1 prefill 512              2 + 5.12
//	P2 7.12 → 14.00  r1 prefill 488 (done)       2 + 4.88        r1 #1
//	P3 14.00 → 17.10 r1 decode, r2 prefill 100   2 + 1.00 + 0.10 r1 #2, r2 #1
//	P4 17.10 → 19.30 r1 decode, r2 decode        2 + 0.20        r1 #3, r2 #2
func TestWorkedExample1_TwoRequestsOneWorker(t *testing.T) {
	rep := runYAML(t, traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}},
		{ts: 10, in: 100, out: 2, hashes: []int{3}},
	}, ""))
	require.Len(t, rep.Records, 2)
	r1, r2 := rep.Records[0], rep.Records[1]

	assert.Equal(t, int64(14_000_000), r1.FirstTokenNs)
	assert.Equal(t, int64(19_300_000), r1.EndNs)
	tpot, ok := r1.TPOT()
	require.True(t, ok)
	assert.InDelta(t, 2.65, tpot, 1e-12) // (19.30 − 14.00) / 2

	// r2 arrived during P2 (at 10.00) and waited for P3.
	assert.Equal(t, int64(10_000_000), r2.SendNs)
	ttft, _ := r2.TTFT()
	assert.InDelta(t, 7.10, ttft, 1e-12) // 17.10 − 10.00
	assert.InDelta(t, 9.30, r2.E2E(), 1e-12)
	tpot, _ = r2.TPOT()
	assert.InDelta(t, 2.20, tpot, 1e-12)

	assert.InDelta(t, 19.30, rep.Summary.DurationMs, 1e-12)
	// ITL pool: r1 [3.10, 2.20], r2 [2.20].
	require.NotNil(t, rep.Summary.ITL)
	assert.InDelta(t, (3.10+2.20+2.20)/3, rep.Summary.ITL.Mean, 1e-12)
	assert.InDelta(t, 3.10, rep.Summary.ITL.Max, 1e-12)
	assert.Equal(t, 2, rep.Summary.Completed)
}

// One request on an idle worker: TTFT is its prefill pass, and every later token
// takes one decode pass. ISL 300 (one chunk), OSL 5:
// prefill 2 + 3.00 = 5.00 ms; decodes 4 × 2.1 ms; E2E = 5.00 + 8.40 = 13.40 ms.
func TestSingleRequestIdleWorker(t *testing.T) {
	rep := runYAML(t, traceSpec(t, 1000, []traceRow{{ts: 0, in: 300, out: 5, hashes: []int{1}}}, ""))
	r := rep.Records[0]
	ttft, _ := r.TTFT()
	assert.InDelta(t, 5.00, ttft, 1e-12)
	assert.InDelta(t, 13.40, r.E2E(), 1e-12)
	assert.Equal(t, "completed", r.Status)
	assert.Equal(t, 5, r.OutputTokens)
}

// Worked example 4: after r1 (1000 tokens, hash ids [1, 2]) completes, the same
// prompt hits 62 full blocks (992 tokens) and computes 8: prefill 2 + 0.08 ms.
// A 992-token prompt of the same blocks is fully cached and recomputes its last
// block: 976 cached, 16 computed, prefill 2 + 0.16 ms.
func TestWorkedExample4_PrefixCache(t *testing.T) {
	rep := runYAML(t, traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 1, hashes: []int{1, 2}},
		{ts: 100, in: 1000, out: 1, hashes: []int{1, 2}},
		{ts: 200, in: 992, out: 1, hashes: []int{1, 2}},
		{ts: 300, in: 1000, out: 1, hashes: []int{9, 2}}, // different first block: no reuse
	}, ""))
	r := rep.Records
	assert.Equal(t, 0, r[0].CachedTokens)
	assert.Equal(t, 992, r[1].CachedTokens)
	ttft, _ := r[1].TTFT()
	assert.InDelta(t, 2.08, ttft, 1e-12)
	assert.Equal(t, 976, r[2].CachedTokens)
	ttft, _ = r[2].TTFT()
	assert.InDelta(t, 2.16, ttft, 1e-12)
	assert.Equal(t, 0, r[3].CachedTokens)
	assert.Equal(t, int64(992+976), rep.Summary.TotalCachedTokens)
}

// With caching off the same repeat computes its whole prompt again.
func TestPrefixCacheOff(t *testing.T) {
	yml := traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 1, hashes: []int{1, 2}},
		{ts: 100, in: 1000, out: 1, hashes: []int{1, 2}},
	}, "")
	yml = replaceOnce(yml, "enable_prefix_caching: true", "enable_prefix_caching: false")
	rep := runYAML(t, yml)
	assert.Equal(t, 0, rep.Records[1].CachedTokens)
	ttft, _ := rep.Records[1].TTFT()
	assert.InDelta(t, 14.00, ttft, 1e-12) // two chunks, as r1 in example 1
}

// A synthetic dataset of two 1000-token prompts sent in turn by one closed-loop
// client (linear engine of worked example 1, no client costs): the first pass
// over the dataset computes each prompt in two chunks (TTFT 7.12 + 6.88 =
// 14.00 ms, then two decodes of 2.1 ms: E2E 18.20 ms); the second finds its 62
// full blocks cached (worked example 4) and computes 8 tokens (TTFT 2.08 ms,
// E2E 6.28 ms).
func TestSyntheticDatasetReusesPrompts(t *testing.T) {
	yml := linearEngineFor(1000) + `
traffic:
  source: {type: synthetic, num_requests: 4, isl: 1000, osl: 3, dataset: {entries: 2, sampling: sequential}}
  load: {mode: concurrency, concurrency: 1}
`
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	wantCached := []int{0, 0, 992, 992}
	wantTTFT := []float64{14.00, 14.00, 2.08, 2.08}
	wantE2E := []float64{18.20, 18.20, 6.28, 6.28}
	send := 0.0
	for i, r := range rep.Records {
		assert.Equal(t, wantCached[i], r.CachedTokens, "request %d", i)
		ttft, _ := r.TTFT()
		assert.InDelta(t, wantTTFT[i], ttft, 1e-9, "request %d", i)
		assert.InDelta(t, wantE2E[i], r.E2E(), 1e-9, "request %d", i)
		assert.InDelta(t, send, msOf(r.SendNs), 1e-9, "request %d is sent when the previous ends", i)
		send += wantE2E[i]
	}
	assert.Equal(t, int64(2*992), rep.Summary.TotalCachedTokens)

	// Without the dataset every prompt is new: no request finds a block.
	rep = runYAML(t, replaceOnce(yml, ", dataset: {entries: 2, sampling: sequential}", ""))
	assert.Equal(t, int64(0), rep.Summary.TotalCachedTokens)
}

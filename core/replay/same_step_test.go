package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// vLLM caches a block when the step that fills it is scheduled, so a request
// admitted in the same step as an identical earlier one hits its blocks
// (docs/kv-cache.md). Two 1,000-token rows of the same hash ids at 0 on the
// 1 ms engine (512-token budget, 16-token blocks):
//
//	pass 1 (0 → 6.12): r1's first 512 tokens (1 + 5.12 ms); r2 finds no budget.
//	pass 2 (6.12 → 12.08): r1's last 488 tokens fill its blocks 32–61, cached
//	    as they are scheduled; r2 is admitted in the same pass, finds all 62
//	    blocks (992 tokens) and computes 8: 1 + 0.01 × 496 ms. Both TTFT 12.08.
//	pass 3 (→ 13.28): both decode (1 + 0.2 ms); both end.
//
// Caching at the pass end instead, r2 found r1's first 32 blocks only (512
// tokens), took the 24 tokens of budget left in pass 2 and its other 464 in
// pass 3: TTFT 17.98 ms, E2E 19.08 ms.
func TestSameStepAdmissionHitsTheBlocksBeingComputed(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 2, hashes: []int{1, 2}}, {ts: 0, in: 1000, out: 2, hashes: []int{1, 2}}}
	rep := runYAML(t, engine1ms(1000)+traceTraffic(t, rows, "{mode: trace}"))
	r1, r2 := rep.Records[0], rep.Records[1]
	assert.Equal(t, 0, r1.CachedTokens)
	assert.Equal(t, 992, r2.CachedTokens)
	assert.InDelta(t, 12.08, ttftOf(r1), 1e-9)
	assert.InDelta(t, 12.08, ttftOf(r2), 1e-9)
	assert.InDelta(t, 13.28, msOf(r2.EndNs), 1e-9)
	assert.InDelta(t, 13.28, msOf(r1.EndNs), 1e-9)
}

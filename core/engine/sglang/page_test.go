package sglang

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// A decode that opens a page needs the page (page_size 64; ScheduleBatch.
// new_tokens_required_next_decode: a request whose kv_committed_len is a
// multiple of the page). A pool of 320 tokens (five pages), nothing cached,
// two requests of 100 prompt and 40 output tokens: pass 1 prefills both (R1
// charged two pages and its 40 output tokens, 168; R2's 100 + 40 < 320 −
// 168), decode pass k ≥ 2 writes the KV at
// position 98 + k of each, so pass 30 writes position 128 of each, which
// opens a third page for each: 2 × 64 > the 320 − 2 × 2 × 64 = 64 left,
// and SGLang retracts R2 (the last of equal outputs and prompts): R1 decodes
// alone. Counting the tokens (2 ≤ 64 free) and not the pages, both decoded.
func TestDecodeOpeningAPageNeedsIt(t *testing.T) {
	opt := testOptions(0.01)
	opt.PageSize = 64
	rec := &recorder{}
	w, err := NewWorker(engine.Config{MaxNumSeqs: 16, MaxNumBatchedTokens: 16384, BlockSize: 64, NumBlocks: 5,
		MaxModelLen: 1 << 20, PrefixCaching: true, HashBlockTokens: 64, Options: opt}, rec)
	require.NoError(t, err)
	w.Add(newRequest(1, 100, 40))
	w.Add(newRequest(2, 100, 40))
	for step(w) {
	}
	require.Greater(t, len(rec.batches), 30)
	assert.Equal(t, []int{100, 100}, prefillTokens(rec.batches[0]))
	for i := 1; i < 29; i++ {
		assert.Equal(t, 2, rec.batches[i].Decodes, "pass %d", i+1)
	}
	assert.Equal(t, 1, rec.batches[29].Decodes, "pass 30")
	c := w.Counters()
	assert.Equal(t, c.KV.Allocated+c.KV.Reused, c.KV.Released, "%+v", c.KV)
	assert.Equal(t, 5, c.KVFree)
}

// A P/D decode server's request slots (decodeRequestSlots): through 0.5.13
// a pool of at most 32 gets twice itself more (20 → 60); from 0.5.14 the
// extra slots come from a given max_running_requests only (none: 20), two
// per request of a rank's share at most 32 (64 over dp 4: 16 → 64 + 32), none
// above it (128 → 64).
func TestDecodeRequestSlotsByRelease(t *testing.T) {
	r13, r14 := config.Release{Major: 0, Minor: 5, Patch: 13}, config.Release{Major: 0, Minor: 5, Patch: 14}
	assert.Equal(t, 60, decodeRequestSlots(r13, 20, 0, 1))
	assert.Equal(t, 20, decodeRequestSlots(r14, 20, 0, 1))
	assert.Equal(t, 96, decodeRequestSlots(r14, 64, 64, 4))
	assert.Equal(t, 64, decodeRequestSlots(r14, 64, 128, 1))
}

// From 0.5.16 a 1-token extend pass runs eagerly (it would pad to the
// smallest capture size, 4 > 2 × 1): PiecewiseMinTokens 2; a 2-token one
// replays (4 ≤ 4).
func TestOneTokenExtendRunsEagerly(t *testing.T) {
	o := Options{EagerLaunchNs: 1000, PiecewiseMaxTokens: 8192, PiecewiseMinTokens: 2}
	one, two := perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1}}}, perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2}}}
	o.ShapePass(&one)
	o.ShapePass(&two)
	assert.Equal(t, [2]float64{1000, 0}, [2]float64{one.HostLaunchNs, two.HostLaunchNs})
}

// From 0.5.22 a running ignore_eos request reserves all its tokens left,
// not × new_token_ratio (IgnoreEOSFullRoom): a pool of 1,000 tokens at ratio
// 0.1, R1 (200 + 400) running after pass 1 and R2 (200 + 400) waiting. R1's
// room is 0.1 × min(399, 4096) = 39.9 before (800 − 39.9 ≥ 600: R2 prefills
// at pass 2) and 399 from 0.5.22 (800 − 399 < 600: R2 waits, R1 decodes).
func TestIgnoreEOSRunningRoomAtRatioOne(t *testing.T) {
	for _, full := range []bool{false, true} {
		opt := testOptions(0.1)
		opt.IgnoreEOSFullRoom = full
		w, rec := newTestWorker(t, 1000, opt)
		w.Add(newRequest(1, 200, 400))
		require.True(t, step(w))
		w.Add(newRequest(2, 200, 400))
		require.True(t, step(w))
		assert.Equal(t, !full, len(rec.batches[1].Prefill) == 1, "full room %v: R2 prefills at pass 2", full)
		assert.Equal(t, full, rec.batches[1].Decodes == 1, "full room %v: R1 decodes at pass 2", full)
	}
}

// From 0.5.11 add_one_req's check counts a page more (PageInAdmitCheck):
// a pool of 1,000 tokens at page 1 and R1 of 499 + 500: 999 < 1,000 is
// admitted before, and 999 + 1 ≥ 1,000 is not.
func TestAdmitCheckCountsAPage(t *testing.T) {
	for _, page := range []bool{false, true} {
		opt := testOptions(0.1)
		opt.PageInAdmitCheck = page
		w, _ := newTestWorker(t, 1000, opt)
		w.Add(newRequest(1, 499, 500))
		assert.Equal(t, !page, step(w), "page in the check %v", page)
	}
}

// retract_decode's order with EAGLE: R1 (40-token prompt) and R2 (30) run
// with equal outputs after one prefill pass; a retraction sorts them
// (fewest outputs, then longest prompt, out first: R1 goes) from 0.5.17,
// and through 0.5.16 takes the batch's last (R2) without sorting.
func TestEAGLERetractionOrderByRelease(t *testing.T) {
	for _, sorts := range []bool{false, true} {
		opt := testOptions(0.1)
		opt.DraftSteps, opt.Acceptance, opt.RetractSortsSpec = 1, []float64{0}, sorts
		w, _ := newTestWorker(t, 1000, opt)
		r1, r2 := newRequest(1, 40, 40), newRequest(2, 30, 40)
		w.Add(r1)
		w.Add(r2)
		require.True(t, step(w))
		require.True(t, step(w))
		require.Len(t, w.running, 2)
		w.retract()
		require.Len(t, w.running, 1)
		kept := int64(1)
		if sorts {
			kept = 2
		}
		assert.Equal(t, kept, w.running[0].ID, "sorted %v", sorts)
	}
}

// From 0.5.22 the overlap scheduler skips the extra decode of a request
// whose queued result finishes it (SkipFinishingDecode): R1 (10 prompt
// tokens, 3 output) takes 3 passes under the overlap scheduler, not the 4
// of TestOverlapDecodesAFinishedRequestOnce.
func TestOverlapSkipsTheFinishingDecodeFrom0522(t *testing.T) {
	opt := testOptions(0.1)
	opt.Overlap, opt.SkipFinishingDecode = true, true
	w, rec := newTestWorker(t, 1000, opt)
	w.Add(newRequest(1, 10, 3))
	for step(w) {
	}
	assert.Len(t, rec.batches, 3)
	checkBalanced(t, w)
}

package sglang

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/engine"
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

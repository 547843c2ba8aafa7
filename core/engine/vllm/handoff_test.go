package vllm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// hashedRequest is newRequest with the prefix hashes of its prompt's blocks.
func hashedRequest(id int64, prompt, output int, hashes []uint64) *engine.Request {
	r := Family{}.NewRequest()
	r.Reset(id, prompt, output, hashes, nil)
	return r
}

// A decode worker reserves exactly a prompt's blocks for its transfer (vLLM
// PR 50558: num_local ≤ num_remote), not one more for the token its first pass
// computes: that pass computes the prompt's last token again, inside the
// prompt's blocks. 4 blocks of 4 tokens, two handoffs of 8-token prompts and
// one output token each: 2 + 2 blocks, both reserved at once (with a block
// more each, the second waited for the first to finish), and one pass decodes
// both at KV length 7 + 7 and finishes them.
func TestHandoffReservesExactlyThePromptsBlocks(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 64})
	h1 := newRequest(1, 8, 1)
	h2 := newRequest(2, 8, 1)
	require.True(t, w.Handoff(h1))
	require.True(t, w.Handoff(h2))
	assert.Equal(t, 0, w.KVFree())
	assert.Equal(t, 8, h1.PulledTokens, "no prefix hashes: the whole prompt moves")
	w.KVArrived(h1)
	w.KVArrived(h2)
	outs := run(w)
	require.Len(t, rec.batches, 1)
	assert.Equal(t, 2, rec.batches[0].Decodes)
	assert.Empty(t, rec.batches[0].Prefill)
	assert.Equal(t, int64(14), rec.batches[0].DecodeKVSum)
	assert.Equal(t, 2, rec.batches[0].Samplers)
	require.Len(t, outs[0], 4) // a token and the end, each
	assert.Equal(t, 4, w.KVFree())
	// With a second output token the request needs the block of token 8: it
	// takes it in its second pass, as an aggregated request's decode does.
	h3 := newRequest(3, 8, 2)
	require.True(t, w.Handoff(h3))
	assert.Equal(t, 2, w.KVFree())
	w.KVArrived(h3)
	run(w)
	assert.Equal(t, 2, h3.Generated)
	assert.Equal(t, int64(2+2+2+1), w.KVStats().Allocated)
}

// The decode worker looks its own prefix cache up first and the transfer
// brings only what it lacks (vLLM's NixlConnector: get_num_new_matched_tokens
// subtracts the local hit), and it caches the blocks it receives. Blocks of
// 4 tokens: an 8-token prompt of hashes [11 12] moves whole the first time
// (nothing cached); the same prompt again finds its first block (a lookup
// stops at ⌊(8 − 1) / 4⌋ = 1 block: the last token is computed again) and
// pulls 4 tokens; a 9-token prompt over the same two blocks finds both and
// pulls 1. The lookups count in the worker's PrefixCacheStats.
func TestHandoffReusesTheDecodeWorkersPrefixCache(t *testing.T) {
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 8, MaxModelLen: 64, PrefixCaching: true})
	hashes := []uint64{11, 12}
	h1 := hashedRequest(1, 8, 1, hashes)
	require.True(t, w.Handoff(h1))
	assert.Equal(t, 8, h1.PulledTokens)
	w.KVArrived(h1)
	run(w)
	assert.Equal(t, 2, w.KVCached(), "the blocks it received stay cached")

	h2 := hashedRequest(2, 8, 1, hashes)
	require.True(t, w.Handoff(h2))
	assert.Equal(t, 4, h2.PulledTokens)
	assert.Equal(t, 4, h2.CachedTokens)
	h3 := hashedRequest(3, 9, 1, hashes)
	require.True(t, w.Handoff(h3))
	assert.Equal(t, 1, h3.PulledTokens)
	assert.Equal(t, 8-2-2, w.KVFree(), "h2 holds block 0 and a new one; h3 block 0 too, block 1 and a new one")
	w.KVArrived(h2)
	w.KVArrived(h3)
	run(w)
	assert.Equal(t, PrefixCacheStats{Requests: 3, Queries: 8 + 8 + 9, Hits: 0 + 4 + 8}, w.PrefixCacheStats())
	st := w.KVStats()
	assert.Equal(t, st.Released, st.Allocated+st.Reused)
	assert.Equal(t, 8, w.KVFree())
}

// vLLM caches a block when the step that fills it is scheduled
// (KVCacheManager.allocate_slots → cache_blocks), so a request admitted in
// the same step as an identical earlier one already hits its blocks. Blocks
// of 4 tokens, two 9-token prompts of hashes [1 2] admitted in one pass: the
// first computes all 9 tokens, the second finds both blocks and computes its
// last token only.
func TestSameStepAdmissionHitsTheBlocksJustScheduled(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 16, MaxModelLen: 64, PrefixCaching: true})
	r1 := hashedRequest(1, 9, 2, []uint64{1, 2})
	r2 := hashedRequest(2, 9, 2, []uint64{1, 2})
	w.Add(r1)
	w.Add(r2)
	run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 9, PrefixTokens: 0}, {NewTokens: 1, PrefixTokens: 8}}, rec.batches[0].Prefill)
	assert.Equal(t, 0, r1.CachedTokens)
	assert.Equal(t, 8, r2.CachedTokens)
	assert.Equal(t, PrefixCacheStats{Requests: 2, Queries: 18, Hits: 8}, w.PrefixCacheStats())
	st := w.KVStats()
	assert.Equal(t, int64(3+1), st.Allocated, "r2 took one block of its own, for its last token")
	assert.Equal(t, st.Released, st.Allocated+st.Reused)
}

// A watched worker records its KV events as vLLM publishes them: BlockStored
// as a block is cached (when the pass that fills it is formed), BlockRemoved
// as its content is evicted. 3 blocks of 4 tokens: r1's 9-token prompt of
// hashes [1 2] stores 1 and 2; r2's prompt of [3 4] then takes every block,
// the released tail (no content) first, then r1's blocks in release order
// (last block first): 2 and 1 are removed, 3 and 4 stored.
func TestWatchedWorkerRecordsKVEvents(t *testing.T) {
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 3, MaxModelLen: 12, PrefixCaching: true})
	assert.Nil(t, w.KVEvents(), "not watched: none kept")
	w.WatchKV()
	w.Add(hashedRequest(1, 9, 1, []uint64{1, 2}))
	_, ok := w.StartPass()
	require.True(t, ok)
	assert.Equal(t, []engine.KVEvent{{Hash: 1, Stored: true}, {Hash: 2, Stored: true}}, w.KVEvents())
	w.FinishPass()
	assert.Empty(t, w.KVEvents(), "a release caches, it drops nothing")
	w.Add(hashedRequest(2, 9, 1, []uint64{3, 4}))
	_, ok = w.StartPass()
	require.True(t, ok)
	assert.Equal(t, []engine.KVEvent{{Hash: 2, Stored: false}, {Hash: 1, Stored: false}, {Hash: 3, Stored: true}, {Hash: 4, Stored: true}}, w.KVEvents())
	w.FinishPass()
}

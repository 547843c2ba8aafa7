package vllm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/perf"
)

// A hybrid model's request holds StateBlocks blocks for its recurrent state
// besides its KV blocks, from its admission to its end (vLLM's hybrid
// manager: one block a state group). 10 blocks of 16 tokens, 3 state
// blocks a request: a 40-token prompt takes 3 KV + 3 state blocks, so a
// second one (6 more) waits for the first to finish; a request of 120
// tokens (8 + 3 blocks) can never run.
func TestStateBlocksPerRequest(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 10, MaxModelLen: 4096, StateBlocks: 3})
	assert.Contains(t, w.CheckFits(110, 11), "needs 11 KV blocks, more than the whole cache (10 blocks")
	assert.Empty(t, w.CheckFits(100, 10)) // 7 + 3
	w.Add(newRequest(1, 40, 2))
	w.Add(newRequest(2, 40, 2))
	_, ok := w.StartPass()
	require.True(t, ok)
	assert.Equal(t, []perf.Chunk{{NewTokens: 40}}, rec.batches[0].Prefill)
	assert.Equal(t, 4, w.KVFree())
	w.FinishPass()
	_, ok = w.StartPass() // r1 decodes (its KV fits its 3 blocks); r2 still does not fit
	require.True(t, ok)
	assert.Empty(t, rec.batches[1].Prefill)
	w.FinishPass() // r1 done: its 6 blocks are free again
	assert.Equal(t, 10, w.KVFree())
	_, ok = w.StartPass()
	require.True(t, ok)
	assert.Equal(t, []perf.Chunk{{NewTokens: 40}}, rec.batches[2].Prefill)
	assert.Equal(t, 4, w.KVFree())
	w.FinishPass()
	run(w)
	assert.Equal(t, 10, w.KVFree())
}

// In vLLM's align mode (Scheduler._mamba_block_aligned_split) a prefill
// chunk stops on the prompt's last block boundary, so that the recurrent
// state there is cached: a 1,000-token prompt in 784-token blocks computes
// 784 tokens, then 216 and samples; a chunk the budget would end inside a
// block is cut to whole blocks. Without align mode it is one pass.
func TestMambaAlignSplit(t *testing.T) {
	cfg := Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 8192, BlockSize: 784, NumBlocks: 100, MaxModelLen: 8192,
		StateBlocks: 3, PrefixCaching: true, MambaAlign: true}
	w, rec := newTestWorker(t, cfg)
	w.Add(newRequest(1, 1000, 2))
	run(w)
	require.Len(t, rec.batches, 3)
	assert.Equal(t, []perf.Chunk{{NewTokens: 784}}, rec.batches[0].Prefill)
	assert.Equal(t, 0, rec.batches[0].Samplers)
	assert.Equal(t, []perf.Chunk{{NewTokens: 216, PrefixTokens: 784}}, rec.batches[1].Prefill)
	assert.Equal(t, 1, rec.batches[1].Samplers)

	// a 2,000-token prompt under a 1,000-token budget: 784 (whole blocks
	// before the last boundary, 1,568), 784, then 432
	cfg.MaxNumBatchedTokens = 1000
	w, rec = newTestWorker(t, cfg)
	w.Add(newRequest(1, 2000, 1))
	run(w)
	require.Len(t, rec.batches, 3)
	assert.Equal(t, []perf.Chunk{{NewTokens: 784}}, rec.batches[0].Prefill)
	assert.Equal(t, []perf.Chunk{{NewTokens: 784, PrefixTokens: 784}}, rec.batches[1].Prefill)
	assert.Equal(t, []perf.Chunk{{NewTokens: 432, PrefixTokens: 1568}}, rec.batches[2].Prefill)

	cfg.MambaAlign, cfg.PrefixCaching, cfg.MaxNumBatchedTokens = false, false, 8192
	w, rec = newTestWorker(t, cfg)
	w.Add(newRequest(1, 1000, 2))
	run(w)
	require.Len(t, rec.batches, 2)
	assert.Equal(t, []perf.Chunk{{NewTokens: 1000}}, rec.batches[0].Prefill)
}

// A prefix hit in align mode ends where a recurrent state is cached: the
// first 2,000-token prompt (blocks of 784) caches states at the boundaries
// its chunks end on, 784 and 1,568 (budget 1,000); the same prompt again
// finds both full blocks and their states (1,568 tokens). A prompt whose
// first computation passed 1,568 in one chunk cached no state at 784: the
// repeat finds only the state at 1,568.
func TestMambaAlignHitsEndAtCachedStates(t *testing.T) {
	hashes := []uint64{11, 12}
	for _, c := range []struct {
		budget, hit int
	}{{1000, 1568}, {8192, 1568}} {
		w, _ := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: c.budget, BlockSize: 784, NumBlocks: 100, MaxModelLen: 8192,
			StateBlocks: 3, PrefixCaching: true, MambaAlign: true})
		w.Add(hashedRequest(1, 2000, 1, hashes))
		run(w)
		r2 := hashedRequest(2, 2000, 1, hashes)
		w.Add(r2)
		run(w)
		assert.Equal(t, c.hit, r2.CachedTokens, "budget %d", c.budget)
	}
	// 1,600 tokens in one chunk: the pass stops at 1,568 (the last boundary)
	// and caches the state there only; a 1,200-token prompt of the same
	// first block finds the block but no state at its end: no hit
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 8192, BlockSize: 784, NumBlocks: 100, MaxModelLen: 8192,
		StateBlocks: 3, PrefixCaching: true, MambaAlign: true})
	w.Add(hashedRequest(1, 1600, 1, hashes))
	run(w)
	r2 := hashedRequest(2, 1200, 1, hashes[:1])
	w.Add(r2)
	run(w)
	assert.Equal(t, 0, r2.CachedTokens)
}

// A chunked local-attention window (−C, perf.WindowKeys) gives each decode
// kv mod C + 1 keys, walked request by request (such a model never decodes
// steadily): a 10-token prompt with chunks of 8 decodes at KV 10, 11, …,
// reading 3, 4, …, 8, 1, 2, … keys.
func TestChunkedDecodeWindow(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
		DecodeWindows: []int{-8}})
	w.Add(newRequest(1, 10, 12))
	run(w)
	require.Len(t, rec.batches, 12)
	for j := 1; j < 12; j++ {
		kv := 9 + j
		assert.Equal(t, []int64{int64(kv%8 + 1)}, rec.batches[j].DecodeWindowSums, "pass %d", j)
	}
	assert.Equal(t, 0, w.steady.n)
}

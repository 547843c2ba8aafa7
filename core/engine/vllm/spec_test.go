package vllm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/perf"
)

// tokensOf counts each pass's OutTokens of the request with id.
func tokensOf(outs [][]Out, id int64) []int {
	n := make([]int, len(outs))
	for i, o := range outs {
		for _, x := range o {
			if x.Req.ID == id && x.Kind == OutToken {
				n[i]++
			}
		}
	}
	return n
}

// Speculative decoding's token budget: 3 drafts a step, acceptance
// [1, 1, 0.5] (2.5 drafts accepted when all 3 are verified, 1 when only the
// first is), max_num_batched_tokens 6, two requests of 4 prompt and 10 output
// tokens, blocks of 4 tokens.
//   - pass 1: r1's prompt (4) and 2 of r2's (the budget); r1 samples its
//     first token, and has 3 drafts for the next step;
//   - pass 2: r1's token and its 3 drafts (1 + 3 = 4 tokens), r2's last 2
//     prompt tokens (6 in all): r1 accepts ⌊2.5⌋ = 2 (0.5 carried), 3
//     tokens; its KV slots: 4 computed + 4 scheduled + 3 lookahead = 11, 3 blocks;
//   - pass 3: r1 takes 4, r2 the 2 left (its token and 1 draft): r1 accepts
//     ⌊0.5 + 2.5⌋ = 3 (4 tokens: 8 of 10), r2 its 1 (2 tokens: 3);
//   - pass 4: the same split: r1 accepts 2 (0.5 carried) but has 2 tokens
//     left and ends; r2 2 tokens (5);
//   - pass 5: r2 alone, 4 tokens: 2 accepted, 3 tokens (8); pass 6: 3
//     accepted, 2 tokens left: it ends.
//
// Every pass runs the draft 3 times (DraftSteps); each verified position
// samples.
func TestSpecDecodeTokenBudget(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 6, BlockSize: 4, NumBlocks: 100, MaxModelLen: 4096,
		Options: Options{SpecTokens: 3, Acceptance: []float64{1, 1, 0.5}}})
	r1, r2 := newRequest(1, 4, 10), newRequest(2, 4, 10)
	w.Add(r1)
	w.Add(r2)
	var outs [][]Out
	var blocks []int
	for w.HasWork() {
		_, ok := w.StartPass()
		require.True(t, ok)
		o, _ := w.FinishPass()
		outs = append(outs, append([]Out(nil), o...))
		blocks = append(blocks, len(own(r1).blocks))
	}
	require.Len(t, rec.batches, 6)
	assert.Equal(t, []perf.Chunk{{NewTokens: 4}, {NewTokens: 2}}, rec.batches[0].Prefill)
	assert.Equal(t, perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2, PrefixTokens: 2}}, Decodes: 1, DecodeKVSum: 4, SpecTokens: 3,
		Samplers: 1 + 3 + 1, DraftSteps: 3}, rec.batches[1])
	for i, kv := range []int64{7 + 4, 11 + 6} { // r1 at 7 then 11 computed, r2 at 4 then 6
		assert.Equal(t, perf.Batch{Decodes: 2, DecodeKVSum: kv, SpecTokens: 3 + 1, Samplers: 4 + 2, DraftSteps: 3}, rec.batches[2+i], "pass %d", 3+i)
	}
	assert.Equal(t, perf.Batch{Decodes: 1, DecodeKVSum: 8, SpecTokens: 3, Samplers: 4, DraftSteps: 3}, rec.batches[4])
	for _, b := range rec.batches {
		assert.LessOrEqual(t, b.Tokens(), 6)
	}
	assert.Equal(t, []int{1, 3, 4, 2, 0, 0}, tokensOf(outs, 1))
	assert.Equal(t, []int{0, 1, 2, 2, 3, 2}, tokensOf(outs, 2))
	assert.Equal(t, 3, blocks[1], "r1 after pass 2: 11 slots in blocks of 4")
}

// A request must fit the cache with its last step's drafts and lookahead:
// 4 + 9 output KV tokens (every output token but the last) + 2 × 3 = 19
// tokens, 5 blocks of 4; 4 blocks fit it without speculative decoding (13
// tokens).
func TestSpecDecodeCheckFits(t *testing.T) {
	cfg := Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 4096}
	w, _ := newTestWorker(t, cfg)
	assert.Empty(t, w.CheckFits(4, 10))
	cfg.Options = Options{SpecTokens: 3}
	w, _ = newTestWorker(t, cfg)
	assert.Contains(t, w.CheckFits(4, 10), "needs 5 KV blocks")
	_, err := NewWorker(Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 4096,
		Options: Options{SpecTokens: 1, Acceptance: []float64{0.5, 0.5}}}, &recorder{})
	assert.Error(t, err)
}

// With speculative decoding a prefix-cache hit drops its last block (the
// draft needs that block's hidden states): two 9-token prompts of hashes
// [1 2], blocks of 4; the second finds block 1 only and computes 5 tokens
// (8 found and 1 computed without).
func TestSpecDecodeHitDropsItsLastBlock(t *testing.T) {
	for _, tc := range []struct {
		opt    any
		cached int
	}{{nil, 8}, {Options{SpecTokens: 2}, 4}} {
		w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 16, MaxModelLen: 64,
			PrefixCaching: true, Options: tc.opt})
		r1 := hashedRequest(1, 9, 2, []uint64{1, 2})
		r2 := hashedRequest(2, 9, 2, []uint64{1, 2})
		w.Add(r1)
		w.Add(r2)
		run(w)
		assert.Equal(t, []perf.Chunk{{NewTokens: 9}, {NewTokens: 9 - tc.cached, PrefixTokens: tc.cached}}, rec.batches[0].Prefill, "%v", tc.opt)
		assert.Equal(t, tc.cached, r2.CachedTokens, "%v", tc.opt)
	}
}

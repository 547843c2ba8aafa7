package sglang

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// recorder is a perf model that keeps a copy of every batch it priced.
type recorder struct{ batches []perf.Batch }

func (r *recorder) PassTime(b *perf.Batch) int64 {
	c := perf.Batch{Samplers: b.Samplers, Decodes: b.Decodes, DecodeKVSum: b.DecodeKVSum, SpecTokens: b.SpecTokens, DraftSteps: b.DraftSteps,
		HostLaunchNs: b.HostLaunchNs}
	c.Prefill = append(c.Prefill, b.Prefill...)
	r.batches = append(r.batches, c)
	return 1000
}
func (r *recorder) Name() string { return "recorder" }

// testOptions: page size 1, no chunking, the radix cache on, fcfs, a
// constant new_token_ratio.
func testOptions(ratio float64) Options {
	return Options{MaxPrefillTokens: 16384, PageSize: 1, Policy: config.SGLangPolicyFCFS,
		InitNewTokenRatio: ratio, MinNewTokenRatio: ratio, RadixCache: true, MaxReqLen: 1 << 20, MaxReqInputLen: 1 << 20}
}

func newTestWorker(t *testing.T, tokens int, opt Options) (*Worker, *recorder) {
	t.Helper()
	rec := &recorder{}
	w, err := NewWorker(engine.Config{MaxNumSeqs: 16, MaxNumBatchedTokens: 16384, BlockSize: 1, NumBlocks: tokens,
		MaxModelLen: 1 << 20, PrefixCaching: opt.RadixCache, HashBlockTokens: 16, PartialBlockHash: true, Options: opt}, rec)
	require.NoError(t, err)
	return w, rec
}

func newRequest(id int64, prompt, output int, hashes ...uint64) *engine.Request {
	r := Family{}.NewRequest()
	r.Reset(id, prompt, output, hashes, nil)
	return r
}

// step runs one pass (false: nothing to run).
func step(w *Worker) bool {
	if _, ok := w.StartPass(); !ok {
		return false
	}
	w.FinishPass()
	return true
}

// checkBalanced: with nothing on the worker, every token is free or cached and
// the counters balance (INV-2).
func checkBalanced(t *testing.T, w *Worker) {
	t.Helper()
	c := w.Counters()
	assert.Equal(t, c.KV.Allocated+c.KV.Reused, c.KV.Released, "%+v", c.KV)
	assert.Equal(t, w.capacity, c.KVFree)
}

// Admission reserves decode room by new_token_ratio (PrefillAdder): a pool of
// 1,000 tokens; R1 (200 prompt, 400 output) runs; R2 (the same) arrives.
// R2 needs 200 + 400 = 600 tokens; what is left is 800 free minus R1's
// reserve, min(400 − 1, 4096) × ratio. At the initial ratio 0.7 that is
// 800 − 279.3 = 520.7 < 600: R2 waits, the batch is full (no prefill is
// tried again until a running request finishes) and R1 decodes alone until
// its 400th token at pass 400; R2 prefills at pass 401. At ratio 0.1:
// 800 − 39.9 = 760.1 ≥ 600, and R2's prefill is pass 2 (prefill first: R1
// does not decode in it).
func TestAdmissionReservesDecodeRoomByNewTokenRatio(t *testing.T) {
	w, rec := newTestWorker(t, 1000, testOptions(0.7))
	w.Add(newRequest(1, 200, 400))
	require.True(t, step(w))
	w.Add(newRequest(2, 200, 400))
	for step(w) {
	}
	require.Len(t, rec.batches, 800)
	assert.Equal(t, []perf.Chunk{{NewTokens: 200}}, rec.batches[0].Prefill)
	for i := 1; i < 400; i++ {
		require.Equal(t, 1, rec.batches[i].Decodes, "pass %d", i+1)
		require.Empty(t, rec.batches[i].Prefill, "pass %d", i+1)
	}
	assert.Equal(t, []perf.Chunk{{NewTokens: 200}}, rec.batches[400].Prefill, "pass 401: R2")
	checkBalanced(t, w)

	w, rec = newTestWorker(t, 1000, testOptions(0.1))
	w.Add(newRequest(1, 200, 400))
	require.True(t, step(w))
	w.Add(newRequest(2, 200, 400))
	require.True(t, step(w))
	assert.Equal(t, []perf.Chunk{{NewTokens: 200}}, rec.batches[1].Prefill)
	assert.Equal(t, 0, rec.batches[1].Decodes, "R1 does not decode in a prefill pass")
	require.True(t, step(w))
	assert.Equal(t, 2, rec.batches[2].Decodes)
	assert.Equal(t, int64(200+200), rec.batches[2].DecodeKVSum) // each reads its 200-token prompt
}

// A retraction (retract_decode), by hand: a pool of 80 tokens, ratio 0.1.
// R1 (20 + 30) prefills at pass 1; R2 (20 + 30) arrives and is admitted at
// pass 2 (60 free − 0.1 × 29 = 57.1 ≥ 50). Both decode from pass 3, two
// tokens a pass from 40 free: after pass 22 none is left and each has 21
// output tokens. Pass 23 cannot give both a token: R2 (fewest outputs, then
// longest prompt; here the last of equals) is retracted: its 20 decode
// tokens freed, its prompt left in the radix tree unlocked, the ratio reset
// to (21 + 20) / 30, capped at 1. R1 decodes alone; R2, re-matched to its
// prompt (20 tokens), needs 21 + 9 but locking its prompt leaves 19 − 8:
// it waits until R1's 30th token (pass 31). At pass 32 it prefills 21 tokens
// on its 20 cached ones, evicting R1's 29 decode tokens (the LRU leaf), and
// counts 40 − 20 = 20 recomputed tokens and 20 cached tokens (SGLang's
// cached_tokens counts a retracted request's re-match).
func TestRetractionTimeline(t *testing.T) {
	w, rec := newTestWorker(t, 80, testOptions(0.1))
	r1, r2 := newRequest(1, 20, 30), newRequest(2, 20, 30)
	w.Add(r1)
	require.True(t, step(w))
	w.Add(r2)
	require.True(t, step(w))
	assert.Equal(t, []perf.Chunk{{NewTokens: 20}}, rec.batches[1].Prefill)
	for p := 3; p <= 22; p++ {
		require.True(t, step(w))
		require.Equal(t, 2, rec.batches[p-1].Decodes, "pass %d", p)
	}
	assert.Equal(t, 0, w.free)
	assert.Equal(t, 21, r1.Generated)
	assert.Equal(t, 21, r2.Generated)
	require.True(t, step(w)) // pass 23
	assert.Equal(t, 1, r2.Preemptions)
	assert.Equal(t, 1.0, w.ratio)
	assert.Equal(t, 1, rec.batches[22].Decodes)
	assert.Equal(t, int64(40), rec.batches[22].DecodeKVSum)
	assert.Equal(t, 20, w.tree.evictable, "R2's prompt stays in the tree, unlocked")
	for p := 24; p <= 31; p++ {
		require.True(t, step(w))
		require.Equal(t, 1, rec.batches[p-1].Decodes, "pass %d: R1 alone", p)
	}
	assert.Equal(t, 30, r1.Generated)
	require.True(t, step(w)) // pass 32
	assert.Equal(t, []perf.Chunk{{NewTokens: 21, PrefixTokens: 20}}, rec.batches[31].Prefill)
	assert.Equal(t, 20, r2.CachedTokens)
	assert.Equal(t, int64(20), w.recomputed)
	assert.Equal(t, int64(29), w.kv.Evicted)
	for step(w) {
	}
	assert.Equal(t, 30, r2.Generated)
	assert.Equal(t, 40, len(rec.batches), "R2's last 8 tokens: passes 33…40")
	checkBalanced(t, w)
	assert.Equal(t, engine.PrefixCacheStats{Requests: 2, Queries: 40, PreemptedRequests: 1, PreemptedQueries: 41, PreemptedHits: 20},
		w.prefix)
}

// lpm (longest prefix match first): C (48 tokens of hash blocks 1, 2, 3)
// runs and leaves them in the radix tree. A (64 private tokens) then B (the
// same three blocks, then 16 of its own) wait, with a prefill budget of 64
// tokens. fcfs admits A (64 new tokens), which spends the budget; lpm sorts
// B first: 16 new tokens on a 48-token prefix, and A no longer fits.
func TestLPMReorder(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   perf.Chunk
	}{{config.SGLangPolicyFCFS, perf.Chunk{NewTokens: 64}}, {config.SGLangPolicyLPM, perf.Chunk{NewTokens: 16, PrefixTokens: 48}}} {
		opt := testOptions(0.1)
		opt.Policy, opt.MaxPrefillTokens = tc.policy, 64
		w, rec := newTestWorker(t, 10000, opt)
		w.Add(newRequest(1, 48, 1, 1, 2, 3))
		for step(w) {
		}
		w.Add(newRequest(2, 64, 4))
		w.Add(newRequest(3, 64, 4, 1, 2, 3))
		require.True(t, step(w))
		assert.Equal(t, []perf.Chunk{tc.want}, rec.batches[len(rec.batches)-1].Prefill, tc.policy)
	}
}

// In-batch prefix caching under lpm: D and E share 48 tokens that nothing
// cached holds, F shares nothing: E, which matches ≥ 32 tokens of D ahead of
// it in the queue and ≤ 32 of the cache, waits behind F.
func TestLPMDeprioritizesAnInBatchPrefix(t *testing.T) {
	opt := testOptions(0.1)
	opt.Policy = config.SGLangPolicyLPM
	w, _ := newTestWorker(t, 10000, opt)
	d, e, f := newRequest(1, 64, 4, 7, 8, 9), newRequest(2, 64, 4, 7, 8, 9), newRequest(3, 64, 4)
	for _, r := range []*engine.Request{d, e, f} {
		w.Add(r)
	}
	w.calcPriority()
	assert.Equal(t, []*Request{own(d), own(f), own(e)}, w.waiting)
}

// A radix hit of a partial prefix: X's known content is 40 tokens, blocks 1
// and 2 (16 each) and 8 tokens of block 5. Y holds block 5 whole (the same
// content id) and 8 tokens more: the radix tree gives Y all 40 of X's
// tokens, token by token, where a cache of 16-token blocks holds X's two
// full blocks only (32).
func TestRadixHitOfAPartialBlock(t *testing.T) {
	w, rec := newTestWorker(t, 10000, testOptions(0.1))
	x := newRequest(1, 40, 1, 1, 2, 5)
	x.PartialTokens = 8
	w.Add(x)
	for step(w) {
	}
	y := newRequest(2, 56, 2, 1, 2, 5, 6)
	y.PartialTokens = 8
	w.Add(y)
	require.True(t, step(w))
	assert.Equal(t, []perf.Chunk{{NewTokens: 16, PrefixTokens: 40}}, rec.batches[len(rec.batches)-1].Prefill)
	assert.Equal(t, 40, y.CachedTokens)
	for step(w) {
	}
	checkBalanced(t, w)
}

// Without the radix cache (ChunkCache), the simulated requests (all run to
// their output length, ignore_eos) are admitted by add_one_req_ignore_eos:
// only if, with each running to its end, the pool never runs out. R1 (30 +
// 50) runs; R2 (10 + 20) arrives. Sorted by tokens left, R2 (20) then R1
// (49): with R2's 10 prompt tokens taken, the free tokens must exceed
// 20 × 2 requests + a reserve of 1 each, then R1's 49 beyond the tokens R2
// holds now (prompt + output: 10) plus 1. A pool of 82 leaves
// 82 − 30 − 10 = 42 free, and 42 − 40 = 2 ≤ 2: refused; a pool of 100
// leaves 60: 20 > 2, then 60 + 10 − 49 = 21 > 1: admitted.
func TestIgnoreEOSAdmissionWithoutRadix(t *testing.T) {
	for _, tc := range []struct {
		tokens int
		admit  bool
	}{{82, false}, {100, true}} {
		opt := testOptions(0.7)
		opt.RadixCache = false
		w, rec := newTestWorker(t, tc.tokens, opt)
		w.Add(newRequest(1, 30, 50))
		require.True(t, step(w))
		w.Add(newRequest(2, 10, 20))
		require.True(t, step(w))
		got := len(rec.batches[1].Prefill) == 1
		assert.Equal(t, tc.admit, got, "pool of %d", tc.tokens)
		for step(w) {
		}
		checkBalanced(t, w)
	}
}

// A chunked prompt: chunked_prefill_size 64 cuts a 150-token prompt into
// 64 + 64 + 22; each chunk after the first sees the earlier ones as its
// prefix (the radix tree holds them between passes); the last samples.
func TestChunkedPrefill(t *testing.T) {
	opt := testOptions(0.1)
	opt.ChunkedPrefillSize = 64
	w, rec := newTestWorker(t, 10000, opt)
	w.Add(newRequest(1, 150, 2))
	for step(w) {
	}
	require.Len(t, rec.batches, 4)
	assert.Equal(t, []perf.Chunk{{NewTokens: 64}}, rec.batches[0].Prefill)
	assert.Equal(t, []perf.Chunk{{NewTokens: 64, PrefixTokens: 64}}, rec.batches[1].Prefill)
	assert.Equal(t, []perf.Chunk{{NewTokens: 22, PrefixTokens: 128}}, rec.batches[2].Prefill)
	assert.Equal(t, 0, rec.batches[1].Samplers)
	assert.Equal(t, 1, rec.batches[2].Samplers)
	assert.Equal(t, 1, rec.batches[3].Decodes)
	checkBalanced(t, w)
}

// Mixed chunks (--enable-mixed-chunk): a prefill pass also decodes the
// running requests, one token each, and the prefill budgets shrink by them.
func TestMixedChunk(t *testing.T) {
	opt := testOptions(0.1)
	opt.ChunkedPrefillSize, opt.MixedChunk = 64, true
	w, rec := newTestWorker(t, 10000, opt)
	w.Add(newRequest(1, 10, 5))
	require.True(t, step(w))
	w.Add(newRequest(2, 100, 2))
	require.True(t, step(w))
	b := rec.batches[1]
	assert.Equal(t, []perf.Chunk{{NewTokens: 63}}, b.Prefill, "the chunk budget less one running decode")
	assert.Equal(t, 1, b.Decodes)
	for step(w) {
	}
	checkBalanced(t, w)
}

// Eager passes carry the host's launch (Options.EagerLaunchNs, 61 layers of
// 1,355 µs = 82.655 ms), CUDA-graph passes do not: with graphs of up to 2
// requests, R1's prefill is eager, its decode alone (1 request) a graph; R2's
// and R3's prefill pass is eager again (mixed chunks: R1 decodes in it); the
// decode of all three (3 > 2 requests) runs eagerly.
func TestEagerPassesCarryTheLaunch(t *testing.T) {
	opt := testOptions(0.1)
	opt.ChunkedPrefillSize, opt.MixedChunk = 1024, true
	opt.EagerLaunchNs, opt.GraphMaxBS = 61*1355e3, 2
	w, rec := newTestWorker(t, 10000, opt)
	w.Add(newRequest(1, 10, 5))
	require.True(t, step(w)) // R1's prefill
	require.True(t, step(w)) // R1 decodes alone
	w.Add(newRequest(2, 10, 5))
	w.Add(newRequest(3, 10, 5))
	require.True(t, step(w)) // R2 and R3 prefill, R1 decodes
	require.True(t, step(w)) // three decodes
	launch := []float64{}
	for _, b := range rec.batches {
		launch = append(launch, b.HostLaunchNs)
	}
	assert.Equal(t, []float64{82.655e6, 0, 82.655e6, 82.655e6}, launch)
	assert.Equal(t, 1, rec.batches[2].Decodes)
	assert.Equal(t, 3, rec.batches[3].Decodes)
	for step(w) {
	}
	checkBalanced(t, w)
}

// Random workloads of shared prefixes on a small pool, every policy and
// option: each ends with every token free or cached and the counters
// balanced (INV-2), whatever was matched, split, evicted and retracted.
func TestRandomWorkloadsBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 200; trial++ {
		opt := testOptions([]float64{0.05, 0.3, 0.7}[trial%3])
		opt.Policy = []string{config.SGLangPolicyFCFS, config.SGLangPolicyLPM, config.SGLangPolicyLOF}[trial%3]
		opt.RadixCache = trial%5 != 0
		if trial%2 == 0 {
			opt.ChunkedPrefillSize = 32 + rng.IntN(64)
			opt.MixedChunk = trial%4 == 0
		}
		opt.MaxPrefillTokens = 64 + rng.IntN(256)
		opt.Overlap = trial%3 == 1
		if trial%7 == 0 { // EAGLE
			opt.DraftSteps, opt.MixedChunk = 1+rng.IntN(3), false
			opt.Acceptance = slices.Repeat([]float64{0.6}, opt.DraftSteps)
		}
		w, _ := newTestWorker(t, 300+rng.IntN(300), opt)
		var live []*engine.Request
		for i := 0; i < 40; i++ {
			blocks := rng.IntN(6)
			hashes := make([]uint64, blocks)
			for j := range hashes {
				hashes[j] = uint64(1 + j + 10*rng.IntN(2)) // two families of prefixes
			}
			prompt := 16*blocks + rng.IntN(20)
			if prompt == 0 {
				prompt = 1
			}
			r := newRequest(int64(i), prompt, 1+rng.IntN(60), hashes...)
			if rng.IntN(3) == 0 && prompt%16 != 0 && blocks > 0 {
				r.PartialTokens = prompt % 16
				r.Hashes = append(r.Hashes, uint64(100+rng.IntN(2)))
			}
			if w.CheckFits(r.Prompt, r.Output) != "" {
				continue
			}
			w.Add(r)
			live = append(live, r)
			if rng.IntN(2) == 0 {
				step(w)
			}
			if rng.IntN(15) == 0 && len(live) > 0 { // a client cancel
				w.Abort(live[rng.IntN(len(live))])
			}
		}
		for n := 0; step(w); n++ {
			require.Less(t, n, 100000, "trial %d does not end", trial)
		}
		require.False(t, w.HasWork(), "trial %d", trial)
		checkBalanced(t, w)
	}
}

// EAGLE (speculative/eagle_worker.py, topk 1, speculative_num_steps 2): each
// decode verifies 3 tokens (SpecTokens 2, every position sampled) and the
// draft model runs 2 steps after it (1 after a prefill: its extend over the
// prompt). At acceptance 0.5 a decode keeps 0.5 + 0.25 = 0.75 drafts on
// average, carried in fractions: after the prefill's token, decodes give 1
// (0.75), 2 (1.5), 2 (1.25): 6 tokens in 4 passes, where plain decoding
// takes 6. The rejected drafts' KV is freed each pass: the pool balances.
func TestEAGLEDecodeVerifiesDrafts(t *testing.T) {
	opt := testOptions(0.1)
	opt.DraftSteps, opt.Acceptance = 2, []float64{0.5, 0.5}
	w, rec := newTestWorker(t, 1000, opt)
	r := newRequest(1, 10, 6)
	w.Add(r)
	passes := 0
	for step(w) {
		passes++
	}
	assert.Equal(t, 4, passes)
	assert.Equal(t, 6, r.Generated)
	require.Len(t, rec.batches, 4)
	assert.Equal(t, 1, rec.batches[0].DraftSteps)
	assert.Equal(t, 0, rec.batches[0].SpecTokens)
	for _, b := range rec.batches[1:] {
		assert.Equal(t, 1, b.Decodes)
		assert.Equal(t, 2, b.SpecTokens)
		assert.Equal(t, 3, b.Samplers)
		assert.Equal(t, 2, b.DraftSteps)
	}
	// the KV each decode reads: the 10 prompt tokens, then 11 and 13 (1 and 2 accepted)
	assert.Equal(t, []int64{10, 11, 13}, []int64{rec.batches[1].DecodeKVSum, rec.batches[2].DecodeKVSum, rec.batches[3].DecodeKVSum})
	checkBalanced(t, w)
}

// The overlap scheduler forms a pass before the previous pass's results are
// processed (scheduler.py event_loop_overlap), so the request that finished
// in a decode pass is decoded once more, its token discarded: R1 (10 prompt
// tokens, 3 output) prefills, decodes twice (token 3 at pass 3) and is in
// pass 4 again, alone, at its KV of 12 tokens; nothing is emitted then.
// Without the overlap scheduler it takes 3 passes.
func TestOverlapDecodesAFinishedRequestOnce(t *testing.T) {
	for _, overlap := range []bool{false, true} {
		opt := testOptions(0.1)
		opt.Overlap = overlap
		w, rec := newTestWorker(t, 1000, opt)
		w.Add(newRequest(1, 10, 3))
		var outs []int
		for {
			if _, ok := w.StartPass(); !ok {
				break
			}
			o, _ := w.FinishPass()
			outs = append(outs, len(o))
		}
		if !overlap {
			assert.Equal(t, []int{1, 1, 2}, outs) // token 3 and its finish
			continue
		}
		assert.Equal(t, []int{1, 1, 2, 0}, outs)
		last := rec.batches[len(rec.batches)-1]
		assert.Equal(t, 1, last.Decodes)
		assert.Equal(t, int64(12), last.DecodeKVSum)
		checkBalanced(t, w)
	}
}

// A P/D decode server runs at most max_running_requests (2 here) and holds
// at most its request slots (2 + the 2 × 2 pre-allocated, 6) of handoffs (a
// pool of 10,000 tokens holds their KV and decode reserves):
// of 7 handoffs of 10 prompt tokens and 2 output tokens, 6 are reserved at
// once and the 7th waits for a slot. The 6 arrive; pass 1 decodes R1 and R2
// (token 1), pass 2 again (token 2: they finish, freeing two slots: R7 is
// reserved after it); passes 3–4 decode R3 and R4, 5–6 R5 and R6, 7–8 R7.
// Under the overlap scheduler a finished request still holds its place in
// the running batch for the pass after (its results are processed after
// that pass is launched): pass 3 is R1 and R2's last decode again (R7's
// slot is free after it), and R3 and R4 join at pass 4.
func TestDecodeServerRunsAtMostMaxRunningRequests(t *testing.T) {
	for _, overlap := range []bool{false, true} {
		opt := testOptions(0.1)
		opt.RadixCache, opt.Overlap, opt.RequestSlots = false, overlap, 6
		rec := &recorder{}
		w, err := NewWorker(engine.Config{MaxNumSeqs: 2, MaxNumBatchedTokens: 16384, BlockSize: 1, NumBlocks: 10000,
			MaxModelLen: 1 << 20, HashBlockTokens: 16, PartialBlockHash: true, Options: opt}, rec)
		require.NoError(t, err)
		rs := make([]*engine.Request, 7)
		for i := range rs {
			rs[i] = newRequest(int64(i+1), 10, 2)
			assert.Equal(t, i < 6, w.Handoff(rs[i]), "handoff %d reserved at once", i+1)
		}
		for _, r := range rs[:6] {
			w.KVArrived(r)
		}
		var decodes []int
		reservedAfter := 2
		if overlap {
			reservedAfter = 3
		}
		for {
			if _, ok := w.StartPass(); !ok {
				break
			}
			w.FinishPass()
			decodes = append(decodes, rec.batches[len(rec.batches)-1].Decodes)
			for _, r := range w.ReserveWaiting() {
				assert.Equal(t, int64(7), r.ID)
				assert.Equal(t, reservedAfter, len(decodes), "the pass R7 is reserved after")
				w.KVArrived(r)
			}
		}
		if !overlap {
			assert.Equal(t, []int{2, 2, 2, 2, 2, 2, 1, 1}, decodes)
		} else {
			assert.Equal(t, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1}, decodes)
		}
		checkBalanced(t, w)
	}
}

// A P/D decode server reserves a handoff's prompt only while it keeps 512
// tokens of decode room (SGLANG_NUM_RESERVED_DECODE_TOKENS) for every request
// it holds: with 1,200 tokens, R1 (100 prompt tokens, 50 output) is reserved
// (budget 1,200 ≥ 100 + 512); R2 (the same) is not: 1,100 free less 512 for
// R1 leaves 588 < 612. While R1 decodes its budget stays below 612 (its
// tokens grow); R2 is reserved after R1's 50th and last pass.
func TestDecodeServerKeepsDecodeRoom(t *testing.T) {
	opt := testOptions(0.1)
	opt.RadixCache = false
	rec := &recorder{}
	w, err := NewWorker(engine.Config{MaxNumSeqs: 16, MaxNumBatchedTokens: 16384, BlockSize: 1, NumBlocks: 1200,
		MaxModelLen: 1 << 20, HashBlockTokens: 16, PartialBlockHash: true, Options: opt}, rec)
	require.NoError(t, err)
	r1, r2 := newRequest(1, 100, 50), newRequest(2, 100, 50)
	require.True(t, w.Handoff(r1))
	require.False(t, w.Handoff(r2))
	w.KVArrived(r1)
	passes, reservedAfter := 0, 0
	for step(w) {
		passes++
		for _, r := range w.ReserveWaiting() {
			assert.Equal(t, int64(2), r.ID)
			reservedAfter = passes
			w.KVArrived(r)
		}
	}
	assert.Equal(t, 50, reservedAfter)
	assert.Equal(t, 100, passes)
	checkBalanced(t, w)
	assert.Contains(t, w.CheckHandoff(700, 10), "SGLANG_NUM_RESERVED_DECODE_TOKENS")
	assert.Equal(t, "", w.CheckHandoff(600, 10))
}

// The eager launch a plan gives (withEagerLaunch): DeepSeek's layer, left
// out, takes the measured 82,640 / 61 µs a layer (61 layers: 82.64 ms),
// Llama's the measured 8,230 / 32 µs (Llama-3.1-8B's 32 layers: 8.23 ms, the
// eager forward of pull request 1401's log); a given value wins, 0 included;
// an architecture with no measured value gets none.
func TestEagerLaunchByArchitecture(t *testing.T) {
	v3 := &model.Arch{Architecture: "DeepseekV3ForCausalLM", Layers: 61}
	glm := &model.Arch{Architecture: "GlmMoeDsaForCausalLM", Layers: 78}
	dense := &model.Arch{Architecture: "Qwen3ForCausalLM", Layers: 64}
	llama := &model.Arch{Architecture: "LlamaForCausalLM", Layers: 32}
	none, zero, given := &config.SGLang{}, 0.0, 1000.0
	assert.InDelta(t, 82.64e6, withEagerLaunch(Options{}, none, v3, 8).EagerLaunchNs, 1e-3)
	assert.InDelta(t, 82640e3/61*78, withEagerLaunch(Options{}, none, glm, 8).EagerLaunchNs, 1e-3)
	assert.Zero(t, withEagerLaunch(Options{}, none, dense, 8).EagerLaunchNs)
	assert.Equal(t, 8.23e6, withEagerLaunch(Options{}, none, llama, 8).EagerLaunchNs)
	for _, a := range []string{"Qwen3MoeForCausalLM", "Qwen3_5MoeForConditionalGeneration", "GptOssForCausalLM"} {
		assert.Zero(t, withEagerLaunch(Options{}, none, &model.Arch{Architecture: a, Layers: 60}, 8).EagerLaunchNs, a)
	}
	assert.Zero(t, withEagerLaunch(Options{}, &config.SGLang{EagerLaunchUsPerLayer: &zero}, v3, 8).EagerLaunchNs)
	o := withEagerLaunch(Options{}, &config.SGLang{EagerLaunchUsPerLayer: &given}, dense, 8)
	assert.Equal(t, 64e6, o.EagerLaunchNs)
	assert.Equal(t, 8, o.GraphMaxBS)
}

// From 0.5.10 piecewise CUDA graphs replay an extend pass of at most
// piecewise_cuda_graph_max_tokens tokens (model_runner.py forward_extend,
// piecewise_cuda_graph_runner.py can_run: len(input_ids)): with a 4096-token
// limit a 4096-token chunk pays no eager launch, a mixed pass of that chunk
// and 3 decodes (4099 input ids) pays it, and a decode pass keeps the
// cuda_graph_max_bs rule.
func TestPiecewiseGraphsSkipTheEagerLaunch(t *testing.T) {
	o := Options{EagerLaunchNs: 8.23e6, GraphMaxBS: 8, PiecewiseMaxTokens: 4096}
	chunk := perf.Batch{Prefill: []perf.Chunk{{NewTokens: 4096}}}
	o.ShapePass(&chunk)
	assert.Zero(t, chunk.HostLaunchNs)
	mixed := perf.Batch{Prefill: []perf.Chunk{{NewTokens: 4096}}, Decodes: 3}
	o.ShapePass(&mixed)
	assert.Equal(t, 8.23e6, mixed.HostLaunchNs)
	decode := perf.Batch{Decodes: 9}
	o.ShapePass(&decode)
	assert.Equal(t, 8.23e6, decode.HostLaunchNs)
	o.PiecewiseMaxTokens = 0 // before 0.5.10: every extend pass is eager
	one := perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1}}}
	o.ShapePass(&one)
	assert.Equal(t, 8.23e6, one.HostLaunchNs)
}

// A P/D prefill server clears batch_is_full before every prefill batch it
// forms (disaggregation/prefill.py): it never runs update_running_batch,
// which clears it on an aggregated server. A pool of 250 tokens holds R1 and
// R2 (100-token prompts each, their KV held for the transfer, nothing
// reserved for output: the prefill side produces none); R3 finds 50 tokens
// and the batch is full. Once R1's transfer is done (ReleaseHeld, its KV
// cached and evictable) the next pass prefills R3; without the reset the
// server never forms another batch (the replay's INV-1 stall).
func TestPrefillServerClearsBatchFullEveryPass(t *testing.T) {
	opt := testOptions(0.1)
	opt.PrefillServer = true
	rec := &recorder{}
	w, err := NewWorker(engine.Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 16384, BlockSize: 1, NumBlocks: 250,
		MaxModelLen: 1 << 20, PrefixCaching: true, HashBlockTokens: 16, PartialBlockHash: true, Options: opt}, rec)
	require.NoError(t, err)
	rs := make([]*engine.Request, 3)
	for i := range rs {
		rs[i] = newRequest(int64(i+1), 100, 0)
		rs[i].HoldKV = true
		w.Add(rs[i])
	}
	require.True(t, step(w))
	require.Len(t, rec.batches, 1)
	assert.Equal(t, []int{100, 100}, prefillTokens(rec.batches[0]), "R1 and R2 in the first pass")
	assert.False(t, step(w), "R3 waits: 50 tokens free")
	w.ReleaseHeld(rs[0])
	require.True(t, step(w), "R1's KV released: R3 prefills")
	assert.Equal(t, []int{100}, prefillTokens(rec.batches[1]))
	w.ReleaseHeld(rs[1])
	w.ReleaseHeld(rs[2])
	assert.False(t, step(w))
	checkBalanced(t, w)
}

// prefillTokens is the new tokens of each prefill chunk of b.
func prefillTokens(b perf.Batch) []int {
	out := make([]int, len(b.Prefill))
	for i, c := range b.Prefill {
		out[i] = c.NewTokens
	}
	return out
}

// From 0.5.10 each admission reserves a page more in both budgets
// (_update_prefill_budget's page_overhead): in a 1,000-token pool R1 (300
// prompt, 200 output) takes 500 of the total budget, R2 (299, 200) needs
// 499 < 500 and joins the pass; with the page it needs 499 ≥ 1,000 − 501 =
// 499 and waits for the next pass.
func TestAdmissionReservesAPagePerRequest(t *testing.T) {
	for _, c := range []struct {
		overhead bool
		first    []int
	}{{false, []int{300, 299}}, {true, []int{300}}} {
		opt := testOptions(0.1)
		opt.PageOverhead = c.overhead
		w, rec := newTestWorker(t, 1000, opt)
		w.Add(newRequest(1, 300, 200))
		w.Add(newRequest(2, 299, 200))
		require.True(t, step(w))
		assert.Equal(t, c.first, prefillTokens(rec.batches[0]), "overhead %v", c.overhead)
	}
}

// With chunked prefill a prompt past the pass's remaining max_prefill_tokens
// ends the admissions through 0.5.12, not from 0.5.13 (add_one_req's
// "rem_chunk_tokens is None" condition): max_prefill_tokens 100, chunks of
// 1,000, two 60-token prompts: R2's 60 ≥ 100 − 60 stops the pass at [60]
// before; from 0.5.13 both run, [60 60], and the negative budget then ends
// it.
func TestMaxPrefillTokensWithChunkedPrefill(t *testing.T) {
	for _, c := range []struct {
		unchunkedOnly bool
		first         []int
	}{{false, []int{60}}, {true, []int{60, 60}}} {
		opt := testOptions(0.1)
		opt.MaxPrefillTokens, opt.ChunkedPrefillSize, opt.InputCapUnchunkedOnly = 100, 1000, c.unchunkedOnly
		w, rec := newTestWorker(t, 10000, opt)
		w.Add(newRequest(1, 60, 2))
		w.Add(newRequest(2, 60, 2))
		require.True(t, step(w))
		assert.Equal(t, c.first, prefillTokens(rec.batches[0]), "unchunked only %v", c.unchunkedOnly)
	}
}

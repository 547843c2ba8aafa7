package vllm

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// newRequest is a request of id with prompt and output tokens, made as the
// replay makes one (Family.NewRequest, then Reset).
func newRequest(id int64, prompt, output int) *engine.Request {
	r := Family{}.NewRequest()
	r.Reset(id, prompt, output, nil, nil)
	return r
}

// recorder is a perf model that keeps a copy of every batch it priced.
type recorder struct{ batches []perf.Batch }

func (r *recorder) PassTime(b *perf.Batch) int64 {
	c := perf.Batch{Samplers: b.Samplers, Decodes: b.Decodes, DecodeKVSum: b.DecodeKVSum, SpecTokens: b.SpecTokens, DraftSteps: b.DraftSteps}
	c.Prefill = append(c.Prefill, b.Prefill...)
	c.DecodeWindowSums = append(c.DecodeWindowSums, b.DecodeWindowSums...)
	r.batches = append(r.batches, c)
	return 1000
}
func (r *recorder) Name() string { return "recorder" }

func newTestWorker(t *testing.T, cfg Config) (*Worker, *recorder) {
	rec := &recorder{}
	w, err := NewWorker(cfg, rec)
	require.NoError(t, err)
	return w, rec
}

func run(w *Worker) (outs [][]Out) {
	for w.HasWork() {
		_, ok := w.StartPass()
		if !ok {
			break
		}
		o, _ := w.FinishPass()
		outs = append(outs, append([]Out(nil), o...))
	}
	return outs
}

// Chunked prefill under a 512-token budget: a 1000-token prompt takes 512 then
// 488 tokens (the second chunk sees a 512-token prefix) and samples once.
func TestChunkedPrefillBudget(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096})
	w.Add(newRequest(1, 1000, 2))
	outs := run(w)
	require.Len(t, rec.batches, 3)
	assert.Equal(t, []perf.Chunk{{NewTokens: 512, PrefixTokens: 0}}, rec.batches[0].Prefill)
	assert.Equal(t, 0, rec.batches[0].Samplers)
	assert.Equal(t, []perf.Chunk{{NewTokens: 488, PrefixTokens: 512}}, rec.batches[1].Prefill)
	assert.Equal(t, 1, rec.batches[1].Samplers)
	assert.Equal(t, 1, rec.batches[2].Decodes) // token 2 reads 1000 cached tokens
	assert.Equal(t, int64(1000), rec.batches[2].DecodeKVSum)
	assert.Empty(t, outs[0])
	assert.Equal(t, []Out{{Req: outs[1][0].Req, Kind: OutToken}}, outs[1])
	assert.Equal(t, OutFinished, outs[2][1].Kind)
}

// With DecodeWindows each pass gives the perf model Σ min(kv+1, W) per
// window, whether the decodes are steady (kept in aggregate) or walked one by
// one: prompts of 100 and 300 tokens prefill together (400 ≤ 512) in pass 0;
// in decode pass j (1..19, 20 output tokens) their KV lengths are 99 + j and
// 299 + j, so for W = 105 the sum is min(100 + j, 105) + 105 (the first
// reaches the window at j = 5, the second is past it from the start) and for
// W = 1000 it is (100 + j) + (300 + j) = 400 + 2j. Without windows the sums
// stay empty.
func TestDecodeWindowSumsReachThePerfModel(t *testing.T) {
	for _, perToken := range []bool{false, true} {
		w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
			PerTokenDecode: perToken, DecodeWindows: []int{105, 1000}})
		w.Add(newRequest(1, 100, 20))
		w.Add(newRequest(2, 300, 20))
		run(w)
		require.Len(t, rec.batches, 20)
		assert.Equal(t, []int64{0, 0}, rec.batches[0].DecodeWindowSums) // the prefill pass
		for j := 1; j < 20; j++ {
			assert.Equal(t, 2, rec.batches[j].Decodes)
			assert.Equal(t, int64(398+2*j), rec.batches[j].DecodeKVSum)
			assert.Equal(t, []int64{int64(min(100+j, 105) + 105), int64(400 + 2*j)}, rec.batches[j].DecodeWindowSums,
				"perToken %v pass %d", perToken, j)
		}
	}
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096})
	w.Add(newRequest(1, 100, 3))
	run(w)
	for _, b := range rec.batches {
		assert.Empty(t, b.DecodeWindowSums)
	}
}

// FCFS admission stops at the first request that does not fit, even if a later
// one would (no skipping): 10 blocks; r1 takes 6, r2 needs 5, r3 needs 1.
func TestAdmissionStopsAtFirstThatDoesNotFit(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 4096, BlockSize: 16, NumBlocks: 10, MaxModelLen: 4096})
	w.Add(newRequest(1, 96, 1))
	w.Add(newRequest(2, 80, 1))
	w.Add(newRequest(3, 16, 1))
	_, ok := w.StartPass()
	require.True(t, ok)
	assert.Equal(t, []perf.Chunk{{NewTokens: 96}}, rec.batches[0].Prefill)
	w.FinishPass()
	_, ok = w.StartPass() // r1 done and released: r2 and r3 now fit
	require.True(t, ok)
	assert.Equal(t, []perf.Chunk{{NewTokens: 80}, {NewTokens: 16}}, rec.batches[1].Prefill)
}

// max_num_seqs caps the running set.
func TestMaxNumSeqs(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 2, MaxNumBatchedTokens: 4096, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096})
	for i := 0; i < 3; i++ {
		w.Add(newRequest(int64(i), 10, 3))
	}
	w.StartPass()
	assert.Len(t, rec.batches[0].Prefill, 2)
	w.FinishPass()
	w.StartPass()
	assert.Equal(t, 2, rec.batches[1].Decodes)
	assert.Empty(t, rec.batches[1].Prefill)
}

// Preemption by recompute: the newest running request loses its blocks, goes
// back to the head of the queue and is recomputed as a prefill of prompt +
// tokens produced so far; it keeps its produced tokens.
func TestPreemptNewestRecomputes(t *testing.T) {
	// 4 blocks of 4 tokens. r1 and r2: 6-token prompts (2 blocks each).
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 64})
	r1 := newRequest(1, 6, 4)
	r2 := newRequest(2, 6, 4)
	w.Add(r1)
	w.Add(r2)
	w.StartPass() // both prefill, 2 blocks each, cache full
	w.FinishPass()
	assert.Equal(t, 1, r1.Generated)
	w.StartPass() // decode token 2: KV 6 + 1 = 7 tokens, 2 blocks
	w.FinishPass()
	w.StartPass() // decode token 3: 8 tokens, still 2 blocks each
	w.FinishPass()
	// fourth pass: r1 needs a 3rd block for its 9th token → r2 (newest) is preempted
	w.StartPass()
	b := rec.batches[3]
	assert.Equal(t, 1, b.Decodes)
	assert.Equal(t, int64(8), b.DecodeKVSum)
	assert.Empty(t, b.Prefill)
	assert.Equal(t, 1, r2.Preemptions)
	assert.Equal(t, 3, r2.Generated)
	w.FinishPass()
	run(w)
	assert.Equal(t, 4, r1.Generated)
	assert.Equal(t, 4, r2.Generated)
	// r2's recompute is one prefill of its 6 prompt + 3 produced tokens
	found := false
	for _, b := range rec.batches[4:] {
		for _, c := range b.Prefill {
			if c.NewTokens == 9 && c.PrefixTokens == 0 {
				found = true
			}
		}
	}
	assert.True(t, found, "r2 must be recomputed as a 9-token prefill")
	st := w.KVStats()
	assert.Equal(t, st.Released, st.Allocated+st.Reused)
	assert.Equal(t, 4, w.KVFree())
}

// The same run with prefix caching on: r2 held 8 tokens (2 full blocks of 4)
// when preempted; they are released tail first, r1 takes the head of the queue
// (r2's block 1) and r2, admitted again when r1 finishes, finds its block 0 and
// computes 9 − 4 = 5 tokens on a 4-token prefix instead of all 9.
func TestPreemptedRequestFindsItsBlocks(t *testing.T) {
	start := func() (*Worker, *recorder, *engine.Request, *engine.Request) {
		w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 16, PrefixCaching: true})
		r1, r2 := newRequest(1, 6, 4), newRequest(2, 6, 4)
		w.Add(r1)
		w.Add(r2)
		for i := 0; i < 4; i++ { // the fourth pass preempts r2
			w.StartPass()
			w.FinishPass()
		}
		require.Equal(t, 1, r2.Preemptions)
		return w, rec, r1, r2
	}
	w, rec, _, r2 := start()
	assert.Equal(t, 1, w.KVCached(), "r2's block 0 still holds its content")
	assert.Equal(t, int64(1), w.KVStats().Evicted)
	run(w)
	assert.Equal(t, 4, r2.Generated)
	// r2's re-admission is the last pass: it samples its 4th and last token
	assert.Equal(t, []perf.Chunk{{NewTokens: 5, PrefixTokens: 4}}, rec.batches[len(rec.batches)-1].Prefill)
	assert.Equal(t, PrefixCacheStats{Requests: 2, Queries: 12, PreemptedRequests: 1, PreemptedQueries: 9, PreemptedHits: 4},
		w.PrefixCacheStats())
	assert.Equal(t, int64(8-4), w.RecomputedTokens)
	assert.Equal(t, 0, w.KVCached(), "a finished request's own content is not cached: nobody can name it")
	assert.Equal(t, 4, w.KVFree())

	// Aborted while it waits, r2's block 0 is not cached content any more.
	w, _, _, r2 = start()
	w.Abort(r2)
	assert.Equal(t, 0, w.KVCached())
	run(w)
	st := w.KVStats()
	assert.Equal(t, st.Released, st.Allocated+st.Reused)
	assert.Equal(t, 4, w.KVFree())
}

// A request with no output finishes with its prefill and emits no token.
func TestZeroOutputPrefillOnly(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 8, MaxModelLen: 64})
	w.Add(newRequest(1, 10, 0))
	outs := run(w)
	require.Len(t, outs, 1)
	assert.Equal(t, []Out{{Req: outs[0][0].Req, Kind: OutFinished}}, outs[0])
	assert.Equal(t, 0, rec.batches[0].Samplers)
}

func TestCheckFits(t *testing.T) {
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 16, NumBlocks: 4, MaxModelLen: 100})
	assert.Equal(t, "", w.CheckFits(60, 5))     // ⌈(60+4)/16⌉ = 4 blocks
	assert.NotEqual(t, "", w.CheckFits(60, 6))  // 65 tokens in cache → 5 blocks
	assert.NotEqual(t, "", w.CheckFits(90, 11)) // 101 > max_model_len
}

// A step whose preemptions leave nothing to run still admits: on a P/D decode
// worker whose cache is all reserved, the request that had to preempt itself
// must not stall the worker while a handoff that needs no new block waits.
func TestPreemptionThatEmptiesThePassStillAdmits(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 64})
	r1 := newRequest(1, 4, 5)
	require.True(t, w.Handoff(r1)) // 1 block
	w.KVArrived(r1)
	_, ok := w.StartPass() // r1's first decode: its prompt's last token again, KV 3
	require.True(t, ok)
	r2 := newRequest(2, 12, 2)
	require.True(t, w.Handoff(r2)) // 3 blocks: the cache is full
	w.KVArrived(r2)
	w.FinishPass()
	// r1 now needs a second block: none is free, so it preempts itself; r2
	// holds its blocks already and runs.
	_, ok = w.StartPass()
	require.True(t, ok, "the worker must not stall")
	assert.Equal(t, 1, rec.batches[1].Decodes)
	assert.Equal(t, int64(11), rec.batches[1].DecodeKVSum)
	assert.Equal(t, 1, r1.Preemptions)
	w.FinishPass()
	run(w)
	assert.Equal(t, 5, r1.Generated)
	assert.Equal(t, 2, r2.Generated)
}

// A decode worker holds every handoff placed on it: waiting for blocks (FIFO,
// no overtaking), in transfer with reserved blocks, arrived. Its Outstanding
// counts all of them; Abort drops one wherever it is. 4 blocks of 4 tokens:
// a handoff of a P-token prompt reserves ⌈P / 4⌉ blocks.
func TestHandoffLifecycle(t *testing.T) {
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 4, MaxModelLen: 64})
	h1 := newRequest(1, 8, 2)
	h2 := newRequest(2, 12, 2)
	h3 := newRequest(3, 4, 2)
	require.True(t, w.Handoff(h1)) // 2 blocks reserved, 2 free
	assert.Equal(t, 2, w.KVFree())
	assert.False(t, w.Handoff(h2), "3 blocks, 2 free: it waits")
	assert.False(t, w.Handoff(h3), "1 block would do, but h2 waits ahead of it")
	assert.Equal(t, 3, w.Outstanding())
	assert.Empty(t, w.ReserveWaiting(), "h2 still does not fit")

	w.Abort(h2) // canceled while waiting: it held nothing
	assert.Equal(t, 2, w.Outstanding())
	assert.Equal(t, []*engine.Request{h3}, w.ReserveWaiting())
	assert.Equal(t, 1, w.KVFree())

	w.KVArrived(h1)
	assert.Equal(t, 2, w.Outstanding(), "arrived and in transfer both count")
	assert.True(t, w.HasWork())
	w.Abort(h3) // canceled in transfer: its block comes back
	assert.Equal(t, 2, w.KVFree())
	assert.Equal(t, 1, w.Outstanding())
	run(w)
	assert.Equal(t, 2, h1.Generated)
	assert.Equal(t, 0, w.Outstanding())
	assert.Equal(t, 4, w.KVFree())
}

// StartSteadyPass forms the pass StartPass would, when it takes it: two
// requests (prompts 6 and 3, outputs 12 and 9, blocks of 4 tokens, a decode
// window of 5) on two twin workers, one always through StartPass, the other
// through StartSteadyPass after each pass of steady requests only. Passes 1
// and 2 are explicit (prompts, second tokens); both are steady from pass 3;
// the second's last token is due in pass 9 (3 + 9 − 1 − 2) and the first's in
// pass 12 (3 + 12 − 1 − 2), where StartSteadyPass declines, and pass 10
// follows an explicit pass: it takes passes 4–8 and 11.
func TestStartSteadyPassIsStartPass(t *testing.T) {
	cfg := Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 64, BlockSize: 4, NumBlocks: 64, MaxModelLen: 64, DecodeWindows: []int{5}}
	a, recA := newTestWorker(t, cfg)
	b, recB := newTestWorker(t, cfg)
	for _, w := range []*Worker{a, b} {
		w.Add(newRequest(1, 6, 12))
		w.Add(newRequest(2, 3, 9))
	}
	var steadyPasses []int64
	steady := false // the last pass held steady requests only
	for pass := int64(1); a.HasWork(); pass++ {
		ok := false
		if steady {
			if _, ok = a.StartSteadyPass(); ok {
				steadyPasses = append(steadyPasses, pass)
			}
		}
		if !ok {
			_, ok = a.StartPass()
			require.True(t, ok)
		}
		if steady = a.OnlySteady(); steady {
			a.FinishSteadyPass()
		} else {
			a.FinishPass()
		}
	}
	run(b)
	assert.Equal(t, []int64{4, 5, 6, 7, 8, 11}, steadyPasses)
	assert.Equal(t, recB.batches, recA.batches)
	assert.Len(t, recA.batches, 12)
}

// The bucket of the next pass, kept as passes begin, is −(Passes + 1) mod
// BlockSize: for blocks of 1, 3 and 16 tokens over 40 passes.
func TestNextBucketFollowsPasses(t *testing.T) {
	for _, bs := range []int{1, 3, 16} {
		w, _ := newTestWorker(t, Config{MaxNumSeqs: 1, MaxNumBatchedTokens: 1, BlockSize: bs, NumBlocks: 1, MaxModelLen: 1})
		for pass := int64(1); pass <= 40; pass++ {
			require.Equal(t, int((bs-int(pass%int64(bs)))%bs), w.bucketOf(pass), "bs %d pass %d", bs, pass)
			w.BeginPass(1)
			w.FinishPass()
		}
	}
}

// finHeap pops its events by (pass, seq), as sorting them would: 2,000
// random events (many passes shared), pushes and pops interleaved.
func TestFinHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 9))
	var h finHeap
	var pending, popped, want []finEvent
	for seq := uint64(1); seq <= 2000; seq++ {
		e := finEvent{pass: int64(rng.IntN(50)), seq: seq}
		h.push(e)
		pending = append(pending, e)
		if rng.IntN(3) == 0 { // pop the least so far
			slices.SortFunc(pending, func(a, b finEvent) int {
				return cmp.Or(cmp.Compare(a.pass, b.pass), cmp.Compare(a.seq, b.seq))
			})
			want, pending = append(want, pending[0]), pending[1:]
			popped = append(popped, h.pop())
		}
	}
	slices.SortFunc(pending, func(a, b finEvent) int { return cmp.Or(cmp.Compare(a.pass, b.pass), cmp.Compare(a.seq, b.seq)) })
	want = append(want, pending...)
	for len(h.ev) > 0 {
		popped = append(popped, h.pop())
	}
	require.Equal(t, want, popped)
}

// scheduler_reserve_full_isl (vLLM 0.19.0 on by default): 10 blocks of 16
// tokens, a 64-token budget. r1 (48 tokens, 3 blocks) prefills whole; r2's
// first chunk of 16 tokens needs 1 of the 7 blocks left, so without the gate
// it joins pass 0, but its whole 128-token prompt needs 8 blocks: with the
// gate it waits. r1 decodes to 48 + 19 KV tokens (5 blocks, 5 free < 8), so
// r2 is admitted only once r1 has finished and released its blocks.
func TestReserveFullISLAdmitsOnlyWhatFitsWhole(t *testing.T) {
	for _, reserve := range []bool{false, true} {
		cfg := Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 64, BlockSize: 16, NumBlocks: 10, MaxModelLen: 4096}
		if reserve {
			cfg.Options = Options{ReserveFullISL: true}
		}
		w, rec := newTestWorker(t, cfg)
		r1, r2 := newRequest(1, 48, 20), newRequest(2, 128, 2)
		w.Add(r1)
		w.Add(r2)
		outs := run(w)
		if !reserve {
			assert.Equal(t, []perf.Chunk{{NewTokens: 48}, {NewTokens: 16}}, rec.batches[0].Prefill)
			continue
		}
		assert.Equal(t, []perf.Chunk{{NewTokens: 48}}, rec.batches[0].Prefill)
		finished1, first2 := -1, -1
		for i, o := range outs {
			for _, x := range o {
				if x.Req == r1 && x.Kind == OutFinished {
					finished1 = i
				}
			}
			if first2 < 0 && i > 0 && len(rec.batches[i].Prefill) > 0 {
				first2 = i
			}
		}
		require.GreaterOrEqual(t, finished1, 0)
		assert.Equal(t, finished1+1, first2, "r2 prefills in the pass after r1 finishes")
		assert.Equal(t, []perf.Chunk{{NewTokens: 64}}, rec.batches[first2].Prefill)
	}
}

package trtllm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

func newRequest(id int64, prompt, output int, hashes ...uint64) *engine.Request {
	r := Family{}.NewRequest()
	r.Reset(id, prompt, output, hashes, nil)
	return r
}

// recorder is a perf model that keeps a copy of every batch it priced.
type recorder struct{ batches []perf.Batch }

func (r *recorder) PassTime(b *perf.Batch) int64 {
	c := perf.Batch{Samplers: b.Samplers, Decodes: b.Decodes, DecodeKVSum: b.DecodeKVSum}
	c.Prefill = append(c.Prefill, b.Prefill...)
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

// run runs iterations until nothing is left and returns, per request id, the
// iteration (1, 2, …) of each of its tokens and the one it finished in.
func run(w *Worker) (tokens map[int64][]int, finished map[int64]int) {
	tokens, finished = map[int64][]int{}, map[int64]int{}
	for it := 1; w.HasWork(); it++ {
		if _, ok := w.StartPass(); !ok {
			break
		}
		outs, _ := w.FinishPass()
		for _, o := range outs {
			if o.Kind == engine.OutToken {
				tokens[o.Req.ID] = append(tokens[o.Req.ID], it)
			} else {
				finished[o.Req.ID] = it
			}
		}
	}
	return tokens, finished
}

// GUARANTEED_NO_EVICT: 10 blocks of 16 tokens. r1 (32 prompt + 65 output =
// 97 tokens) sets aside its 7 blocks to completion; r2 (16 + 49 = 65 tokens, 5
// blocks) does not fit the 3 left, so it waits although r1 never holds more
// than 6 blocks (its last token is sampled, not cached: positions 0–95) and
// r2's first iteration needs one: at least 4 blocks are free the whole time.
// r1 runs alone: its context and first token in iteration 1, its tokens
// 2…65 in iterations 2…65; r2 starts in iteration 66 and ends in 114.
// MAX_UTILIZATION admits both at once (each needs only its next iteration's
// blocks, and their peaks, 6 and 4 blocks, fit together): r2 ends in
// iteration 49, r1 in 65.
func TestGuaranteedNoEvictReservesTheWholeOutput(t *testing.T) {
	cfg := Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 10, MaxModelLen: 4096}
	w, rec := newTestWorker(t, cfg)
	w.Add(newRequest(1, 32, 65))
	w.Add(newRequest(2, 16, 49))
	tokens, finished := run(w)
	assert.Equal(t, 65, finished[1])
	assert.Equal(t, 66, tokens[2][0], "r2's context waits for r1 to finish")
	assert.Equal(t, 114, finished[2])
	assert.Equal(t, []perf.Chunk{{NewTokens: 32}}, rec.batches[0].Prefill)
	assert.Equal(t, 1, rec.batches[1].Decodes)
	assert.Equal(t, []perf.Chunk{{NewTokens: 16}}, rec.batches[65].Prefill)
	assert.Equal(t, 0, rec.batches[65].Decodes)

	cfg.Options = Options{Policy: MaxUtilization}
	w, rec = newTestWorker(t, cfg)
	r2 := newRequest(2, 16, 49)
	w.Add(newRequest(1, 32, 65))
	w.Add(r2)
	tokens, finished = run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 32}, {NewTokens: 16}}, rec.batches[0].Prefill)
	assert.Equal(t, 1, tokens[2][0])
	assert.Equal(t, 49, finished[2])
	assert.Equal(t, 65, finished[1])
	assert.Equal(t, 0, r2.Preemptions)
}

// MAX_UTILIZATION pauses the newest started request when the next iteration's
// blocks do not fit: 4 blocks of 16 tokens, r1 and r2 of 16 prompt + 40 output
// tokens. Iteration 1 computes both contexts (a block each) and their first
// tokens; iteration 2 gives each a second block (positions 16–31), and their
// tokens 2…17 come in iterations 2…17. In iteration 18 r1's position 32 needs
// a third block and none is free: r2, the newest started request after it, is
// paused (its 2 blocks freed, its 17 tokens moved into its context: 33), and
// r1 runs alone, to its 40th token in iteration 40 (its fourth block at
// position 48, iteration 34). r2's context of 33 tokens needs 3 blocks: it
// runs in iteration 41 (token 18), then tokens 19…40 in 42…63. The 32 tokens
// it had in the cache are computed again.
func TestMaxUtilizationPausesTheNewest(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 4,
		MaxModelLen: 4096, Options: Options{Policy: MaxUtilization}})
	r2 := newRequest(2, 16, 40)
	w.Add(newRequest(1, 16, 40))
	w.Add(r2)
	tokens, finished := run(w)
	assert.Equal(t, 2, rec.batches[16].Decodes, "iteration 17 decodes both")
	assert.Equal(t, 1, rec.batches[17].Decodes, "iteration 18: r2 paused")
	assert.Equal(t, int64(32), rec.batches[17].DecodeKVSum, "r1 at position 32")
	assert.Equal(t, 40, finished[1])
	assert.Equal(t, 17, len(tokens[2][:17]))
	assert.Equal(t, 17, tokens[2][16])
	assert.Equal(t, 41, tokens[2][17], "r2's 18th token after its context is computed again")
	assert.Equal(t, []perf.Chunk{{NewTokens: 33}}, rec.batches[40].Prefill)
	assert.Equal(t, 63, finished[2])
	assert.Equal(t, 1, r2.Preemptions)
	assert.Equal(t, int64(32), w.Counters().RecomputedTokens)
	assert.Len(t, tokens[2], 40)
}

// CUDA-graph padding: five generation requests with enable_padding run at the
// captured size 8 (1, 2, 4, 8, 16, …): three dummy requests of one cached
// token each join the batch. Without padding the five run as they are (an
// eager iteration), and an iteration with a context is never padded.
func TestCUDAGraphPadding(t *testing.T) {
	sizes := CUDAGraphBatchSizes(128, true)
	require.Equal(t, []int{1, 2, 4, 8, 16, 24, 32}, sizes[:7])
	for _, padding := range []bool{true, false} {
		w, rec := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100,
			MaxModelLen: 4096, Options: Options{CUDAGraphBatchSizes: sizes, CUDAGraphPadding: padding}})
		for i := int64(1); i <= 5; i++ {
			w.Add(newRequest(i, 10, 3))
		}
		run(w)
		require.Len(t, rec.batches, 3)
		assert.Len(t, rec.batches[0].Prefill, 5)
		assert.Equal(t, 0, rec.batches[0].Decodes, "a context iteration runs eagerly, unpadded")
		if padding {
			assert.Equal(t, 8, rec.batches[1].Decodes)
			assert.Equal(t, int64(5*10+3*1), rec.batches[1].DecodeKVSum)
			assert.Equal(t, 8, rec.batches[1].Samplers)
		} else {
			assert.Equal(t, 5, rec.batches[1].Decodes)
			assert.Equal(t, int64(5*10), rec.batches[1].DecodeKVSum)
		}
	}
}

// TensorRT-LLM's generated batch sizes (CudaGraphConfig._generate_cuda_graph_batch_sizes).
func TestCUDAGraphBatchSizes(t *testing.T) {
	assert.Equal(t, []int{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 256, 512, 1024},
		CUDAGraphBatchSizes(1024, true))
	assert.Equal(t, []int{1, 2, 4, 8, 16, 24, 32, 40, 48}, CUDAGraphBatchSizes(48, true))
	noPad := CUDAGraphBatchSizes(300, false)
	assert.Equal(t, append(seq(1, 32), 64, 128, 256, 300), noPad)
	assert.Equal(t, []int{1, 2, 3}, CUDAGraphBatchSizes(3, false))
}

func seq(a, b int) []int {
	var s []int
	for i := a; i <= b; i++ {
		s = append(s, i)
	}
	return s
}

// Block reuse: r1's 64-token prompt (4 full blocks h1…h4) is cached when it
// finishes. r2 with the same prompt reuses 63 tokens, at most prompt − 1: three
// blocks shared and the fourth partially (copied), so it computes one token.
// r3, the same 64 tokens and a fifth block of its own, reuses all 4 blocks (64
// tokens) and computes 16.
func TestBlockReuseOfASharedPrefix(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100,
		MaxModelLen: 4096, PrefixCaching: true})
	w.WatchKV()
	w.Add(newRequest(1, 64, 2, 1, 2, 3, 4))
	run(w)
	assert.Equal(t, []engine.KVEvent{{Hash: 1, Stored: true}, {Hash: 2, Stored: true}, {Hash: 3, Stored: true}, {Hash: 4, Stored: true}},
		w.KVEvents(), "a router sees r1's prompt blocks stored as its context completes")
	r2 := newRequest(2, 64, 2, 1, 2, 3, 4)
	r3 := newRequest(3, 80, 2, 1, 2, 3, 4, 5)
	w.Add(r2)
	run(w)
	w.Add(r3)
	run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 64}}, rec.batches[0].Prefill)
	assert.Equal(t, []perf.Chunk{{NewTokens: 1, PrefixTokens: 63}}, rec.batches[2].Prefill)
	assert.Equal(t, 63, r2.CachedTokens)
	assert.Equal(t, []perf.Chunk{{NewTokens: 16, PrefixTokens: 64}}, rec.batches[4].Prefill)
	assert.Equal(t, 64, r3.CachedTokens)
	assert.Equal(t, []engine.KVEvent{{Hash: 5, Stored: true}}, w.KVEvents())
	c := w.Counters()
	assert.Equal(t, int64(3+4), c.KV.Reused)
	assert.Equal(t, engine.PrefixCacheStats{Requests: 3, Queries: 64 + 64 + 80, Hits: 63 + 64}, c.PrefixCache)
	assert.Equal(t, c.KV.Allocated+c.KV.Reused, c.KV.Released, "INV-2: every block taken is released")
}

// Two contexts with the same prefix arrive together: the second is skipped in
// the first iteration, which computes the shared blocks, and reuses them in
// the next (capacityScheduler.cpp, beneficialToSkip).
func TestSkipToReuseABlockBeingComputed(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100,
		MaxModelLen: 4096, PrefixCaching: true})
	w.Add(newRequest(1, 48, 3, 1, 2, 3))
	w.Add(newRequest(2, 48, 3, 1, 2, 3))
	run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 48}}, rec.batches[0].Prefill)
	assert.Equal(t, []perf.Chunk{{NewTokens: 1, PrefixTokens: 47}}, rec.batches[1].Prefill)
	assert.Equal(t, 1, rec.batches[1].Decodes)
}

// The micro-batch scheduler under max_num_tokens 100: without chunking a
// context is scheduled whole (generation requests first in list order); the
// list stops at the first that does not fit. With chunking (FCFS) a context
// takes what is left, cut to a multiple of tokens_per_block.
func TestMicroBatchTokenBudget(t *testing.T) {
	cfg := Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 100, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096}
	w, rec := newTestWorker(t, cfg)
	w.Add(newRequest(1, 60, 3))
	w.Add(newRequest(2, 60, 3))
	w.Add(newRequest(3, 30, 3))
	run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 60}}, rec.batches[0].Prefill, "r2 (60) does not fit 40 left: the list stops there")
	assert.Equal(t, []perf.Chunk{{NewTokens: 60}, {NewTokens: 30}}, rec.batches[1].Prefill)
	assert.Equal(t, 1, rec.batches[1].Decodes)
	assert.Equal(t, "prompt (101 tokens) exceeds max_num_tokens (100) without enable_chunked_prefill", w.CheckFits(101, 1))

	cfg.Options = Options{ChunkedPrefill: true}
	w, rec = newTestWorker(t, cfg)
	w.Add(newRequest(1, 60, 3))
	w.Add(newRequest(2, 60, 3))
	run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 60}, {NewTokens: 32}}, rec.batches[0].Prefill, "40 left, cut to 32")
	assert.Equal(t, []perf.Chunk{{NewTokens: 28, PrefixTokens: 32}}, rec.batches[1].Prefill)
	assert.Equal(t, 1, rec.batches[1].Decodes)
	assert.Equal(t, "", w.CheckFits(101, 1))
}

// EQUAL_PROGRESS grows every context by a block in turn: 100 tokens over two
// 60-token contexts give 48 and 48 (the next 16 would pass 100).
func TestEqualProgressChunking(t *testing.T) {
	w, rec := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 100, BlockSize: 16, NumBlocks: 100,
		MaxModelLen: 4096, Options: Options{ChunkedPrefill: true, Chunking: EqualProgress}})
	w.Add(newRequest(1, 60, 3))
	w.Add(newRequest(2, 60, 3))
	run(w)
	assert.Equal(t, []perf.Chunk{{NewTokens: 48}, {NewTokens: 48}}, rec.batches[0].Prefill)
}

// recorderAll keeps the speculative fields too.
type recorderAll struct{ batches []perf.Batch }

func (r *recorderAll) PassTime(b *perf.Batch) int64 {
	c := *b
	c.Prefill = append([]perf.Chunk(nil), b.Prefill...)
	c.DecodeWindowSums = nil
	r.batches = append(r.batches, c)
	return 1000
}
func (r *recorderAll) Name() string { return "recorder" }

// An MTP step with acceptance 0.5 and 3 draft tokens: a step accepts 0.5 +
// 0.25 + 0.125 = 0.875 drafts on average, carried in fractions. A request of
// 16 prompt and 10 output tokens: its context (iteration 1) gives token 1;
// then the carried acceptance is 0.875 (1 token), 1.75 (2; 0.75 left), 1.625
// (2), 1.5 (2), 1.375 (2): tokens 2, 3–4, 5–6, 7–8, 9–10 in iterations 2–6.
// Each generation step verifies 1 + 3 tokens (SpecTokens 3, 4 positions
// sampled) at KV lengths 16, 17, 19, 21, 23, and every iteration runs the 3
// draft steps.
func TestMTPStep(t *testing.T) {
	rec := &recorderAll{}
	w, err := NewWorker(Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
		Options: Options{MTPDraftTokens: 3, MTPAcceptance: []float64{0.5, 0.5, 0.5}}}, rec)
	require.NoError(t, err)
	w.Add(newRequest(1, 16, 10))
	tokens, finished := run(w)
	assert.Equal(t, []int{1, 2, 3, 3, 4, 4, 5, 5, 6, 6}, tokens[1])
	assert.Equal(t, 6, finished[1])
	require.Len(t, rec.batches, 6)
	c := rec.batches[0]
	assert.Equal(t, perf.Batch{Prefill: []perf.Chunk{{NewTokens: 16}}, Samplers: 1, DraftSteps: 3}, c)
	for i, kv := range []int64{16, 17, 19, 21, 23} {
		b := rec.batches[i+1]
		assert.Equal(t, perf.Batch{Decodes: 1, DecodeKVSum: kv, SpecTokens: 3, Samplers: 4, DraftSteps: 3}, b, "iteration %d", i+2)
	}
}

// An MTP step with a rate per draft position, 0.75, 0.5, 0.5 for 3 drafts:
// draft 1 is accepted with 0.75, drafts 1–2 with 0.75 · 0.5 = 0.375, drafts
// 1–3 with 0.375 · 0.5 = 0.1875, so a step accepts 0.75 + 0.375 + 0.1875 =
// 1.3125 drafts on average (2.3125 tokens a step). A request of 16 prompt and
// 12 output tokens: its context (iteration 1) gives token 1; the carried
// acceptance is then 1.3125 (1 draft, 0.3125 left), 1.625 (1; 0.625),
// 1.9375 (1; 0.9375), 2.25 (2; 0.25), 1.5625 (1): iterations 2–6 give 2, 2,
// 2, 3 and the last 2 tokens (2 of 2 left): 5 generation steps for 11 tokens,
// at KV lengths 16, 18, 20, 22, 25. Two rates for three drafts: the third is
// never accepted, 0.75 + 0.375 = 1.125 a step.
func TestMTPStepPerPosition(t *testing.T) {
	rec := &recorderAll{}
	w, err := NewWorker(Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
		Options: Options{MTPDraftTokens: 3, MTPAcceptance: []float64{0.75, 0.5, 0.5}}}, rec)
	require.NoError(t, err)
	assert.Equal(t, 1.3125, w.drafts.Mean(3))
	w.Add(newRequest(1, 16, 12))
	tokens, finished := run(w)
	assert.Equal(t, []int{1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 6}, tokens[1])
	assert.Equal(t, 6, finished[1])
	require.Len(t, rec.batches, 6)
	for i, kv := range []int64{16, 18, 20, 22, 25} {
		b := rec.batches[i+1]
		assert.Equal(t, perf.Batch{Decodes: 1, DecodeKVSum: kv, SpecTokens: 3, Samplers: 4, DraftSteps: 3}, b, "iteration %d", i+2)
	}

	w, err = NewWorker(Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
		Options: Options{MTPDraftTokens: 3, MTPAcceptance: []float64{0.75, 0.5}}}, rec)
	require.NoError(t, err)
	assert.Equal(t, 1.125, w.drafts.Mean(3))

	for _, bad := range [][]float64{{0.5, 1.5}, {0.5, 0.5, 0.5, 0.5}} {
		_, err = NewWorker(Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
			Options: Options{MTPDraftTokens: 3, MTPAcceptance: bad}}, rec)
		assert.Error(t, err, "%v", bad)
	}
}

// stream_interval 3: a request's tokens come at its first iteration, every
// third of its iterations, and its last: 8 output tokens produced in
// iterations 1–8 reach the client in iterations 1 (token 1), 3 (2–3), 6 (4–6)
// and 8 (7–8).
func TestStreamInterval(t *testing.T) {
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100,
		MaxModelLen: 4096, Options: Options{StreamInterval: 3}})
	w.Add(newRequest(1, 16, 8))
	tokens, finished := run(w)
	assert.Equal(t, []int{1, 3, 3, 6, 6, 6, 8, 8}, tokens[1])
	assert.Equal(t, 8, finished[1])
}

// A P/D context server is asked for one token: its max_seq_len bounds the
// prompt + 1, not the request's output (the recipes' context servers run
// max_seq_len ISL + 40 for requests of ISL + 1024 tokens).
func TestCheckPrefillOneToken(t *testing.T) {
	w, _ := newTestWorker(t, Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 32, NumBlocks: 100, MaxModelLen: 1064})
	assert.Equal(t, "", w.CheckPrefill(1024, 1024))
	assert.Equal(t, "prompt (1064) + output (1) tokens exceed max_seq_len (1064)", w.CheckPrefill(1064, 1024))
	assert.Equal(t, "prompt (1024) + output (1024) tokens exceed max_seq_len (1064)", w.CheckFits(1024, 1024))
}

// Attention DP's placement (Family.Rank): a rank at the expected count,
// max(⌈(4 active + 1) / 3⌉, 2) = 2, is passed over although its prompts are
// the shortest; of the others the fewest active prompt tokens wins, what the
// replay holds for a rank counted on it.
func TestAttentionDPRank(t *testing.T) {
	cfg := Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 16, NumBlocks: 1000, MaxModelLen: 4096}
	ranks := make([]engine.Worker, 3)
	for i := range ranks {
		ranks[i], _ = newTestWorker(t, cfg)
	}
	ranks[0].Add(newRequest(1, 5, 3))
	ranks[0].Add(newRequest(2, 5, 3))
	ranks[1].Add(newRequest(3, 900, 3))
	held := []engine.Load{{}, {}, {Requests: 1, PromptTokens: 950}}
	assert.Equal(t, 1, Family{}.Rank(ranks, held), "rank 0 (2 requests, 10 tokens) is at the expected 2; 900 < 950")
	held[2].PromptTokens = 800
	assert.Equal(t, 2, Family{}.Rank(ranks, held))
	ranks[1].Add(newRequest(4, 5, 3))
	ranks[2].Add(newRequest(5, 5, 3))
	held[2] = engine.Load{Requests: 1, PromptTokens: 5}
	// every rank at 2: the expected count is ⌈7 / 3⌉ = 3, all may take it;
	// ranks 0 and 2 tie at 10 tokens and 2 requests: the lower rank
	assert.Equal(t, 0, Family{}.Rank(ranks, held))
}

// Attention DP's balance (Family.PlanGroup, timeout_iters 3,
// batching_wait_iters 0): both ranks' first contexts run at once (every rank
// has one); r3, a context on rank 0 alone while both ranks generate, waits
// for rank 1 to have one too: two iterations held, the third (the timeout)
// runs it. Without the balance it runs at once.
func TestAttentionDPBalance(t *testing.T) {
	iterate := func(ranks []engine.Worker) []int {
		Family{}.PlanGroup(ranks)
		ctx := make([]int, len(ranks))
		for i, w := range ranks {
			ctx[i] = len(w.Batch().Prefill)
			w.BeginPass(1000)
			w.FinishPass()
		}
		return ctx
	}
	for _, balance := range []bool{true, false} {
		cfg := Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
			Options: Options{ADPBalance: balance, ADPTimeoutIters: 3}}
		ranks := make([]engine.Worker, 2)
		for i := range ranks {
			ranks[i], _ = newTestWorker(t, cfg)
		}
		ranks[0].Add(newRequest(1, 10, 20))
		ranks[1].Add(newRequest(2, 10, 20))
		assert.Equal(t, []int{1, 1}, iterate(ranks))
		ranks[0].Add(newRequest(3, 10, 20))
		var got [][]int
		for range 3 {
			got = append(got, iterate(ranks))
		}
		if balance {
			assert.Equal(t, [][]int{{0, 0}, {0, 0}, {1, 0}}, got)
		} else {
			assert.Equal(t, [][]int{{1, 0}, {0, 0}, {0, 0}}, got)
		}
	}
}

// firstTokens steps w until nothing is left, adding late after its first
// iteration, and returns the iteration (1, 2, …) of each request's first token.
func firstTokens(t *testing.T, w *Worker, late ...*engine.Request) map[int64]int {
	first := map[int64]int{}
	for it := 1; w.HasWork(); it++ {
		_, ok := w.StartPass()
		require.True(t, ok)
		outs, _ := w.FinishPass()
		for _, o := range outs {
			if _, seen := first[o.Req.ID]; o.Kind == engine.OutToken && !seen {
				first[o.Req.ID] = it
			}
		}
		if it == 1 {
			for _, r := range late {
				w.Add(r)
			}
		}
	}
	return first
}

// Batch waiting (batch_wait_timeout_iters 3, batch_wait_max_tokens_ratio
// 0.5 of max_num_tokens 512: 256 tokens). r1 (100 prompt, 10 output) runs its
// context alone in iteration 1: with no generation request nothing waits. r2
// (100 prompt) arrives after it: iterations 2, 3 and 4 schedule r2 with r1's
// generation step, 100 + 1 = 101 tokens < 256, and hold r2 back (the count
// 1, 2, 3); iteration 5 finds the count at 3 and runs it: its first token in
// iteration 5, not 2. A 300-token r2 (301 ≥ 256) runs at once, in 2; so does
// the 100-token one with the ratio alone (timeout 0: the count is always
// ≥ 0), and without batch waiting.
func TestBatchWaitHoldsContextsBack(t *testing.T) {
	cfg := Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096}
	for _, tc := range []struct {
		name   string
		iters  int
		ratio  float64
		prompt int
		want   int
	}{
		{"timeout", 3, 0.5, 100, 5},
		{"token threshold reached", 3, 0.5, 300, 2},
		{"ratio alone", 0, 0.5, 100, 2},
		{"off", 0, 0, 100, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg.Options = Options{BatchWaitTimeoutIters: tc.iters, BatchWaitMaxTokensRatio: tc.ratio}
			w, rec := newTestWorker(t, cfg)
			w.Add(newRequest(1, 100, 10))
			first := firstTokens(t, w, newRequest(2, tc.prompt, 3))
			assert.Equal(t, 1, first[1])
			assert.Equal(t, tc.want, first[2])
			for i := 1; i < tc.want-1; i++ {
				assert.Empty(t, rec.batches[i].Prefill, "iteration %d: r2 held back", i+1)
				assert.Equal(t, 1, rec.batches[i].Decodes, "iteration %d: r1 generates", i+1)
			}
			assert.Equal(t, []perf.Chunk{{NewTokens: tc.prompt}}, rec.batches[tc.want-1].Prefill)
		})
	}
}

// A hybrid model's recurrent-state slots (state.go): a context server with
// two slots (max_batch_size 2) and room for every KV block. r1 and r2 each
// run their context in iteration 1 and finish there (prefill only, one
// token), their KV and state held for the transfer (HoldKV): both slots are
// taken, though no request is active. r3 (arrived with them) is picked by
// the capacity scheduler in iteration 2 but filtered out
// (filter_ctx_requests_by_capacity), so no iteration runs; once r1's
// transfer ends (ReleaseHeld) its slot is free and r3 runs its context.
// Without slots (a model without recurrent state) r3 runs at once.
func TestStateSlotsHoldAdmission(t *testing.T) {
	for _, slots := range []int{2, 0} {
		cfg := Config{MaxNumSeqs: 2, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
			Options: Options{StateSlots: slots}}
		w, rec := newTestWorker(t, cfg)
		rs := []*engine.Request{newRequest(1, 100, 1), newRequest(2, 100, 1), newRequest(3, 100, 1)}
		for _, r := range rs {
			r.HoldKV = true
			w.Add(r)
		}
		_, ok := w.StartPass()
		require.True(t, ok)
		outs, _ := w.FinishPass()
		require.Len(t, outs, 4, "r1 and r2: a token and the end each")
		assert.Equal(t, []perf.Chunk{{NewTokens: 100}, {NewTokens: 100}}, rec.batches[0].Prefill)
		_, ok = w.StartPass()
		if slots == 0 {
			require.True(t, ok, "no slots: r3 runs in iteration 2")
			assert.Equal(t, []perf.Chunk{{NewTokens: 100}}, rec.batches[1].Prefill)
			continue
		}
		assert.False(t, ok, "both slots held by the finished requests awaiting their transfer: r3 waits")
		assert.Equal(t, 0, w.slotsFree)
		w.ReleaseHeld(rs[0])
		assert.Equal(t, 1, w.slotsFree)
		_, ok = w.StartPass()
		require.True(t, ok, "r1's slot is free: r3 runs")
		assert.Equal(t, []perf.Chunk{{NewTokens: 100}}, rec.batches[1].Prefill)
		assert.Equal(t, 0, w.slotsFree)
		w.FinishPass()
		w.ReleaseHeld(rs[1])
		w.ReleaseHeld(rs[2])
		assert.Equal(t, 2, w.slotsFree, "every slot back")
	}
}

// A paused request (MAX_UTILIZATION) gives its slot back with its blocks
// (PyExecutor._pause_requests frees its resources), and an aborted one too.
func TestStateSlotsFreedOnPauseAndAbort(t *testing.T) {
	cfg := Config{MaxNumSeqs: 4, MaxNumBatchedTokens: 512, BlockSize: 16, NumBlocks: 100, MaxModelLen: 4096,
		Options: Options{StateSlots: 4}}
	w, _ := newTestWorker(t, cfg)
	r1 := newRequest(1, 32, 10)
	w.Add(r1)
	_, ok := w.StartPass()
	require.True(t, ok)
	w.FinishPass()
	assert.Equal(t, 3, w.slotsFree)
	w.pause(own(r1))
	assert.Equal(t, 4, w.slotsFree)
	_, ok = w.StartPass()
	require.True(t, ok)
	w.FinishPass()
	assert.Equal(t, 3, w.slotsFree)
	w.Abort(r1)
	assert.Equal(t, 4, w.slotsFree)
}

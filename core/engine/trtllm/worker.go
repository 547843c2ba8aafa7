package trtllm

import (
	"fmt"
	"slices"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Request is the TensorRT-LLM worker's request (LlmRequest): the shared part
// the replay sees and the worker's own state.
type Request struct {
	engine.Request

	state int8
	// computed is the tokens whose KV is in the cache (the context position
	// while a context runs); chunk the context tokens of this iteration.
	computed, chunk int
	// moved is the tokens a pause moved from the output into the context
	// (LlmRequest::pause): the context is Prompt + moved tokens.
	moved      int
	blocks     []int32 // KV blocks held, in token order
	registered int     // leading blocks whose content is named (block reuse)
	admitted   bool    // first admission done (CachedTokens set)
	// lost is the tokens in the cache when it was last paused.
	lost int
	// iters counts the iterations that produced its tokens, held the tokens
	// produced and not yet returned (stream_interval), accepted the
	// fractional draft tokens carried to its next MTP step.
	iters, held int
	accepted    float64
	// kvReady (P/D decode side): the tokens whose KV arrives by transfer.
	kvReady int
	// slot: it holds a recurrent-state slot (hybrid models, state.go).
	slot bool
}

// Where a request is on its worker (LlmRequestState, as the simulation needs it).
const (
	stNone       int8 = iota // not on the worker
	stContext                // CONTEXT_INIT: waiting, or between context chunks
	stGeneration             // GENERATION_IN_PROGRESS
	stHeld                   // finished, KV held for a transfer (HoldKV)
	stAwaiting               // DISAGG_GENERATION_INIT: a handoff waiting for its blocks
	stTransfer               // DISAGG_GENERATION_TRANS_IN_PROGRESS: blocks taken, KV in transfer
)

// context is the tokens the request's context phase computes.
func (r *Request) context() int { return r.Prompt + r.moved }

// started reports whether r holds KV it computed (a generation request, or a
// context past its first chunk): what MAX_UTILIZATION may pause.
func (r *Request) started() bool {
	return r.state == stGeneration || (r.state == stContext && len(r.blocks) > 0)
}

// Worker is one TensorRT-LLM executor (PyExecutor of one attention-DP rank,
// or of the whole TP group): its active requests in arrival order, its
// capacity and micro-batch schedulers, its KV cache.
type Worker struct {
	cfg  Config
	opt  Options
	perf perf.Model
	kv   *kvPool

	// active is the executor's active requests in arrival order (contexts,
	// generation requests and handoffs in transfer); awaiting the handoffs
	// waiting for blocks, in order.
	// draft is the MTP draft tokens of each generation step, drafts their
	// acceptance (a step accepts drafts.Mean(draft) on average).
	draft  int
	drafts engine.Drafts

	active   []*Request
	awaiting []*Request
	// adp is attention DP's balance state (Family.PlanGroup; the first
	// rank's): iterations the contexts have waited for every rank to have
	// one, and for batching
	adp struct{ waiting, batching int }
	// batchWaited is the iterations batch waiting has held the contexts
	// back (PyExecutor.batch_wait_iters_count)
	batchWaited int
	reserved    []*engine.Request // ReserveWaiting's result, reused
	nTransfer   int

	// one iteration's scheduling (scheduler.go)
	fitting, pending, paused, ctx, gen []*Request
	contributed                        []uint64

	// slotsFree is the free recurrent-state slots (Options.StateSlots
	// less those held; state.go).
	slotsFree int

	busy  bool
	batch perf.Batch
	outs  []Out

	prefix engine.PrefixCacheStats
	// BusyNs is the time spent in iterations; Passes the iterations run;
	// RecomputedTokens the tokens paused requests had computed and computed
	// again.
	BusyNs, Passes, RecomputedTokens int64
}

// NewWorker returns an idle worker with an empty KV cache.
func NewWorker(cfg Config, pm perf.Model) (*Worker, error) {
	switch {
	case cfg.MaxNumSeqs < 1, cfg.MaxNumBatchedTokens < 1, cfg.BlockSize < 1, cfg.NumBlocks < 1, cfg.MaxModelLen < 1:
		return nil, fmt.Errorf("trtllm: invalid config %+v", cfg)
	case pm == nil:
		return nil, fmt.Errorf("trtllm: no perf model")
	}
	opt, err := optionsOf(cfg)
	if err != nil {
		return nil, err
	}
	for i, s := range opt.CUDAGraphBatchSizes {
		if s < 1 || (i > 0 && s <= opt.CUDAGraphBatchSizes[i-1]) {
			return nil, fmt.Errorf("trtllm: CUDA-graph batch sizes %v: want ascending sizes ≥ 1", opt.CUDAGraphBatchSizes)
		}
	}
	if opt.MTPDraftTokens < 0 || len(opt.MTPAcceptance) > opt.MTPDraftTokens || opt.StreamInterval < 0 || opt.StateSlots < 0 ||
		opt.BatchWaitTimeoutIters < 0 || opt.BatchWaitMaxTokensRatio < 0 || opt.BatchWaitMaxTokensRatio > 1 {
		return nil, fmt.Errorf("trtllm: invalid options %+v", opt)
	}
	drafts, err := engine.NewDrafts(opt.MTPDraftTokens, opt.MTPAcceptance)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, opt: opt, perf: pm, kv: newKVPool(cfg.NumBlocks, cfg.PrefixCaching), draft: opt.MTPDraftTokens, drafts: drafts,
		slotsFree: opt.StateSlots}
	return w, nil
}

func (w *Worker) blocksFor(n int) int { return engine.BlocksFor(n, w.cfg.BlockSize) }

// CheckFits returns why a request can never run here ("" if it can): prompt +
// output beyond max_seq_len, more blocks than the whole cache for prompt +
// output (GUARANTEED_NO_EVICT reserves them all; MAX_UTILIZATION needs them by
// the end), or, without chunked prefill, a prompt beyond max_num_tokens (the
// micro-batch scheduler's "context tokens exceed the limit").
func (w *Worker) CheckFits(prompt, output int) string { return w.checkFits(prompt, output, output) }

// CheckPrefill is CheckFits for a P/D context worker, which holds the prompt's
// KV only and is asked for one token: the disaggregated front end sends the
// context server a context-only request of max_tokens 1
// (tensorrt_llm/serve/openai_disagg_server.py, _process_context_server_request;
// Dynamo's TensorRT-LLM prefill handler likewise), so its max_seq_len bounds
// the prompt + 1 (the recipes' context servers run max_seq_len ISL + 40).
func (w *Worker) CheckPrefill(prompt, output int) string {
	return w.checkFits(prompt, min(output, 1), 0)
}

func (w *Worker) checkFits(prompt, output, kvOutput int) string {
	if prompt > w.cfg.MaxModelLen || output > w.cfg.MaxModelLen-prompt {
		return fmt.Sprintf("prompt (%d) + output (%d) tokens exceed max_seq_len (%d)", prompt, output, w.cfg.MaxModelLen)
	}
	if !w.opt.ChunkedPrefill && prompt > w.cfg.MaxNumBatchedTokens {
		return fmt.Sprintf("prompt (%d tokens) exceeds max_num_tokens (%d) without enable_chunked_prefill", prompt, w.cfg.MaxNumBatchedTokens)
	}
	if need := w.blocksFor(prompt + kvOutput); need > w.cfg.NumBlocks {
		return fmt.Sprintf("needs %d KV blocks, more than the whole cache (%d blocks of %d tokens)", need, w.cfg.NumBlocks, w.cfg.BlockSize)
	}
	return ""
}

// CheckHandoff returns why this generation worker can never hold a handed-off
// request of prompt tokens producing output tokens.
func (w *Worker) CheckHandoff(prompt, output int) string {
	if need := w.blocksFor(prompt + output); need > w.cfg.NumBlocks {
		return fmt.Sprintf("handoff needs %d KV blocks, more than the generation worker's whole cache (%d blocks of %d tokens)", need, w.cfg.NumBlocks, w.cfg.BlockSize)
	}
	return ""
}

// renew starts r's life on a worker, keeping its block list's capacity.
func (r *Request) renew() {
	if r.state != stNone {
		panic("trtllm: a request still on a worker was reused")
	}
	*r = Request{Request: r.Request, blocks: r.blocks[:0]}
}

// Add queues a new request (the executor's request queue, fetched into the
// active requests at the next iteration).
func (w *Worker) Add(er *engine.Request) {
	r := own(er)
	r.renew()
	r.state = stContext
	w.active = append(w.active, r)
}

// Abort removes r wherever it is and frees its KV.
func (w *Worker) Abort(er *engine.Request) {
	r := own(er)
	switch r.state {
	case stContext, stGeneration, stTransfer:
		if r.state == stTransfer {
			w.nTransfer--
		}
		w.active = remove(w.active, r)
	case stAwaiting:
		w.awaiting = remove(w.awaiting, r)
	case stHeld:
	default:
		return
	}
	if w.busy { // a running iteration computes it still, and emits nothing for it
		w.ctx, w.gen = drop(w.ctx, r), drop(w.gen, r)
	}
	w.kv.release(r.blocks)
	r.blocks = r.blocks[:0]
	w.freeSlot(r)
	r.chunk, r.state = 0, stNone
}

// drop is rs without r (rs unchanged when r is not in it).
func drop(rs []*Request, r *Request) []*Request {
	if i := slices.Index(rs, r); i >= 0 {
		return slices.Delete(rs, i, i+1)
	}
	return rs
}

// remove is rs without r, which it holds (the freed slot cleared).
func remove(rs []*Request, r *Request) []*Request {
	i := slices.Index(rs, r)
	if i < 0 {
		panic("trtllm: request not in its list")
	}
	return slices.Delete(rs, i, i+1)
}

// HasWork reports whether a context or generation request is active.
func (w *Worker) HasWork() bool { return len(w.active) > w.nTransfer }

// StartPass forms the next iteration, prices it and starts it.
func (w *Worker) StartPass() (int64, bool) {
	if !w.PlanPass() {
		return 0, false
	}
	d := w.perf.PassTime(&w.batch)
	w.BeginPass(d)
	return d, true
}

// PlanPass forms the next iteration without pricing it: capacity scheduler,
// pauses, micro-batch scheduler, resources (scheduler.go), the batch.
func (w *Worker) PlanPass() bool {
	w.schedule()
	return w.finishPlan()
}

// schedule is PlanPass up to the schedulers' output (w.ctx, w.gen): what
// attention DP's balance reads before resources are taken (Family.PlanGroup).
func (w *Worker) schedule() {
	if w.busy {
		panic("trtllm: PlanPass on a busy worker")
	}
	w.batch.Prefill, w.batch.Decodes, w.batch.DecodeKVSum, w.batch.Samplers = w.batch.Prefill[:0], 0, 0, 0
	w.batch.SpecTokens, w.batch.DraftSteps = 0, 0
	w.batch.DecodeWindowSums = w.batch.DecodeWindowSums[:0]
	w.ctx, w.gen = w.ctx[:0], w.gen[:0]
	if !w.HasWork() {
		return
	}
	w.capacity()
	for _, r := range w.paused {
		w.pause(r)
	}
	w.filterBySlots()
	w.microBatch()
	w.batchWait()
}

// batchWait is PyExecutor._waiting_requests as _schedule calls it (with
// batch_wait_timeout_iters or batch_wait_max_tokens_ratio set, without
// attention DP): when the schedulers picked contexts and generation requests,
// the contexts run only once the iteration's tokens — each context's whole
// length (len(get_tokens)), each generation request 1 + its draft tokens —
// reach batch_wait_max_tokens_ratio × max_num_tokens or the contexts have
// been held batch_wait_timeout_iters iterations (the count then starts
// again); otherwise they wait this iteration and the count grows. Without
// generation requests nothing waits ("to avoid dead waiting").
func (w *Worker) batchWait() {
	o := &w.opt
	if (o.BatchWaitTimeoutIters <= 0 && o.BatchWaitMaxTokensRatio <= 0) || len(w.ctx) == 0 || len(w.gen) == 0 {
		return
	}
	tokens := len(w.gen) * (1 + w.draft)
	for _, r := range w.ctx {
		tokens += r.context()
	}
	if w.batchWaited >= o.BatchWaitTimeoutIters || float64(tokens) >= o.BatchWaitMaxTokensRatio*float64(w.cfg.MaxNumBatchedTokens) {
		w.batchWaited = 0
		return
	}
	w.batchWaited++
	w.ctx = w.ctx[:0]
}

// finishPlan is the rest of PlanPass: the scheduled contexts' and generation
// steps' blocks, the batch.
func (w *Worker) finishPlan() bool {
	if !w.HasWork() {
		return false
	}
	for _, r := range w.ctx {
		if len(r.blocks) == 0 {
			w.allocContext(r)
		}
		w.takeSlot(r)
	}
	kept := w.ctx[:0]
	for _, r := range w.ctx {
		if r.chunk > 0 { // block reuse may leave a first chunk nothing to compute before the next boundary
			kept = append(kept, r)
		}
	}
	w.ctx = kept
	for _, r := range w.gen {
		if need := w.blocksFor(r.computed+1+w.draft) - len(r.blocks); need > 0 {
			r.blocks = w.kv.takeN(need, r.blocks)
		}
	}
	w.formBatch()
	return len(w.ctx)+len(w.gen) > 0
}

// pause is PyExecutor._pause_requests for r: LlmRequest::pause moves its
// outputs into its context, which it computes again from the start, and its
// blocks are freed (cached for reuse where they hold named content).
func (w *Worker) pause(r *Request) {
	r.lost, r.moved = r.computed, r.Generated
	w.kv.release(r.blocks)
	w.freeSlot(r)
	r.blocks, r.registered, r.computed, r.chunk = r.blocks[:0], 0, 0, 0
	r.state = stContext
	r.Preemptions++
}

// allocContext gives a context its blocks at its first chunk
// (KVCacheManager.add_sequence of the prompt): with block reuse, the leading
// cached blocks of its prompt are shared, at most context − 1 tokens (the
// last is always computed; a cached block holding it is copied,
// copy_on_partial_reuse), and the chunk moves past the reused tokens, ending on
// a block boundary unless it is the last (LlmRequest::setPrepopulatedPromptLen).
func (w *Worker) allocContext(r *Request) {
	ctx := r.context()
	cached := 0
	if w.kv.reuse && len(r.Hashes) > 0 {
		full := min(len(r.Hashes), ctx/w.cfg.BlockSize)
		var n int
		r.blocks, n = w.kv.match(r.Hashes, min(full, (ctx-1)/w.cfg.BlockSize), r.blocks)
		cached = n * w.cfg.BlockSize
		if n == (ctx-1)/w.cfg.BlockSize && n < full {
			if _, ok := w.kv.byHash[r.Hashes[n]]; ok {
				cached = ctx - 1 // the last block partially reused (a copy)
			}
		}
		r.registered = n
	}
	r.blocks = w.kv.takeN(w.blocksFor(ctx)-len(r.blocks), r.blocks)
	if !r.admitted {
		r.admitted, r.CachedTokens = true, cached
		if w.kv.reuse {
			w.prefix.Requests++
			w.prefix.Queries += int64(ctx)
			w.prefix.Hits += int64(cached)
		}
	} else if w.kv.reuse {
		w.prefix.PreemptedRequests++
		w.prefix.PreemptedQueries += int64(ctx)
		w.prefix.PreemptedHits += int64(cached)
	}
	if r.lost > 0 {
		w.RecomputedTokens += int64(max(0, r.lost-cached))
		r.lost = 0
	}
	if cached > 0 {
		end := cached + r.chunk
		if end < ctx {
			end = end / w.cfg.BlockSize * w.cfg.BlockSize
		} else {
			end = ctx
		}
		r.computed, r.chunk = cached, max(0, end-cached)
	}
}

// formBatch is the iteration as the perf model prices it: each context chunk
// after its cached prefix, each generation request one token at its KV
// length (with MTP, its draft tokens too: SpecTokens, every position
// sampled, and the draft steps after: DraftSteps); a generation-only
// iteration with CUDA graphs runs at the captured batch size it pads to
// (cudagraph.go), its dummy requests one token long.
func (w *Worker) formBatch() {
	b := &w.batch
	for _, r := range w.ctx {
		b.Prefill = append(b.Prefill, perf.Chunk{NewTokens: r.chunk, PrefixTokens: r.computed})
		if r.computed+r.chunk == r.context() {
			b.Samplers++
		}
	}
	win := w.cfg.DecodeWindows
	for _, r := range w.gen {
		if len(win) > 0 {
			b.AddDecodeWindows(r.computed, win)
		} else {
			b.AddDecode(r.computed)
		}
	}
	if len(w.ctx) == 0 {
		for pad := w.graphPadding(len(w.gen)); pad > 0; pad-- {
			if len(win) > 0 {
				b.AddDecodeWindows(1, win)
			} else {
				b.AddDecode(1)
			}
		}
	}
	b.SpecTokens = b.Decodes * w.draft
	b.Samplers += b.Decodes + b.SpecTokens
	if w.draft > 0 && (b.Decodes > 0 || len(b.Prefill) > 0) {
		b.DraftSteps = w.draft
	}
}

// Batch is the iteration formed by the last PlanPass.
func (w *Worker) Batch() *perf.Batch { return &w.batch }

// BeginPass starts the planned iteration, lasting durNs ≥ 1 (a rank that
// planned nothing runs an empty one: attention DP's dummy iteration).
func (w *Worker) BeginPass(durNs int64) {
	if w.busy {
		panic("trtllm: BeginPass on a busy worker")
	}
	if durNs < 1 {
		panic(fmt.Sprintf("trtllm: perf model %s returned a pass time of %d ns", w.perf.Name(), durNs))
	}
	w.busy = true
	w.BusyNs += durNs
	w.Passes++
}

// FinishPass applies the running iteration at its end: context chunks and
// generation tokens in the cache, a completed context or a generation step
// samples a token, finished requests release their blocks (cached for reuse).
func (w *Worker) FinishPass() ([]Out, int) {
	if !w.busy {
		panic("trtllm: FinishPass on an idle worker")
	}
	w.busy = false
	w.outs = w.outs[:0]
	done := false
	for _, r := range w.ctx {
		r.computed += r.chunk
		r.chunk = 0
		w.nameFull(r)
		if r.computed < r.context() {
			continue
		}
		r.state = stGeneration
		done = w.emit(r, 1) || done
	}
	for _, r := range w.gen {
		k := 1
		if w.draft > 0 { // the drafts it accepts: meanAccepted a step, carried in fractions
			k += w.drafts.Accept(&r.accepted, w.draft)
		}
		k = min(k, r.Output-r.Generated)
		r.computed += k
		done = w.emit(r, k) || done
	}
	if done {
		kept := w.active[:0]
		for _, r := range w.active {
			if r.state != stNone && r.state != stHeld {
				kept = append(kept, r)
			}
		}
		clear(w.active[len(kept):])
		w.active = kept
	}
	w.ctx, w.gen = w.ctx[:0], w.gen[:0]
	return w.outs, 0
}

// emit gives r its next k tokens (none for a prefill-only request) and
// finishes it at its output length; it reports whether r finished. The tokens
// are returned at once at r's first iteration, every stream_interval
// iterations and at its end, held between (PyExecutor._handle_responses).
func (w *Worker) emit(r *Request, k int) bool {
	k = min(k, r.Output-r.Generated)
	r.Generated += k
	r.held += k
	r.iters++
	last := r.Generated >= r.Output
	if iv := w.opt.StreamInterval; r.iters == 1 || iv <= 1 || r.iters%iv == 0 || last {
		for ; r.held > 0; r.held-- {
			w.outs = append(w.outs, Out{Req: &r.Request, Kind: engine.OutToken})
		}
	}
	if !last {
		return false
	}
	if r.HoldKV {
		r.state = stHeld
	} else {
		w.kv.release(r.blocks)
		r.blocks = r.blocks[:0]
		w.freeSlot(r)
		r.state = stNone
	}
	w.outs = append(w.outs, Out{Req: &r.Request, Kind: engine.OutFinished})
	return true
}

// nameFull names the full prompt blocks a context chunk completed, for reuse
// (KVCacheManager::storeContextBlocks; the blocks of generated tokens have no
// content another request can name).
func (w *Worker) nameFull(r *Request) {
	if !w.kv.reuse {
		return
	}
	full := min(r.computed/w.cfg.BlockSize, len(r.Hashes), len(r.blocks))
	for j := r.registered; j < full; j++ {
		w.kv.name(r.blocks[j], r.Hashes[j])
	}
	r.registered = max(r.registered, full)
}

// ReleaseHeld frees the KV of a finished HoldKV request (context side, after
// its transfer).
func (w *Worker) ReleaseHeld(er *engine.Request) {
	r := own(er)
	w.kv.release(r.blocks)
	r.blocks = r.blocks[:0]
	w.freeSlot(r)
	r.state = stNone
}

// Handoff (generation side) takes a request whose prompt's KV a context
// worker computed (DISAGG_GENERATION_INIT): the blocks for its prompt are
// taken now when the capacity scheduler would admit it (GUARANTEED_NO_EVICT:
// its whole remaining need fits what the running requests leave;
// MAX_UTILIZATION: its prompt's blocks are free) and no earlier handoff waits,
// else it waits in order (ReserveWaiting). The whole prompt's KV moves
// (r.PulledTokens): the generation side's own block reuse is not modelled.
func (w *Worker) Handoff(er *engine.Request) bool {
	r := own(er)
	r.renew()
	r.kvReady, r.admitted = r.Prompt, true
	r.PulledTokens = r.Prompt
	if len(w.awaiting) == 0 && w.reserve(r, w.handoffRoom()) >= 0 {
		return true
	}
	r.state = stAwaiting
	w.awaiting = append(w.awaiting, r)
	return false
}

// handoffRoom is the blocks a handoff may take: the free blocks, less (under
// GUARANTEED_NO_EVICT) the remaining need of every active request.
func (w *Worker) handoffRoom() int {
	room := w.kv.available()
	if w.opt.Policy == GuaranteedNoEvict {
		for _, r := range w.active {
			if r.state == stGeneration || r.state == stTransfer || len(r.blocks) > 0 {
				room -= w.remainingToCompletion(r)
			}
		}
	}
	return room
}

// reserve takes r's blocks for its transferred tokens if its need fits room,
// and returns the room left (< 0: not taken).
func (w *Worker) reserve(r *Request, room int) int {
	need := w.blocksFor(r.kvReady + 1)
	if w.opt.Policy == GuaranteedNoEvict {
		need = w.blocksFor(r.Prompt + r.Output)
	}
	if need > room || w.blocksFor(r.kvReady+1) > w.kv.available() || !w.slotFree() {
		return -1
	}
	r.blocks = w.kv.takeN(w.blocksFor(r.kvReady+1), r.blocks)
	w.takeSlot(r)
	r.state = stTransfer
	w.active = append(w.active, r)
	w.nTransfer++
	return room - need
}

// ReserveWaiting reserves the waiting handoffs in order while they fit and
// returns them (reused by the next call).
func (w *Worker) ReserveWaiting() []*engine.Request {
	w.reserved = w.reserved[:0]
	if len(w.awaiting) == 0 {
		return w.reserved
	}
	room := w.handoffRoom()
	n := 0
	for _, r := range w.awaiting {
		if room = w.reserve(r, room); room < 0 {
			break
		}
		w.reserved = append(w.reserved, &r.Request)
		n++
	}
	w.awaiting = w.awaiting[:copy(w.awaiting, w.awaiting[n:])]
	return w.reserved
}

// KVArrived: the transfer is done; the request generates from the next
// iteration on (DISAGG_GENERATION_TRANS_COMPLETE → GENERATION_IN_PROGRESS), its
// first step at KV length prompt. (TensorRT-LLM's context worker samples the
// first token and the generation worker returns it when the transfer is done,
// its first step computing the second; here the first step's token is the
// client's first, one iteration later: docs/trtllm.md, "Disaggregated".)
func (w *Worker) KVArrived(er *engine.Request) {
	r := own(er)
	if r.state != stTransfer {
		panic("trtllm: KVArrived of a request without reserved blocks")
	}
	w.nTransfer--
	r.state, r.computed = stGeneration, r.kvReady
}

// Outstanding, Waiting and Running: the load placement reads.
func (w *Worker) Outstanding() int { return len(w.active) + len(w.awaiting) }

// activeLoad is the executor's active requests and their prompt tokens
// (py_orig_prompt_len), handoffs waiting for blocks included: what attention
// DP's balancing gathers from each rank (Family.Rank).
func (w *Worker) activeLoad() engine.Load {
	l := engine.Load{Requests: w.Outstanding()}
	for _, r := range w.active {
		l.PromptTokens += r.Prompt
	}
	for _, r := range w.awaiting {
		l.PromptTokens += r.Prompt
	}
	return l
}

// Waiting is the requests not yet started: contexts without blocks and
// handoffs (waiting for blocks or in transfer).
func (w *Worker) Waiting() int { return w.Outstanding() - w.Running() }

// Running is the requests holding KV they compute into.
func (w *Worker) Running() int {
	n := 0
	for _, r := range w.active {
		if r.started() {
			n++
		}
	}
	return n
}

// PassStats describes the running iteration.
func (w *Worker) PassStats() PassStats {
	run := w.Running()
	return PassStats{PrefillTokens: w.batch.PrefillTokens(), PrefillRequests: len(w.batch.Prefill),
		DecodeRequests: len(w.gen), Running: run, Waiting: len(w.active) - w.nTransfer - run,
		KVBlocksUsed: w.cfg.NumBlocks - w.kv.available(), KVBlocksCached: w.kv.lruLen}
}

// Counters returns the worker's totals so far.
func (w *Worker) Counters() engine.Counters {
	return engine.Counters{KV: w.kv.stats, KVFree: w.kv.available(), KVCached: w.kv.lruLen, PrefixCache: w.prefix,
		BusyNs: w.BusyNs, Passes: w.Passes, RecomputedTokens: w.RecomputedTokens}
}

// TensorRT-LLM's worker decodes request by request: no steady set, so no
// iteration ends without an event and nothing is reported by count.

func (w *Worker) SteadyUnmeasured() int  { return 0 }
func (w *Worker) Syncs() []engine.Sync   { return nil }
func (w *Worker) OnlySteady() bool       { return false }
func (w *Worker) LandSteady() (int, int) { panic("trtllm: no steady iterations") }
func (w *Worker) CruiseSteady() (int, int, int64, bool) {
	panic("trtllm: no steady iterations")
}

package sglang

import (
	"fmt"
	"slices"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Options are the SGLang server arguments a worker follows
// (engine.Config.Options), resolved by the family's plan (plan.go).
type Options struct {
	// ChunkedPrefillSize is --chunked-prefill-size: the most prompt tokens
	// of one pass (≤ 0: no chunking).
	ChunkedPrefillSize int
	// MaxPrefillTokens is --max-prefill-tokens: the prompt token budget of
	// one prefill pass's admissions (PrefillAdder.rem_input_tokens).
	MaxPrefillTokens int
	// PageSize is --page-size, tokens.
	PageSize int
	// Policy is --schedule-policy (config.SGLangPolicy*).
	Policy string
	// InitNewTokenRatio, MinNewTokenRatio and NewTokenRatioDecay are the
	// scheduler's new_token_ratio estimate (scheduler.py,
	// init_schedule_policy): SGLANG_INIT_NEW_TOKEN_RATIO (0.7) ×
	// schedule_conservativeness, × SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
	// (0.14), and their gap over SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS (600).
	InitNewTokenRatio, MinNewTokenRatio, NewTokenRatioDecay float64
	// MixedChunk is --enable-mixed-chunk: a prefill pass decodes the
	// running requests too.
	MixedChunk bool
	// RadixCache: prefix reuse (off: --disable-radix-cache, or a P/D decode
	// server, which SGLang runs with its ChunkCache).
	RadixCache bool
	// MaxReqLen is the scheduler's max_req_len (min(context_length − 1,
	// max_total_num_tokens − 1)) and MaxReqInputLen its max_req_input_len
	// (max_req_len − 5): longer prompts are refused.
	MaxReqLen, MaxReqInputLen int
	// DraftSteps is EAGLE's speculative_num_steps (0: no speculative
	// decoding): a decode verifies DraftSteps + 1 tokens
	// (speculative_num_draft_tokens, topk 1) and the draft model runs
	// DraftSteps steps after each pass; Acceptance[i] the probability that
	// draft i + 1 is accepted when those before it were (a draft beyond the
	// list never is).
	DraftSteps int
	Acceptance []float64
	// Overlap is the overlap scheduler (event_loop_overlap): a pass is
	// formed before the previous one's results are processed, so a decode
	// pass also carries, once more, the requests that finished in the pass
	// before it (their finish is not known yet).
	Overlap bool
	// RequestSlots is a P/D decode server's request slots
	// (disaggregation/decode.py, DecodeReqToTokenPool): its request pool
	// and the pre_alloc_size beside it; a handoff holds one from its KV
	// reservation to its finish (0: no decode server, no limit).
	RequestSlots int
	// PrefillServer is a P/D prefill server (--disaggregation-mode
	// prefill): its event loop never forms a decode batch, so it clears the
	// running batch's batch_is_full before every prefill batch it forms
	// (disaggregation/prefill.py, event_loop_normal_disagg_prefill and
	// event_loop_overlap_disagg_prefill: "reset the batch_is_full flag
	// because we never enter update_running_batch which resets it").
	PrefillServer bool
	// EagerLaunchNs is the host's launch of every layer's kernels, ns
	// (engine.sglang.eager_launch_us_per_layer × the model's layers), paid by
	// a pass that runs eagerly: an extend pass, or a decode pass of more than
	// GraphMaxBS requests (cuda_graph_runner.py can_run); 0: not modelled.
	EagerLaunchNs float64
	// GraphMaxBS is the largest decode pass replayed from a CUDA graph
	// (cuda_graph_max_bs; 0 on a prefill server, which captures none).
	GraphMaxBS int
	// PiecewiseMaxTokens is the largest extend pass replayed from piecewise
	// CUDA graphs (piecewise_cuda_graph_max_tokens, piecewise_cuda_graph_runner.py
	// can_run: the pass's tokens); 0: none, every extend pass runs eagerly.
	PiecewiseMaxTokens int
	// PiecewiseMinTokens is the smallest extend pass the graphs replay
	// (from 0.5.16, 2: a pass padded past twice its tokens runs eagerly);
	// 0: any up to PiecewiseMaxTokens.
	PiecewiseMinTokens int
	// PageOverhead: each admission also reserves a page (page_size tokens)
	// in both prefill budgets (schedule_policy.py _update_prefill_budget,
	// "alloc_extend reserves an extra page_size per request": from 0.5.10).
	PageOverhead bool
	// PageInAdmitCheck: add_one_req's total_tokens, checked against
	// rem_total_tokens, counts a page more (extend + max_new + page_size:
	// from 0.5.11).
	PageInAdmitCheck bool
	// IgnoreEOSFullRoom: a running request's reserved decode room is its
	// tokens left, not × new_token_ratio, for an ignore_eos request
	// (_get_running_request_total_token_offset: ratio 1.0 if
	// sampling_params.ignore_eos, from 0.5.22); every simulated request runs
	// to its output length.
	IgnoreEOSFullRoom bool
	// RetractSortsSpec: retract_decode sorts the requests (fewest outputs,
	// then longest prompts, out first) with EAGLE too (from 0.5.17; through
	// 0.5.16 it retracts the batch's last first).
	RetractSortsSpec bool
	// StreamByUnsent: with an interval above 1 a request's tokens go out
	// when none was sent yet or at least the interval's are held (from
	// 0.5.22), not at the output lengths StreamsFirstToken names.
	StreamByUnsent bool
	// SkipFinishingDecode: the overlap scheduler of an aggregated server
	// leaves out of the next decode batch the requests whose queued result
	// finishes them by length (scheduler.py _reqs_finishing_inflight,
	// enable_skip_finishing_decode set by event_loop_overlap: from 0.5.22),
	// so they take no extra decode.
	SkipFinishingDecode bool
	// InputCapUnchunkedOnly: a prompt that does not fit the pass's
	// remaining max_prefill_tokens ends the admissions only without chunked
	// prefill (add_one_req: "self.rem_chunk_tokens is None and ...", from
	// 0.5.13); before, with chunked prefill too.
	InputCapUnchunkedOnly bool
	// StreamInterval is --stream-interval (0 or 1: every pass's tokens are
	// sent), StreamsFirstToken the release's rule of which output lengths
	// send (config.SGLangStreamsFirstToken; Worker.streams).
	StreamInterval    int
	StreamsFirstToken bool
}

// Scheduler constants of SGLang (python/sglang/srt/environ.py, envs;
// schedule_policy.py).
const (
	// clipMaxNewTokens is SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION: the
	// estimate of a request's remaining output is clipped to it.
	clipMaxNewTokens = 4096
	// retractDecodeSteps is SGLANG_RETRACT_DECODE_STEPS: the decode steps
	// a retraction's new ratio leaves room for.
	retractDecodeSteps = 20
	// lpmQueueLimit: lpm sorts by prefix only while at most this many
	// requests wait (SchedulePolicy._determine_active_policy).
	lpmQueueLimit = 128
	// inBatchPrefixThreshold is IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD and
	// _DEPRIORITIZE_THRESHOLD: under lpm, a request that matches at most
	// this many cached tokens but this many of a request ahead of it in the
	// queue waits behind the others.
	inBatchPrefixThreshold = 32
	// ignoreEOSReserveTokens is IGNORE_EOS_RESERVE_TOKENS.
	ignoreEOSReserveTokens = 1
)

// Where a request is on its worker.
const (
	onNone           int8 = iota
	onWaiting             // the waiting queue
	onRunning             // the running batch, the chunked request, or just prefilled
	onHeld                // finished, KV held (HoldKV)
	onAwaitingBlocks      // P/D decode side: waiting to reserve its KV
	onReserved            // P/D decode side: KV reserved, in transfer
	onArrived             // P/D decode side: KV arrived, joins the running batch when it has room
)

// Request is the SGLang worker's request: the shared part and the worker's
// state of it (schedule_batch.py, Req).
type Request struct {
	engine.Request

	where int8
	// prefix is the tokens it holds through the radix tree (prefix_indices),
	// ending at node last (locked); own the tokens of KV it holds apart
	// from the tree. prefix + own are its computed tokens.
	prefix, own int
	last        *node
	// scheduled: tokens the running pass computes for it (its extend
	// length, or 1 for a decode); decode: the pass decodes it.
	scheduled int
	decode    bool
	// key is its content over Prompt + Output tokens: the replay's prefix
	// hash blocks, the known partial block, then its own content.
	key []piece
	// already and cached are SGLang's already_computed and cached_tokens
	// (prepare_for_extend: cached_tokens += prefix − already_computed).
	already, cached int
	admitted        bool
	retracted       bool
	lost            int    // computed tokens when last retracted
	serial          uint64 // on this worker (its own content's key)
	// P/D decode side: the prompt's kvReady tokens arrive by transfer.
	transferred bool
	kvReady     int
	// accepted carries the fraction of a draft token its decodes have
	// accepted on average (EAGLE: meanAccepted a decode)
	accepted float64
	// held: tokens generated and not yet sent (--stream-interval)
	held int
}

// fill is fill_ids' length: prompt and output so far.
func (r *Request) fill() int      { return r.Prompt + r.Generated }
func (r *Request) computed() int  { return r.prefix + r.own }
func (r *Request) remaining() int { return max(r.Output-r.Generated, 0) }

// Worker is one SGLang scheduler (scheduler.py, Scheduler) with its token
// pool and radix cache: TP GPUs acting as one.
type Worker struct {
	cfg  engine.Config
	opt  Options
	perf perf.Model
	tree *radixTree // nil: no radix cache (ChunkCache)

	capacity, free int // the token pool, tokens

	waiting []*Request
	running []*Request // the running (decode) batch
	chunked *Request   // the request whose prompt is being chunked
	// last is the prefill pass just run, merged into the running batch when
	// the next pass is formed (get_next_batch_to_run)
	last       []*Request
	lastShrunk bool // a request of last finished (batch_is_full reset)
	batchFull  bool
	ratio      float64 // new_token_ratio

	// the running pass
	busy       bool
	pass       []*Request
	batch      perf.Batch
	outs       []engine.Out
	prefillRun bool

	// P/D decode side
	awaiting    []*Request
	inTransfer  int
	arrived     []*Request
	reservedNow []*engine.Request

	// EAGLE: the tokens a decode writes (its token and the drafts it
	// verifies) and the drafts a decode accepts on average, a + a² + … +
	// a^steps (topk 1: the i-th draft is kept when it and every one before it
	// are accepted)
	verify       int
	meanAccepted float64
	// late: the KV lengths of the requests that finished in the last decode
	// pass, which the next one still decodes (Options.Overlap)
	late []int

	serials                    uint64
	kv                         engine.KVStats
	prefix                     engine.PrefixCacheStats
	busyNs, passes, recomputed int64
	adder                      adder
}

// NewWorker returns an idle SGLang worker; cfg.Options holds its Options,
// cfg.NumBlocks × cfg.BlockSize is its token pool.
func NewWorker(cfg engine.Config, pm perf.Model) (*Worker, error) {
	opt, ok := cfg.Options.(Options)
	switch {
	case !ok:
		return nil, fmt.Errorf("sglang: engine options %T, want sglang.Options", cfg.Options)
	case cfg.MaxNumSeqs < 1 || cfg.NumBlocks < 1 || cfg.BlockSize < 1 || cfg.MaxModelLen < 1:
		return nil, fmt.Errorf("sglang: invalid config %+v", cfg)
	case opt.PageSize != cfg.BlockSize || opt.MaxPrefillTokens < 1 || opt.MaxReqInputLen < 1:
		return nil, fmt.Errorf("sglang: invalid options %+v", opt)
	case pm == nil:
		return nil, fmt.Errorf("sglang: no perf model")
	}
	drafts, err := engine.NewDrafts(opt.DraftSteps, opt.Acceptance)
	if err != nil {
		return nil, fmt.Errorf("sglang: invalid speculative options: %w", err)
	}
	w := &Worker{cfg: cfg, opt: opt, perf: pm, capacity: cfg.NumBlocks * cfg.BlockSize, ratio: opt.InitNewTokenRatio,
		verify: 1 + opt.DraftSteps}
	w.meanAccepted = drafts.Mean(opt.DraftSteps)
	w.free = w.capacity
	if opt.RadixCache {
		w.tree = newRadixTree(opt.PageSize)
	}
	return w, nil
}

// own is the SGLang request r stands for.
func own(r *engine.Request) *Request { return r.Impl().(*Request) }

// renew starts r's life on this worker: its state as new, its buffers kept,
// its content key built from the shared part.
func (w *Worker) renew(r *Request) {
	if r.where != onNone {
		panic("sglang: a request still on a worker was reused")
	}
	key := r.key[:0]
	*r = Request{Request: r.Request, key: key}
	w.serials++
	r.serial = w.serials
	r.key = w.contentKey(r, key)
}

// privateSalt keeps a request's own content keys (its serial on the worker,
// salted) apart from the prefix hashes, which are well-mixed 64-bit values.
const privateSalt = 0x3c6ef372fe94f82b

// contentKey is r's content as pieces (radix.go): one per prefix hash block
// of HashBlockTokens, then the known partial block (PartialTokens), then its
// own content up to Prompt + Output tokens.
func (w *Worker) contentKey(r *Request, dst []piece) []piece {
	g := w.cfg.HashBlock()
	n := len(r.Hashes)
	full := n
	if r.PartialTokens > 0 {
		full--
	}
	pos := 0
	for j := 0; j < full; j++ {
		dst = append(dst, piece{key: r.Hashes[j], n: int32(g)})
		pos += g
	}
	if r.PartialTokens > 0 {
		dst = append(dst, piece{key: r.Hashes[full], n: int32(r.PartialTokens)})
		pos += r.PartialTokens
	}
	if total := r.Prompt + r.Output; total > pos {
		dst = append(dst, piece{key: r.serial ^ privateSalt, n: int32(total - pos)})
	}
	return dst
}

// pages is tokens rounded up to whole pages.
func (w *Worker) pages(tokens int) int {
	p := w.opt.PageSize
	return (tokens + p - 1) / p * p
}

// CheckFits returns why a request can never run here, or "": its prompt
// must be shorter than max_req_input_len (scheduler.py
// validate_input_length), prompt + output at most max_req_len (SGLang would
// cut the output there; the simulation refuses it instead), and prompt +
// output − 1 tokens (with EAGLE, and its last decode's drafts) must fit the
// token pool.
func (w *Worker) CheckFits(prompt, output int) string {
	return w.checkFits(prompt, output, max(output-1, 0)+w.verify-1) // EAGLE: its last decode's drafts too
}

// CheckPrefill is CheckFits for a P/D prefill server (it holds the prompt's
// KV only).
func (w *Worker) CheckPrefill(prompt, output int) string { return w.checkFits(prompt, output, 0) }

func (w *Worker) checkFits(prompt, output, kvOutput int) string {
	switch {
	case prompt >= w.opt.MaxReqInputLen:
		return fmt.Sprintf("prompt of %d tokens: SGLang refuses prompts of max_req_input_len (%d) tokens or more", prompt, w.opt.MaxReqInputLen)
	case output > w.opt.MaxReqLen-prompt:
		return fmt.Sprintf("prompt (%d) + output (%d) tokens exceed SGLang's max_req_len (%d), where it would cut the output", prompt, output, w.opt.MaxReqLen)
	case w.pages(prompt+kvOutput) > w.capacity:
		return fmt.Sprintf("needs %d KV tokens, more than the whole token pool (%d)", prompt+kvOutput, w.capacity)
	}
	return ""
}

// CheckHandoff returns why this P/D decode server can never hold a handed-off
// request, or "".
func (w *Worker) CheckHandoff(prompt, output int) string {
	if n := w.pages(prompt + output + w.verify - 1); n > w.capacity {
		return fmt.Sprintf("handoff needs %d KV tokens, more than the decode server's whole token pool (%d)", n, w.capacity)
	}
	if n := prompt + reservedDecodeTokens; n > w.capacity {
		return fmt.Sprintf("handoff of a %d-token prompt needs it and the %d tokens SGLang's decode server reserves for its decode (SGLANG_NUM_RESERVED_DECODE_TOKENS), more than its whole token pool (%d)",
			prompt, reservedDecodeTokens, w.capacity)
	}
	return ""
}

// Add queues a request that arrived (scheduler.py _add_request_to_queue).
func (w *Worker) Add(er *engine.Request) {
	r := own(er)
	w.renew(r)
	r.where = onWaiting
	w.waiting = append(w.waiting, r)
}

// HasWork reports whether a request waits or runs (or, under the overlap
// scheduler, a finished one's last decode is still to run).
func (w *Worker) HasWork() bool {
	return len(w.waiting) > 0 || len(w.running) > 0 || w.chunked != nil || len(w.last) > 0 || len(w.arrived) > 0 ||
		len(w.late) > 0
}

// Abort drops r wherever it is and frees its KV.
func (w *Worker) Abort(er *engine.Request) {
	r := own(er)
	switch r.where {
	case onWaiting:
		w.waiting = remove(w.waiting, r)
	case onRunning:
		if w.chunked == r {
			w.chunked = nil
		}
		w.running = removeIf(w.running, r)
		w.last = removeIf(w.last, r)
		// a pass computing it still takes its time; FinishPass skips it
	case onHeld:
	case onAwaitingBlocks:
		w.awaiting = remove(w.awaiting, r)
		r.where = onNone
		return
	case onReserved:
		w.inTransfer--
	case onArrived:
		w.arrived = remove(w.arrived, r)
	default:
		return
	}
	w.dropKV(r)
	r.where = onNone
}

// dropKV frees r's own tokens and unlocks its prefix.
func (w *Worker) dropKV(r *Request) {
	w.release(r.own)
	r.own = 0
	w.unlockPrefix(r)
}

func (w *Worker) unlockPrefix(r *Request) {
	if r.last != nil {
		w.kv.Released += int64(w.tree.unlock(r.last))
		r.last = nil
	}
	r.prefix = 0
}

// release gives n tokens back to the free pool.
func (w *Worker) release(n int) {
	w.free += n
	w.kv.Released += int64(n)
}

// alloc takes n tokens from the pool, evicting from the radix tree first when
// the free tokens fall short (ScheduleBatch.alloc_token_slots →
// _evict_tree_cache_if_needed: evict(n)). It reports false when even then
// they are not there.
func (w *Worker) alloc(n int) bool {
	if n <= 0 {
		return true
	}
	if w.free < n && w.tree != nil {
		w.evict(n)
	}
	if w.free < n {
		return false
	}
	w.free -= n
	w.kv.Allocated += int64(n)
	return true
}

// evict frees tokens of the radix tree's unlocked leaves (LRU).
func (w *Worker) evict(n int) {
	freed := w.tree.evict(n)
	w.free += freed
	w.kv.Evicted += int64(freed)
}

// available is free tokens plus the tree's evictable ones.
func (w *Worker) available() int {
	if w.tree == nil {
		return w.free
	}
	return w.free + w.tree.evictable
}

// remove is rs without r, which it holds (the freed slot cleared).
func remove(rs []*Request, r *Request) []*Request {
	i := slices.Index(rs, r)
	if i < 0 {
		panic("sglang: request not in its queue")
	}
	return slices.Delete(rs, i, i+1)
}

// removeIf is rs without r (rs unchanged when r is not in it).
func removeIf(rs []*Request, r *Request) []*Request {
	if i := slices.Index(rs, r); i >= 0 {
		return slices.Delete(rs, i, i+1)
	}
	return rs
}

// Outstanding is the requests on the worker; Waiting those not admitted
// (P/D handoffs included); Running the admitted ones.
func (w *Worker) Outstanding() int { return w.Waiting() + w.Running() }

func (w *Worker) Waiting() int {
	return len(w.waiting) + len(w.awaiting) + w.inTransfer + len(w.arrived)
}

func (w *Worker) Running() int {
	n := len(w.running) + len(w.last)
	if w.chunked != nil {
		n++
	}
	return n
}

// PassStats describes the running pass.
func (w *Worker) PassStats() engine.PassStats {
	ps := engine.PassStats{PrefillTokens: w.batch.PrefillTokens(), PrefillRequests: len(w.batch.Prefill),
		DecodeRequests: w.batch.Decodes, Running: w.Running(), Waiting: len(w.waiting) + len(w.arrived)}
	ps.KVBlocksUsed = (w.capacity - w.available()) / w.cfg.BlockSize
	if w.tree != nil {
		ps.KVBlocksCached = w.tree.evictable / w.cfg.BlockSize
	}
	return ps
}

// Counters returns the worker's totals, KV in pages (engine.Config.BlockSize).
func (w *Worker) Counters() engine.Counters {
	bs := int64(w.cfg.BlockSize)
	c := engine.Counters{KV: engine.KVStats{Allocated: w.kv.Allocated / bs, Reused: w.kv.Reused / bs,
		Released: w.kv.Released / bs, Evicted: w.kv.Evicted / bs},
		KVFree: w.available() / w.cfg.BlockSize, PrefixCache: w.prefix,
		BusyNs: w.busyNs, Passes: w.passes, RecomputedTokens: w.recomputed}
	if w.tree != nil {
		c.KVCached = w.tree.evictable / w.cfg.BlockSize
	}
	return c
}

// The cruise calls: an SGLang worker handles every request at every pass
// (no steady set), so no pass is steady-only.
func (w *Worker) OnlySteady() bool                      { return false }
func (w *Worker) LandSteady() (int, int)                { panic("sglang: no steady passes") }
func (w *Worker) CruiseSteady() (int, int, int64, bool) { panic("sglang: no steady passes") }
func (w *Worker) SteadyUnmeasured() int                 { return 0 }
func (w *Worker) Syncs() []engine.Sync                  { return nil }
func (w *Worker) Batch() *perf.Batch                    { return &w.batch }

// WatchKV does nothing: the radix tree sends no KV events (SGLang's,
// radix_cache.py's BlockStored/BlockRemoved per page under
// --kv-events-config, are not modelled), and the configuration refuses
// placement kv_router with engine.backend sglang.
func (w *Worker) WatchKV() {}

// KVEvents returns none (WatchKV).
func (w *Worker) KVEvents() []engine.KVEvent { return nil }

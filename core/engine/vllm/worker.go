package vllm

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Request is the vLLM worker's request: the shared part the replay sees
// (engine.Request, bound to it by Reset) and the worker's own state.
type Request struct {
	engine.Request

	computed  int  // tokens whose KV is in the cache
	scheduled int  // tokens computed in the current pass
	admitted  bool // first admission done (CachedTokens set)
	where     int8 // onNone, onWaiting, onKVArrived, onRunning, onHeld, onReserved, onAwaitingBlocks
	// transferred (P/D decode side): the prompt's KV (kvReady tokens) is in
	// reserved blocks, found in the worker's prefix cache or brought by the
	// transfer (Handoff).
	transferred bool
	kvReady     int
	registered  int     // leading full blocks already offered to the prefix cache
	blocks      []int32 // KV blocks held, in token order
	// serial names the request on its worker (1, 2, …; 0 until it reaches
	// one): the owner of its private blocks (kvBlock).
	serial uint32
	// saved: the blocks it held when last preempted (by position), where a
	// re-admission looks for its private content (kvManager.lookupSaved).
	saved []int32
	lost  int  // tokens in the KV cache when it was last preempted
	named bool // some of its blocks carry its private content (nameOwn)
	// stated: it holds Config.StateBlocks blocks for its recurrent state
	// (Worker.states), from its admission to its release
	stated bool

	// seq orders the running set: admission order on the worker.
	seq        uint64
	prev, next *Request // running list links
	// Steady decoding (steady.go): computed and Generated are as of the
	// start of pass sPass; bucket and bpos place it in its phase bucket;
	// stamp changes whenever it leaves the steady set (stale finish events).
	steady       bool
	sPass        int64
	bucket, bpos int32
	stamp        uint32
	// winFull: bit i set when, as a steady request, its KV length reached
	// DecodeWindows[i] (each pass then reads W keys: windowAgg.full)
	winFull uint8
	// Speculative decoding (Options): drafts is the drafts proposed for its
	// next step, accepted the fraction of a draft it has accepted so far
	// (engine.Drafts.Accept).
	drafts   int
	accepted float64
}

// tokens is the number of tokens the request has: its prompt and every output
// token produced so far (the last one is not yet in the KV cache).
func (r *Request) tokens() int { return r.Prompt + r.Generated }

// specScheduled is the drafts r verifies in the pass it is scheduled in
// (speculative decoding): the tokens scheduled past its last one.
func (r *Request) specScheduled() int { return max(0, r.computed+r.scheduled-r.tokens()) }

// Worker is one serving engine instance (TP GPUs acting as one).
type Worker struct {
	cfg  Config
	perf perf.Model
	kv   *kvManager
	// spec is the drafts of each step with speculative decoding (Options;
	// 0: none), drafts their acceptance.
	spec   int
	drafts engine.Drafts
	// reserveFull is Options.ReserveFullISL.
	reserveFull bool

	waiting deque
	// The P/D decode side's handoffs, in their order of life: awaitingBlocks
	// holds those waiting for their KV blocks (FIFO); inTransfer counts those
	// whose blocks are reserved while their KV moves; kvArrived holds those
	// whose KV arrived, admitted before the waiting queue since they need no
	// new blocks and hold blocks a waiting recompute may be starved of.
	awaitingBlocks deque
	inTransfer     int
	kvArrived      deque
	reservedNow    []*engine.Request // ReserveWaiting's result, reused
	// states: the blocks the running requests hold for their recurrent
	// state (Config.StateBlocks each). They hold no content, so they are
	// interchangeable: a request releasing its state gives back the last
	// StateBlocks of them, whichever ids it took (the queue keeps the order
	// of the blocks with content, the only order observable: kvManager).
	states []int32

	// The running set, in admission order (seq): a list, so that a request
	// leaves it in O(1). Requests in it are either steady (w.steady, handled
	// in aggregate) or explicit (active, in seq order: handled one by one).
	head, tail *Request
	nRunning   int
	seqs       uint64
	active     []*Request
	steady     steadySet
	syncs      []Sync
	scratch    []*Request // requests due this pass
	merged     []*Request // spare buffer of mergeBySeq

	busy bool
	// chunked: a decode window is chunked local attention (no steady decoding)
	chunked bool
	batch   perf.Batch
	outs    []Out
	// steadyOut is the number of steady requests of the running pass (each
	// produces one token at its end, reported as a count), steadyUnmeasured
	// how many of them are Unmeasured.
	steadyOut, steadyUnmeasured int

	serials uint32 // last serial handed out
	prefix  PrefixCacheStats

	// BusyNs is the total time the worker spent in passes.
	BusyNs int64
	// RecomputedTokens counts tokens whose KV a preempted request had computed
	// and computed again when it was admitted again (not found in the cache).
	RecomputedTokens int64
	// Passes counts the passes run.
	Passes int64
}

// NewWorker returns an idle worker with an empty KV cache.
func NewWorker(cfg Config, pm perf.Model) (*Worker, error) {
	switch {
	case cfg.MaxNumSeqs < 1, cfg.MaxNumBatchedTokens < 1, cfg.BlockSize < 1, cfg.NumBlocks < 1, cfg.MaxModelLen < 1:
		return nil, fmt.Errorf("engine: invalid config %+v", cfg)
	case pm == nil:
		return nil, fmt.Errorf("engine: no perf model")
	case len(cfg.DecodeWindows) > maxWindows:
		return nil, fmt.Errorf("engine: %d decode windows, at most %d", len(cfg.DecodeWindows), maxWindows)
	}
	for _, w := range cfg.DecodeWindows {
		if w == 0 {
			return nil, fmt.Errorf("engine: decode window of 0 tokens (want ≥ 1 tokens, or −C for chunks of C)")
		}
	}
	var opt Options
	if cfg.Options != nil {
		o, ok := cfg.Options.(Options)
		if !ok {
			return nil, fmt.Errorf("engine: vLLM options of type %T", cfg.Options)
		}
		opt = o
	}
	drafts, err := engine.NewDrafts(opt.SpecTokens, opt.Acceptance)
	if err != nil {
		return nil, err
	}
	if opt.SpecTokens > 0 {
		// a decode takes 1 + drafts tokens and yields a varying number: every
		// running request is handled one by one (no steady set, steady.go)
		cfg.PerTokenDecode = true
	}
	return &Worker{cfg: cfg, perf: pm, kv: newKVManager(cfg.NumBlocks, cfg.PrefixCaching), spec: opt.SpecTokens, drafts: drafts,
		reserveFull: opt.ReserveFullISL,
		steady:      newSteadySet(cfg.BlockSize, cfg.DecodeWindows), chunked: perf.ChunkedWindows(cfg.DecodeWindows)}, nil
}

// Options are vLLM's settings beyond engine.Config (Config.Options; nil:
// none of them).
type Options struct {
	// SpecTokens is speculative_config.num_speculative_tokens (0: no
	// speculative decoding), Acceptance the probability that draft i + 1 is
	// accepted when every draft before it was (at most SpecTokens rates).
	SpecTokens int
	Acceptance []float64
	// ReserveFullISL is scheduler_reserve_full_isl: a waiting request is
	// admitted only if the free blocks hold its whole sequence
	// (config.VersionDefaults.SchedulerReserveFullISL).
	ReserveFullISL bool
}

// kvTokens is the tokens whose KV slots r needs for a step computing n of
// its tokens: with speculative decoding, w.spec more (the drafts its next
// step verifies), at most max_model_len (KVCacheManager.allocate_slots'
// num_lookahead_tokens, vllm/v1/core/kv_cache_manager.py).
func (w *Worker) kvTokens(r *Request, n int) int {
	if w.spec == 0 {
		return r.computed + n
	}
	return min(r.computed+n+w.spec, w.cfg.MaxModelLen)
}

// kvOutput is the output tokens a request of output tokens writes KV for at
// most after its prompt of prompt tokens: every output token but the last
// (sampled, never written), with speculative decoding its last step's drafts
// and lookahead slots too (kvTokens), within max_model_len.
func (w *Worker) kvOutput(prompt, output int) int {
	if w.spec == 0 {
		return max(output-1, 0)
	}
	return min(max(output-1, 0)+2*w.spec, w.cfg.MaxModelLen-prompt)
}

// blocksFor is the number of KV blocks that hold n tokens.
func (w *Worker) blocksFor(n int) int { return (n + w.cfg.BlockSize - 1) / w.cfg.BlockSize }

// CheckFits returns why the request can never run on this worker, or "" if it can:
// prompt + output longer than max_model_len, or more KV blocks than the whole cache.
// Any prompt and output ≥ 0 are checked without overflow (a trace may give
// lengths up to 2^63 − 1), so every request admitted has prompt + output ≤
// max_model_len and all its token and block counts fit an int.
func (w *Worker) CheckFits(prompt, output int) string {
	// The last output token is sampled, never written to the cache.
	return w.checkFits(prompt, output, w.kvOutput(prompt, output))
}

// CheckPrefill is CheckFits for a P/D prefill worker, which holds the KV of the
// prompt only (the decode worker holds the output).
func (w *Worker) CheckPrefill(prompt, output int) string { return w.checkFits(prompt, output, 0) }

// checkFits: prompt + output must fit max_model_len, and prompt + kvOutput
// tokens the cache. The sums are formed only once the first check has bounded
// them by max_model_len.
func (w *Worker) checkFits(prompt, output, kvOutput int) string {
	if prompt > w.cfg.MaxModelLen || output > w.cfg.MaxModelLen-prompt {
		return fmt.Sprintf("prompt (%d) + output (%d) tokens exceed max_model_len (%d)", prompt, output, w.cfg.MaxModelLen)
	}
	need := w.blocksFor(prompt+kvOutput) + w.cfg.StateBlocks
	if need > w.cfg.NumBlocks {
		return fmt.Sprintf("needs %d KV blocks, more than the whole cache (%d blocks of %d tokens)", need, w.cfg.NumBlocks, w.cfg.BlockSize)
	}
	return ""
}

// Add queues a new request that arrived at the worker (checked with
// CheckFits). A P/D handoff comes through Handoff and KVArrived instead.
func (w *Worker) Add(er *engine.Request) {
	r := own(er)
	r.renew() // a request on the worker (a handoff: use KVArrived) panics
	w.name(r)
	r.where = onWaiting
	w.waiting.PushBack(r)
}

// name gives r its serial on this worker, once.
func (w *Worker) name(r *Request) {
	if r.serial == 0 {
		w.serials++
		r.serial = w.serials
	}
}

// Where a request is on its worker.
const (
	onNone           int8 = iota // not on the worker (finished, or never added)
	onWaiting                    // in the waiting queue
	onKVArrived                  // a P/D handoff whose KV arrived, not yet admitted
	onRunning                    // admitted: in the running set
	onHeld                       // finished, KV held (HoldKV)
	onReserved                   // a P/D handoff with reserved blocks, its KV in transfer
	onAwaitingBlocks             // a P/D handoff waiting for its KV blocks
)

// Abort removes a request from the worker (a client canceled it) and releases
// its KV blocks at once, wherever it is: queued, running (a pass computing it
// still takes its time but emits nothing for it), or holding KV. After Abort
// the worker keeps no reference to r, so the caller may reuse it. It is a
// no-op for a request that is not on the worker.
func (w *Worker) Abort(er *engine.Request) {
	r := own(er)
	switch r.where {
	case onWaiting:
		w.waiting.remove(r)
	case onKVArrived:
		w.kvArrived.remove(r)
	case onRunning:
		if r.steady {
			if w.busy { // the running pass counted it: it produces nothing now
				w.steadyOut--
				if r.Unmeasured {
					w.steadyUnmeasured--
				}
			}
			w.leaveSteady(r, w.Passes+1, false)
		} else {
			w.active = removeRequest(w.active, r)
		}
		w.unlink(r)
		r.scheduled = 0
	case onHeld:
	case onReserved:
		w.inTransfer--
	case onAwaitingBlocks: // no blocks yet
		w.awaitingBlocks.remove(r)
		r.where = onNone
		return
	default:
		return
	}
	w.forgetOwn(r)
	w.releaseBlocks(r)
	r.blocks, r.saved = r.blocks[:0], r.saved[:0]
	r.where = onNone
}

func removeRequest(rs []*Request, r *Request) []*Request {
	for i, x := range rs {
		if x == r {
			copy(rs[i:], rs[i+1:])
			rs[len(rs)-1] = nil
			return rs[:len(rs)-1]
		}
	}
	panic("engine: request not in the explicit running set")
}

// link appends r to the running list (it is the newest: seq order).
func (w *Worker) link(r *Request) {
	w.seqs++
	r.seq, r.prev, r.next = w.seqs, w.tail, nil
	if w.tail == nil {
		w.head = r
	} else {
		w.tail.next = r
	}
	w.tail = r
	w.nRunning++
}

// unlink removes r from the running list.
func (w *Worker) unlink(r *Request) {
	if r.prev == nil {
		w.head = r.next
	} else {
		r.prev.next = r.next
	}
	if r.next == nil {
		w.tail = r.prev
	} else {
		r.next.prev = r.prev
	}
	r.prev, r.next = nil, nil
	w.nRunning--
}

// Busy reports whether a pass is running.
func (w *Worker) Busy() bool { return w.busy }

// HasWork reports whether a request is waiting or running.
func (w *Worker) HasWork() bool {
	return w.nRunning > 0 || w.waiting.Len() > 0 || w.kvArrived.Len() > 0
}

// Outstanding is the number of requests on the worker: waiting or running,
// and on a P/D decode worker every handoff placed on it (waiting for blocks,
// in transfer, or arrived). It is the load least_outstanding placement
// compares.
func (w *Worker) Outstanding() int {
	return w.nRunning + w.waiting.Len() + w.kvArrived.Len() + w.inTransfer + w.awaitingBlocks.Len()
}

// Waiting is the number of requests placed on the worker and not yet
// admitted: new, preempted, and P/D handoffs (waiting for blocks, in
// transfer, or arrived). Outstanding is Waiting + Running.
func (w *Worker) Waiting() int {
	return w.waiting.Len() + w.kvArrived.Len() + w.inTransfer + w.awaitingBlocks.Len()
}

// Running is the number of admitted requests.
func (w *Worker) Running() int { return w.nRunning }

// KVStats returns the block manager's counters.
func (w *Worker) KVStats() KVStats { return w.kv.stats }

// PrefixCacheStats returns the prefix cache's lookups at admission so far.
func (w *Worker) PrefixCacheStats() PrefixCacheStats { return w.prefix }

// KVFree is the number of unreferenced blocks (free or cached).
func (w *Worker) KVFree() int { return w.kv.available() }

// KVCached is the number of unreferenced blocks still holding cached content.
func (w *Worker) KVCached() int { return w.kv.idleHit }

// StartPass forms a pass at its start and returns its duration in ns (≥ 1).
// ok is false when there is nothing to run. The worker must be idle.
// Requests that stopped decoding implicitly are reported by Syncs.
func (w *Worker) StartPass() (durNs int64, ok bool) {
	if !w.PlanPass() {
		return 0, false
	}
	d := w.perf.PassTime(&w.batch)
	w.BeginPass(d)
	return d, true
}

// PlanPass forms the next pass (the scheduler's decisions, KV blocks taken)
// without pricing it, for a caller that prices several workers' passes
// together (the data-parallel ranks of a mixture-of-experts model run in
// lockstep). It reports false when nothing can run; the pass's batch is
// then empty. The worker must be idle; BeginPass starts the pass. Requests
// that stopped decoding implicitly are reported by Syncs, as for StartPass.
func (w *Worker) PlanPass() bool {
	if w.busy {
		panic("engine: PlanPass on a busy worker")
	}
	w.syncs = w.syncs[:0]
	return w.schedule()
}

// Batch is the pass formed by the last PlanPass (empty when it planned
// nothing); it stays valid until the next PlanPass.
func (w *Worker) Batch() *perf.Batch { return &w.batch }

// BeginPass starts the planned pass, lasting durNs ≥ 1 ns. A worker that
// planned nothing still runs it (a data-parallel rank's dummy pass, which
// vLLM runs so the MoE collectives of the busy ranks can proceed): it is
// busy for durNs and its FinishPass emits nothing.
func (w *Worker) BeginPass(durNs int64) {
	if w.busy {
		panic("engine: BeginPass on a busy worker")
	}
	if durNs < 1 {
		panic(fmt.Sprintf("engine: perf model %s returned a pass time of %d ns", w.perf.Name(), durNs))
	}
	w.busy = true
	w.BusyNs += durNs
	w.Passes++
	if w.steady.next--; w.steady.next < 0 { // the next pass's bucket (steady.go)
		w.steady.next += w.cfg.BlockSize
	}
	w.steadyOut, w.steadyUnmeasured = w.steady.n, w.steady.unmeasured
}

// OnlySteady reports whether the running pass holds steady requests only
// (steady.go): its FinishPass returns no outputs, only the steady count.
func (w *Worker) OnlySteady() bool { return w.busy && len(w.active) == 0 }

// SteadyUnmeasured is how many of the steady requests counted by the last
// FinishPass (or of the running pass) are Unmeasured.
func (w *Worker) SteadyUnmeasured() int { return w.steadyUnmeasured }

// Syncs returns the requests that the last StartPass (or PlanPass) took out
// of the steady set, with the tokens each produced implicitly (steady.go): in
// the passes up to the previous one, the last of them in the previous pass.
// Valid until the next StartPass or PlanPass.
func (w *Worker) Syncs() []Sync { return w.syncs }

// FinishPass applies the running pass at its end: KV written, tokens sampled,
// finished requests released. It returns the pass's explicit outputs in
// running order (the slice is reused by the next call) and steady, the number
// of steady requests that each produced one more token (steady.go): every
// request of the pass produced a token that is either one OutToken here or
// counted in steady.
func (w *Worker) FinishPass() (outs []Out, steady int) {
	if !w.busy {
		panic("engine: FinishPass on an idle worker")
	}
	w.busy = false
	w.outs = w.outs[:0]
	next := w.Passes + 1 // the pass a request made steady now starts in
	kept := w.active[:0]
	for _, r := range w.active {
		if r.scheduled == 0 {
			kept = append(kept, r)
			continue
		}
		s := r.specScheduled() // the drafts verified
		r.computed += r.scheduled
		r.scheduled = 0
		if r.computed < r.tokens() {
			kept = append(kept, r) // a partial prefill chunk
			continue
		}
		k := 1
		if s > 0 {
			// The drafts accepted; the rejected ones' KV slots are written again
			// by the next step (Scheduler.update_from_output:
			// num_computed_tokens -= num_rejected).
			a := min(w.drafts.Accept(&r.accepted, s), s)
			r.computed -= s - a
			k += a
		}
		for ; k > 0 && r.Generated < r.Output; k-- {
			r.Generated++
			w.outs = append(w.outs, Out{Req: &r.Request, Kind: OutToken})
		}
		if r.Generated >= r.Output {
			w.forgetOwn(r)
			w.unlink(r)
			r.where = onNone
			if r.HoldKV {
				r.where = onHeld
			} else {
				w.releaseBlocks(r)
				r.blocks = r.blocks[:0]
			}
			w.outs = append(w.outs, Out{Req: &r.Request, Kind: OutFinished})
			continue
		}
		r.drafts = w.spec // the draft's proposals for its next step (vllm/v1/spec_decode/eagle.py, propose)
		if w.canSteady(r) {
			w.enterSteady(r, next)
			continue
		}
		kept = append(kept, r)
	}
	clear(w.active[len(kept):])
	w.active = kept
	return w.outs, w.steadyOut
}

// registerFull offers each full block of the request's first tokens that
// its Hashes name (shared content) to the prefix cache. vLLM v1 caches a
// block when the step that fills it is scheduled, every full block, prompt
// and generated (KVCacheManager.allocate_slots → cache_blocks, up to
// num_computed_tokens + num_new_tokens), so a request admitted later in the
// same step already finds it; the scheduler calls this as it adds a request
// to the pass (addToBatch), with tokens = computed + the tokens scheduled.
// The blocks beyond Hashes hold content only the request itself can name (a
// prompt without content ids, generated tokens), and the only time anyone
// can look for it is when the request is admitted again after a preemption,
// so it is named then (nameOwn), at no cost to requests never preempted.
// Work here is done only when a block has filled, once per BlockSize tokens.
func (w *Worker) registerFull(r *Request, tokens int) {
	if w.kv.cache == nil {
		return
	}
	full := min(tokens/w.cfg.BlockSize, len(r.Hashes), len(r.blocks))
	if full > r.registered {
		j := r.registered
		r.prefixKeys()
		w.kv.register(r.blocks[j:full], r.Hashes, r.Groups, j)
		r.registered = full
		if w.cfg.MambaAlign && tokens%w.cfg.BlockSize == 0 && tokens/w.cfg.BlockSize <= full {
			// the pass ends on the boundary of a block it fills: the
			// recurrent state there is cached (align mode)
			w.kv.cacheState(r.Hashes, r.Groups, tokens/w.cfg.BlockSize-1)
		}
	}
}

// nameOwn names the request's full blocks beyond its Hashes as its private
// content (before a preemption releases them), so that its re-admission can
// find them (kvManager.lookupSaved).
func (w *Worker) nameOwn(r *Request) {
	full := min(r.computed/w.cfg.BlockSize, len(r.blocks))
	for j := len(r.Hashes); j < full; j++ {
		w.kv.registerPrivate(r.blocks[j], r.serial, j)
	}
	r.named = full > len(r.Hashes)
}

// forgetOwn drops the private content of the blocks a request named (held, or
// saved while it waits after a preemption) when nobody can look for it any
// more (it finished or left): they keep their place in the queue, as
// content-free blocks.
func (w *Worker) forgetOwn(r *Request) {
	if !r.named {
		return
	}
	for _, ids := range [2][]int32{r.blocks, r.saved} {
		for j := len(r.Hashes); j < len(ids); j++ {
			w.kv.forgetPrivate(ids[j], r.serial, j)
		}
	}
	r.named = false
}

// takeState takes r's state blocks (Config.StateBlocks; the caller has
// checked that they are free and that r holds none). vLLM allocates every
// KV cache group's blocks in group order, a hybrid model's state groups
// (its first layers) before the attention's.
func (w *Worker) takeState(r *Request) {
	w.states, r.stated = w.kv.takeN(w.cfg.StateBlocks, w.states), true
}

// releaseBlocks releases r's blocks: through the fast path when none of them
// is hashed or shared (no prefix-cache hit or registered block, registered ==
// 0, and no named private content), each then held by r alone.
func (w *Worker) releaseBlocks(r *Request) {
	if r.stated { // before its KV, as vLLM frees its groups in order (the state groups first)
		n := len(w.states) - w.cfg.StateBlocks
		w.kv.releaseOwn(w.states[n:])
		w.states, r.stated = w.states[:n], false
	}
	if r.registered == 0 && !r.named {
		w.kv.releaseOwn(r.blocks)
		return
	}
	w.kv.release(r.blocks, r.registered)
}

// ReleaseHeld releases the KV blocks of a finished HoldKV request.
func (w *Worker) ReleaseHeld(er *engine.Request) {
	r := own(er)
	w.releaseBlocks(r)
	r.blocks = r.blocks[:0]
	r.where = onNone
}

// Handoff (P/D decode side) takes a request whose prompt a prefill worker
// computed: its Prompt, Output and Hashes are the client's request. As vLLM's
// NixlConnector runs on the decode side, the worker first looks its own
// prefix cache up (KVCacheManager.get_computed_blocks, at most
// ⌊(Prompt − 1) / BlockSize⌋ blocks), then reserves the prompt's blocks
// beyond those it found: ⌈Prompt / BlockSize⌉ in all, exactly the blocks the
// prefill worker exports (vLLM PR 50558: the decode side allocates no more
// blocks than the prefiller, num_local ≤ num_remote), and the transfer brings
// only the tokens it lacks, Prompt − the hit (NixlConnectorScheduler.
// get_num_new_matched_tokens; update_state_after_alloc pulls the unhashed
// blocks). The blocks are reserved now when they are free and no earlier
// handoff waits for blocks (FIFO), and Handoff reports true: its transfer
// (of r.PulledTokens) may start. Otherwise it waits for blocks, and
// ReserveWaiting returns it once they are reserved. Once its KV has arrived,
// KVArrived queues it; its first pass computes the prompt's last token again
// (vLLM's Scheduler._update_waiting_for_remote_kv takes one token off a
// fully loaded prompt so that the pass can sample), priced as a decode at KV
// length Prompt − 1, and samples output token 1 (docs/design.md, "P/D
// disaggregation").
func (w *Worker) Handoff(er *engine.Request) bool {
	r := own(er)
	r.renew()
	r.transferred, r.kvReady = true, r.Prompt
	if w.awaitingBlocks.Len() == 0 && w.reserve(r) {
		return true
	}
	r.where = onAwaitingBlocks
	w.awaitingBlocks.PushBack(r)
	return false
}

// reserve takes r's KV blocks if they are free now: the prompt's blocks its
// prefix cache holds (touched, as an admission touches them) and new ones for
// the rest of the prompt.
func (w *Worker) reserve(r *Request) bool {
	r.prefixKeys()
	hits, idle := w.kv.lookup(r.Hashes, r.Groups, (r.Prompt-1)/w.cfg.BlockSize)
	need := w.blocksFor(r.Prompt) - hits
	if need+w.cfg.StateBlocks > w.kv.available()-idle {
		return false
	}
	w.name(r)
	hit := hits * w.cfg.BlockSize
	w.recordLookup(r, hit)
	r.blocks = w.kv.touch(hits, r.blocks[:0])
	if w.cfg.StateBlocks > 0 && !r.stated { // a flag test on the admission path, the call for hybrid models only
		w.takeState(r)
	}
	r.blocks = w.kv.takeN(need, r.blocks)
	r.registered, r.CachedTokens, r.PulledTokens = hits, hit, r.Prompt-hit
	r.admitted, r.where = true, onReserved
	w.inTransfer++
	return true
}

// ReserveWaiting reserves blocks for the handoffs waiting for them, in order,
// while blocks are free, and returns those reserved: their transfers may
// start. The slice is reused by the next call.
func (w *Worker) ReserveWaiting() []*engine.Request {
	w.reservedNow = w.reservedNow[:0]
	for w.awaitingBlocks.Len() > 0 && w.reserve(w.awaitingBlocks.Front()) {
		w.reservedNow = append(w.reservedNow, &w.awaitingBlocks.PopFront().Request)
	}
	return w.reservedNow
}

// KVArrived queues a reserved handoff whose KV has arrived.
func (w *Worker) KVArrived(er *engine.Request) {
	r := own(er)
	if r.where != onReserved {
		panic("engine: KVArrived of a request without reserved blocks")
	}
	w.inTransfer--
	r.where = onKVArrived
	w.kvArrived.PushBack(r)
}

// CheckHandoff returns why this (decode) worker can never hold a handed-off
// request of prompt tokens that will produce output tokens, or "": its cache
// must hold prompt + output − 1 tokens (the transferred prompt, then the KV
// of every output token but the last, which is sampled and never written).
func (w *Worker) CheckHandoff(prompt, output int) string {
	if prompt > w.cfg.MaxModelLen {
		prompt = w.cfg.MaxModelLen // CheckFits refuses it; kvOutput wants prompt ≤ max_model_len
	}
	need := w.blocksFor(prompt+w.kvOutput(prompt, output)) + w.cfg.StateBlocks
	if need > w.cfg.NumBlocks {
		return fmt.Sprintf("handoff needs %d KV blocks, more than the decode worker's whole cache (%d blocks of %d tokens)", need, w.cfg.NumBlocks, w.cfg.BlockSize)
	}
	return ""
}

// renew starts r's life on a worker (Add, Handoff): the worker's state of
// it as new, the shared part (engine.Request.Reset) kept, and the capacity of
// its block lists kept: a replay reuses Request values for its requests in
// flight, so that admitting a long prompt does not regrow a fresh block list
// every time.
func (r *Request) renew() {
	if r.where != onNone {
		panic("engine: a request still on a worker was reused")
	}
	blocks, saved, stamp := r.blocks[:0], r.saved[:0], r.stamp+1
	*r = Request{Request: r.Request, blocks: blocks, saved: saved, stamp: stamp}
}

// prefixKeys makes r.Groups the prefix group key of each block of Hashes:
// without Groups every block is a group of its own.
func (r *Request) prefixKeys() {
	if len(r.Groups) != len(r.Hashes) {
		r.Groups = r.Hashes
	}
}

// PassStats returns the stats of the running pass. Valid between StartPass
// and FinishPass; it does not allocate.
func (w *Worker) PassStats() PassStats {
	return PassStats{
		PrefillTokens: w.batch.PrefillTokens(), PrefillRequests: len(w.batch.Prefill), DecodeRequests: w.batch.Decodes,
		Running: w.nRunning, Waiting: w.waiting.Len() + w.kvArrived.Len(),
		KVBlocksUsed: w.cfg.NumBlocks - w.kv.available(), KVBlocksCached: w.kv.lruLen,
	}
}

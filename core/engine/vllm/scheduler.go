package vllm

import (
	"cmp"
	"slices"

	"github.com/aisimulate/aisimulate/core/perf"
)

// schedule forms the next pass into w.batch (vLLM v1 Scheduler.schedule, without
// speculative decoding or LoRA). It returns false when no request can run.
//
//  1. Running requests, oldest first: each takes its next tokens (1 for a decode,
//     the rest of its prompt up to the remaining token budget for a prefill). If
//     its KV blocks cannot be had, the newest running request is preempted
//     (blocks released, back to the head of the waiting queue) until they can;
//     a request that has to preempt itself is not scheduled.
//  2. If nothing was preempted, P/D handoffs whose KV has arrived are admitted
//     (FIFO; their blocks are already reserved), then waiting requests first come first
//     served while a sequence slot and token budget remain and their KV blocks
//     fit (counting their prefix-cache hit); admission stops at the first
//     request that does not fit.
//
// Step 1 visits only the explicit running requests when it can (fastRunning):
// steady ones (steady.go) each take one token, and a block in their boundary
// passes, in aggregate. With PerTokenDecode it is always the walk, request by
// request: the reference the aggregate path is checked against.
func (w *Worker) schedule() bool {
	p := w.Passes + 1 // the pass being formed
	budget := w.cfg.MaxNumBatchedTokens
	b := w.resetBatch()
	preempted := false

	if h := w.steady.fin.ev; len(h) > 0 && h[0].pass <= p { // last tokens: explicit
		w.scratch = w.dueFinish(p, w.scratch[:0])
		w.active = w.mergeBySeq(w.active, w.scratch)
	}
	if w.cfg.PerTokenDecode || !w.fastRunning(p, &budget) {
		w.leaveAll(p)
		w.active = w.active[:0]
		for r := w.head; r != nil; r = r.next {
			w.active = append(w.active, r)
		}
		for i := 0; i < len(w.active) && budget > 0; i++ {
			r := w.active[i]
			want := r.tokens() - r.computed
			if r.drafts > 0 { // its token and its drafts, within max_model_len (num_tokens_with_spec)
				want = min(want+r.drafts, w.cfg.MaxModelLen-1-r.computed)
			}
			n := min(want, budget)
			if w.cfg.MambaAlign {
				if n = w.alignChunk(r, r.computed, n); n == 0 {
					continue // no block-aligned chunk fits the budget: vLLM skips the request
				}
			}
			need := w.blocksFor(w.kvTokens(r, n)) - len(r.blocks)
			for need > w.kv.available() {
				victim := w.active[len(w.active)-1]
				w.active = w.active[:len(w.active)-1]
				w.unlink(victim)
				w.preempt(victim)
				preempted = true
				if victim == r {
					break
				}
			}
			if i >= len(w.active) { // r preempted itself
				break
			}
			r.blocks = w.kv.takeN(need, r.blocks)
			w.addToBatch(r, n)
			budget -= n
		}
	}

	// A step that preempted admits nothing (the cache is short), unless the
	// preemptions emptied the pass: vLLM's next step would then admit, and a
	// pass with nothing in it would stall the worker (a P/D decode worker whose
	// cache is all reserved for handoffs that have not started yet).
	if preempted && len(b.Prefill)+b.Decodes == 0 {
		preempted = false
	}

	// P/D: handoffs whose KV arrived into reserved blocks go first (FIFO). As
	// vLLM's Scheduler._update_waiting_for_remote_kv, the prompt's last token
	// is computed again (so that the pass can sample) and the blocks that
	// arrived are cached (by addToBatch, with the pass's token).
	for !preempted && budget > 0 && w.kvArrived.Len() > 0 && w.nRunning < w.cfg.MaxNumSeqs {
		r := w.kvArrived.Front()
		computed := r.kvReady - 1
		n := min(r.tokens()-computed, budget)
		// a handoff has computed tokens: the lookahead slots too (schedule's
		// effective_lookahead_tokens, 0 only for a request computing from 0)
		need := w.blocksFor(min(computed+n+w.spec, w.cfg.MaxModelLen)) - len(r.blocks)
		if need > w.kv.available() {
			break
		}
		w.kvArrived.PopFront()
		r.computed = computed
		w.admit(r, n, need)
		budget -= n
	}

	for !preempted && budget > 0 && w.waiting.Len() > 0 && w.nRunning < w.cfg.MaxNumSeqs {
		r := w.waiting.Front()
		// The last token is always computed so that the pass can sample: a prompt
		// fully in the cache still recomputes its last block.
		r.prefixKeys()
		limit := (r.tokens() - 1) / w.cfg.BlockSize
		hits, idle := w.kv.lookup(r.Hashes, r.Groups, limit)
		if w.cfg.MambaAlign { // the hit ends where a recurrent state is cached
			hits, idle = w.kv.trimToState(hits)
		}
		if hits == len(r.Hashes) && len(r.saved) > 0 {
			// A preempted request: past its shared blocks, its own blocks
			// that were not evicted (all unreferenced).
			own := w.kv.lookupSaved(r.saved, r.serial, hits, limit)
			hits, idle = hits+own, idle+own
		}
		if w.spec > 0 && hits > 0 {
			// speculative decoding (the EAGLE proposer): the hit's last block
			// is computed again, for the hidden states the draft reads
			// (FullAttentionManager.find_longest_cache_hit with use_eagle,
			// vllm/v1/core/single_type_kv_cache_manager.py)
			hits--
			idle = w.kv.idleOf(hits)
		}
		computed := hits * w.cfg.BlockSize
		n := min(r.tokens()-computed, budget)
		if w.cfg.MambaAlign {
			n = w.alignChunk(r, computed, n)
		}
		need := w.blocksFor(computed+n) - hits
		gate := need
		if w.reserveFull {
			// scheduler_reserve_full_isl: the whole sequence's blocks must be
			// free now (KVCacheManager.can_fit_full_sequence), though only
			// this chunk's are taken
			gate = max(need, w.blocksFor(min(r.tokens(), w.cfg.MaxModelLen))-hits)
		}
		if n == 0 || gate+w.cfg.StateBlocks > w.kv.available()-idle {
			break
		}
		w.waiting.PopFront()
		w.recordLookup(r, computed)
		if r.admitted { // KV it had computed before its preemption, computed again
			w.RecomputedTokens += int64(max(r.lost-computed, 0))
		}
		r.blocks = w.kv.touch(hits, r.blocks[:0])
		r.saved = r.saved[:0]
		r.computed, r.registered = computed, hits
		if !r.admitted {
			r.admitted, r.CachedTokens = true, computed
		}
		w.admit(r, n, need)
		budget -= n
	}

	if w.steady.n > 0 {
		w.addSteady(p)
		w.addSteadyWindows(p, b.DecodeWindowSums)
	}
	if w.spec > 0 && len(b.Prefill)+b.Decodes > 0 {
		// the EAGLE proposer's passes after the target's: one per draft
		// (vllm/v1/spec_decode/eagle.py, propose), priced by perf.DraftNs
		b.DraftSteps = w.spec
	}
	return len(b.Prefill)+b.Decodes > 0
}

// resetBatch empties the pass being formed: no prefill, no decode, a zero
// window sum per decode window.
func (w *Worker) resetBatch() *perf.Batch {
	b := &w.batch
	b.Prefill = b.Prefill[:0]
	b.Decodes, b.DecodeKVSum, b.Samplers = 0, 0, 0
	b.SpecTokens, b.DraftSteps = 0, 0
	b.DecodeWindowSums = b.DecodeWindowSums[:0]
	for range w.cfg.DecodeWindows {
		b.DecodeWindowSums = append(b.DecodeWindowSums, 0)
	}
	return b
}

// addSteady adds the steady requests to pass p: one decode each, at KV length
// (computed − sPass) + p. Small enough to inline (a pass of steady requests
// only does little else); the window sums are the caller's
// (addSteadyWindows).
func (w *Worker) addSteady(p int64) {
	b, n := &w.batch, w.steady.n
	b.Decodes += n
	b.DecodeKVSum += w.steady.key + int64(n)*p
	b.Samplers += n
}

// fastRunning forms the running requests' part of pass p without visiting
// the steady ones, when vLLM's oldest-first walk would preempt nobody and
// give every running request all its tokens but perhaps the newest (a
// prompt's chunk, cut by the budget): every request but the newest takes one
// token, the token budget reaches the newest (with at least one token), and
// the blocks all of them need are free. Then neither the walk's order nor which request took which block
// first changes anything (steady.go, takeSteadyBlocks). It returns false,
// changing nothing, when the pass must be formed request by request.
func (w *Worker) fastRunning(p int64, budget *int) bool {
	n := w.nRunning
	if n == 0 {
		return true
	}
	if n > *budget { // not with max_num_seqs ≤ max_num_batched_tokens (validated)
		return false
	}
	newest := *budget - (n - 1) // the budget left when the walk reaches the newest
	need := 0
	for _, r := range w.active {
		d := r.tokens() - r.computed
		if r == w.tail {
			if d = min(d, newest); w.cfg.MambaAlign {
				if d = w.alignChunk(r, r.computed, d); d == 0 {
					return false
				}
			}
		} else if d != 1 {
			return false
		}
		need += max(0, w.blocksFor(r.computed+d)-len(r.blocks))
	}
	if need+w.steadyBlocks(p) > w.kv.available() {
		return false
	}
	for _, r := range w.active {
		d := r.tokens() - r.computed
		if r == w.tail {
			if d = min(d, newest); w.cfg.MambaAlign {
				d = w.alignChunk(r, r.computed, d)
			}
		}
		r.blocks = w.kv.takeN(w.blocksFor(r.computed+d)-len(r.blocks), r.blocks)
		w.addToBatch(r, d)
		*budget -= d
	}
	w.takeSteadyBlocks(p)
	*budget -= w.steady.n
	return true
}

// alignChunk is vLLM's block-aligned split of a prefill chunk in a hybrid
// model's align mode (Config.MambaAlign; Scheduler._mamba_block_aligned_split):
// a request with computed tokens in the cache, still computing its prompt
// (or, re-admitted, its tokens but the last), computes n tokens unless that
// crosses no boundary it must stop at: a chunk that ends before the last
// block boundary of its tokens is cut to whole blocks (possibly to 0: it
// waits for a pass with room for a block), and one that would pass that
// boundary stops on it, so that the state there is cached; the tokens after
// it are computed in the next pass. Its callers call it in align mode only
// (a flag test on the scheduler's hot path, not a call).
func (w *Worker) alignChunk(r *Request, computed, n int) int {
	if computed >= max(r.Prompt, r.tokens()-1) {
		return n
	}
	bs := w.cfg.BlockSize
	last := r.tokens() - r.tokens()%bs
	switch after := computed + n; {
	case after < last:
		return n / bs * bs
	case computed < last && last < after:
		return last - computed
	}
	return n
}

// mergeBySeq merges b (in seq order) into a (in seq order) and returns the
// merged slice; b's backing array is reused as the next scratch.
func (w *Worker) mergeBySeq(a, b []*Request) []*Request {
	slices.SortFunc(b, func(x, y *Request) int { return cmp.Compare(x.seq, y.seq) })
	out := w.merged[:0]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i].seq < b[j].seq {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(append(out, a[i:]...), b[j:]...)
	clear(a)
	w.merged = a[:0]
	return out
}

// admit moves a request that left a queue into the running set, takes the need
// new blocks its first n tokens require (checked by the caller) and adds it to
// the pass.
func (w *Worker) admit(r *Request, n, need int) {
	if w.cfg.StateBlocks > 0 && !r.stated { // a handoff took its state with its blocks (reserve)
		w.takeState(r)
	}
	r.blocks = w.kv.takeN(need, r.blocks)
	w.link(r)
	w.active = append(w.active, r)
	r.where = onRunning
	w.addToBatch(r, n)
}

// addToBatch records that r computes n tokens in this pass (its blocks for
// them taken) and caches the blocks they fill (registerFull).
func (w *Worker) addToBatch(r *Request, n int) {
	r.scheduled = n
	// s: the drafts it verifies (speculative decoding), scheduled after its
	// token; they are not cached (allocate_slots caches up to num_tokens)
	s := r.specScheduled()
	r.drafts = 0
	w.registerFull(r, r.computed+n-s)
	b := &w.batch
	// A decode: one token after the prompt, or a handed-off request's first
	// pass (its KV holds the prompt; the pass computes the prompt's last
	// token again and starts the response).
	if n-s == 1 && (r.computed >= r.Prompt && r.Generated > 0 || r.transferred && r.computed == r.kvReady-1) {
		b.AddDecode(r.computed)
		for i, win := range w.cfg.DecodeWindows {
			b.DecodeWindowSums[i] += int64(perf.WindowKeys(r.computed, win))
		}
		b.SpecTokens += s
	} else {
		b.Prefill = append(b.Prefill, perf.Chunk{NewTokens: n, PrefixTokens: r.computed})
	}
	if r.computed+n-s == r.tokens() && r.Generated < r.Output {
		b.Samplers += 1 + s // every position verified samples (the rejection sampler)
	}
}

// recordLookup counts an admission's prefix-cache lookup (PrefixCacheStats):
// hit tokens of the request's tokens.
func (w *Worker) recordLookup(r *Request, hit int) {
	if w.kv.cache == nil {
		return
	}
	p := &w.prefix
	if r.admitted {
		p.PreemptedRequests++
		p.PreemptedQueries += int64(r.tokens())
		p.PreemptedHits += int64(hit)
		return
	}
	p.Requests++
	p.Queries += int64(r.tokens())
	p.Hits += int64(hit)
}

// preempt releases r's blocks and puts it back at the head of the waiting
// queue to be recomputed (vLLM v1 preemption by recompute: Scheduler.
// _preempt_request → KVCacheManager.free). The blocks go to the queue last
// block first, so its earliest blocks are evicted last; the request keeps
// their ids (saved) to find those still holding its content when it is
// admitted again.
func (w *Worker) preempt(r *Request) {
	if w.kv.cache != nil {
		w.nameOwn(r)
		r.saved = append(r.saved[:0], r.blocks...)
	}
	r.lost = r.computed
	w.releaseBlocks(r)
	r.blocks = r.blocks[:0]
	r.computed, r.registered, r.scheduled = 0, 0, 0
	r.drafts = 0          // its drafts dropped (Scheduler._preempt_request)
	r.transferred = false // its transferred KV is gone: recomputed here as a prefill
	r.Preemptions++
	r.where = onWaiting
	w.waiting.PushFront(r)
}

package trtllm

// One iteration's scheduling, as TensorRT-LLM's PyExecutor forms it
// (tensorrt_llm/_torch/pyexecutor/py_executor.py, _schedule; scheduler.py,
// SimpleScheduler): the capacity scheduler picks the requests that fit the KV
// cache, in the order of the active requests (arrival order; a paused request
// keeps its place), then the micro-batch scheduler picks among those what fits
// max_batch_size and max_num_tokens, chunking contexts when
// enable_chunked_prefill is on. Resources are taken after both
// (KVCacheManager.prepare_resources): a context's whole prompt gets its blocks
// at its first chunk, block reuse moving its start past the cached prefix.

// capacity fills w.fitting with the requests the capacity scheduler lets run
// this iteration, in order, and w.paused with those MAX_UTILIZATION pauses.
func (w *Worker) capacity() {
	w.fitting, w.paused = w.fitting[:0], w.paused[:0]
	if w.opt.Policy == MaxUtilization {
		w.maxUtilization()
		return
	}
	w.guaranteedNoEvict()
}

// guaranteedNoEvict is GuaranteedNoEvictScheduler: every generation request
// (and every handoff whose KV is on its way, DISAGG_GENERATION_TRANS_IN_PROGRESS)
// is scheduled, setting aside the blocks it needs to run to completion
// (KVCacheManager::getRemainingBlocksToCompletion: ⌈(prompt + max_tokens) /
// tokens_per_block⌉ minus those it holds); then the contexts, in order, each
// only if its own remaining need fits what is left, stopping at the first that
// does not (no overtaking), all within max_batch_size.
func (w *Worker) guaranteedNoEvict() {
	avail := w.kv.available()
	maxReq := w.cfg.MaxNumSeqs
	w.pending = w.pending[:0]
	for _, r := range w.active {
		if len(w.fitting) >= maxReq {
			break
		}
		switch r.state {
		case stGeneration:
			w.fitting = append(w.fitting, r)
			avail -= w.remainingToCompletion(r)
		case stTransfer:
			avail -= w.remainingToCompletion(r)
		case stContext:
			w.pending = append(w.pending, r)
		}
	}
	w.contributed = w.contributed[:0]
	for _, r := range w.pending {
		if len(w.fitting) >= maxReq {
			break
		}
		if w.beneficialToSkip(r) {
			continue
		}
		need := w.remainingToCompletion(r)
		if need > avail {
			break
		}
		w.fitting = append(w.fitting, r)
		avail -= need
	}
}

// remainingToCompletion is the blocks r still needs to hold prompt +
// max_tokens tokens (getRemainingBlocksToCompletion).
func (w *Worker) remainingToCompletion(r *Request) int {
	return w.blocksFor(r.Prompt+r.Output) - len(r.blocks)
}

// maxUtilization is MaxUtilizationScheduler: requests are taken in order while
// the blocks of their next iteration fit (getNeededBlocksOneStep: a first
// context chunk its whole prompt, a generation step a new block when its next
// token starts one); when one does not fit, the newest started request
// (generating, or a context past its first chunk) not yet scheduled — itself
// included — is paused, its blocks counted free again, and the request is
// tried again; with none to pause the iteration's list ends there.
func (w *Worker) maxUtilization() {
	free := w.kv.available()
	scheduled := 0 // blocks taken by the scheduled requests' next iteration
	maxReq := w.cfg.MaxNumSeqs
	end := len(w.active)
	w.contributed = w.contributed[:0]
	for i := 0; i < end; {
		r := w.active[i]
		if r.state != stGeneration && r.state != stContext {
			i++
			continue
		}
		if r.state == stContext && w.beneficialToSkip(r) {
			i++
			continue
		}
		if len(w.fitting) < maxReq {
			if need := w.neededOneStep(r); scheduled+need <= free {
				scheduled += need
				w.fitting = append(w.fitting, r)
				i++
				continue
			}
		}
		j := end - 1
		for j >= i && !w.active[j].started() {
			j--
		}
		if j < i {
			break
		}
		v := w.active[j]
		free += v.ownBlocks(w.kv)
		w.paused = append(w.paused, v)
		end = j
	}
}

// neededOneStep is getNeededBlocksOneStep: a context at its first chunk needs
// its whole prompt's blocks, a later chunk none (they are held), a
// generation step the blocks its next 1 + draft tokens start.
func (w *Worker) neededOneStep(r *Request) int {
	if r.state == stContext {
		if len(r.blocks) > 0 {
			return 0
		}
		return w.blocksFor(r.context())
	}
	return max(0, w.blocksFor(r.computed+1+w.draft)-len(r.blocks))
}

// ownBlocks is the blocks r alone holds (what pausing it frees:
// schedulingRemoveSequence counts a block free once its last holder goes).
func (r *Request) ownBlocks(p *kvPool) int {
	n := 0
	for _, id := range r.blocks {
		if p.ref[id] == 1 {
			n++
		}
	}
	return n
}

// beneficialToSkip: a context at its first chunk whose first block not yet in
// the cache is one that a context scheduled earlier in this iteration will
// compute is skipped, to reuse it at the next iteration
// (capacityScheduler.cpp, beneficialToSkip; with block reuse only). The
// first uncached block of a context that is scheduled is recorded.
func (w *Worker) beneficialToSkip(r *Request) bool {
	if !w.kv.reuse || len(r.blocks) > 0 || len(r.Hashes) == 0 {
		return false
	}
	n := 0
	for n < len(r.Hashes) {
		if _, ok := w.kv.byHash[r.Hashes[n]]; !ok {
			break
		}
		n++
	}
	if n == len(r.Hashes) {
		return false // every full block is cached
	}
	h := r.Hashes[n]
	for _, c := range w.contributed {
		if c == h {
			return true
		}
	}
	w.contributed = append(w.contributed, h)
	return false
}

// microBatch picks from w.fitting, in order, what runs this iteration
// (MicroBatchScheduler::operator(), cpp/tensorrt_llm/batch_manager/
// microBatchScheduler.cpp): a generation request costs 1 + draft tokens of
// max_num_tokens; a context without chunking costs its whole length (the
// cached prefix included) and the list stops at the first that does not fit;
// with chunking the contexts are collected and, when they do not all fit the
// budget the generation requests left, cut by the chunking policy (each chunk
// at most max_num_tokens). Every request scheduled counts toward
// max_batch_size. It sets each context's chunk, and w.ctx and w.gen.
func (w *Worker) microBatch() {
	w.ctx, w.gen = w.ctx[:0], w.gen[:0]
	budget, maxReq := w.cfg.MaxNumBatchedTokens, w.cfg.MaxNumSeqs
	tokens, n := 0, 0
	chunked := w.opt.ChunkedPrefill
	allFit, want := true, 0
loop:
	for _, r := range w.fitting {
		if r.state == stGeneration {
			t := 1 + w.draft
			if tokens+t > budget {
				break loop
			}
			w.gen = append(w.gen, r)
			tokens += t
		} else {
			rem := r.context() - r.computed
			switch {
			case chunked:
				r.chunk = rem
				w.ctx = append(w.ctx, r)
				want += min(rem, budget)
				allFit = allFit && rem <= budget
			case r.context() <= budget:
				if tokens+r.context() > budget {
					break loop
				}
				r.chunk = rem
				w.ctx = append(w.ctx, r)
				tokens += r.context()
			default:
				// a context longer than the budget without chunking: only
				// a paused request's prompt and outputs can be (a prompt
				// longer than max_num_tokens is refused at arrival); it is
				// computed max_num_tokens at a time
				c := min(rem, budget-tokens)
				if c < rem {
					c = c / w.cfg.BlockSize * w.cfg.BlockSize
				}
				if c == 0 {
					break loop
				}
				r.chunk = c
				w.ctx = append(w.ctx, r)
				tokens += c
			}
		}
		if n++; n >= maxReq {
			break
		}
	}
	if chunked {
		if want > budget-tokens {
			allFit = false
		}
		if !allFit {
			w.chunk(budget - tokens)
		}
	}
	kept := w.ctx[:0]
	for _, r := range w.ctx {
		if r.chunk > 0 {
			kept = append(kept, r)
		}
	}
	w.ctx = kept
}

// chunk sets the chunk of each context in w.ctx within capacity tokens by the
// chunking policy (setCtxRequestsChunkSize); each chunk is at most
// max_num_tokens and a cut one ends on a tokens_per_block boundary.
func (w *Worker) chunk(capacity int) {
	unit, limit := w.cfg.BlockSize, w.cfg.MaxNumBatchedTokens
	for _, r := range w.ctx {
		r.chunk = 0
	}
	if w.opt.Chunking == EqualProgress {
		used, grew := 0, true
		for used < capacity && grew {
			grew = false
			for _, r := range w.ctx {
				past := r.chunk
				next := min(past+unit, r.context()-r.computed)
				inc := next - past
				if inc <= 0 || used+inc > capacity || next > limit {
					continue
				}
				r.chunk, used, grew = next, used+inc, true
			}
		}
		return
	}
	for _, r := range w.ctx {
		rem := r.context() - r.computed
		c := min(rem, capacity, limit)
		if c != rem {
			c = c / unit * unit
		}
		r.chunk = c
		capacity -= c
	}
}

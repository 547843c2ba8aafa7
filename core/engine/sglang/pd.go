package sglang

import "github.com/aisimulate/aisimulate/core/engine"

// P/D (python/sglang/srt/disaggregation/): a prefill server computes the
// prompt and holds its KV until the transfer is done; a decode server
// reserves the KV of each handed-off request (its prealloc queue, FIFO),
// receives it, and decodes it from the next pass on. (SGLang's decode server
// reserves before the prefill starts, through the bootstrap handshake; the
// replay's P/D flow reserves after it: the order is the replay's.)

// ReleaseHeld frees a finished HoldKV request's KV after its transfer: into
// the radix tree, as the prefill server's cache_finished_req does once the
// KV is sent.
func (w *Worker) ReleaseHeld(er *engine.Request) {
	r := own(er)
	w.cacheFinished(r)
	r.where = onNone
}

// Handoff takes a request (the client's prompt, output and hashes) whose
// prompt's KV a prefill server computed, and reserves that KV if the pool has
// it and no earlier handoff waits (the decode server's prealloc queue,
// disaggregation/decode.py DecodePreallocQueue: it allocates the prompt's
// tokens, FIFO): it reports whether the transfer may start now. A decode
// server has no radix cache, so the whole prompt is pulled.
func (w *Worker) Handoff(er *engine.Request) bool {
	r := own(er)
	w.renew(r)
	r.transferred, r.kvReady = true, r.Prompt
	if len(w.awaiting) == 0 {
		budget, retractable := w.allocatable()
		if w.reserve(r, &budget, retractable) {
			return true
		}
	}
	r.where = onAwaitingBlocks
	w.awaiting = append(w.awaiting, r)
	return false
}

// reservedDecodeTokens is SGLANG_NUM_RESERVED_DECODE_TOKENS
// (disaggregation/decode.py, DecodePreallocQueue): the decode room a P/D
// decode server keeps free for each request it holds.
const reservedDecodeTokens = 512

// allocatable is the KV a decode server may still reserve for handoffs
// (DecodePreallocQueue._allocatable_tokens): the free tokens less the larger
// of reservedDecodeTokens for every request it holds (running, arrived, in
// transfer) and what the running request that needs the most would still
// need with all the others retracted (its prompt and clipped output less
// every running request's tokens, retractable); and retractable.
func (w *Worker) allocatable() (budget, retractable int) {
	for _, r := range w.running {
		retractable += r.Prompt + r.Generated
	}
	single := 0
	for _, r := range w.running {
		single = max(single, r.Prompt+min(r.Output, clipMaxNewTokens)-retractable)
	}
	held := len(w.running) + len(w.arrived) + w.inTransfer
	return w.available() - max(reservedDecodeTokens*held, single), retractable
}

// reserve takes r's prompt KV and a request slot if the server has both
// now (DecodePreallocQueue.pop_preallocated, FIFO): it stops at a full
// req_to_token_pool, and at a request whose prompt and reservedDecodeTokens
// (or its prompt and clipped output beyond the retractable tokens) exceed
// the budget (allocatable), which each reservation draws its prompt and
// reservedDecodeTokens from. A slot is held by a reserved, an arrived and a
// running request, and by one that finished in the pass just run, under the
// overlap scheduler, until that pass's results are processed.
func (w *Worker) reserve(r *Request, budget *int, retractable int) bool {
	if s := w.opt.RequestSlots; s > 0 && w.inTransfer+len(w.arrived)+len(w.running)+len(w.late) >= s {
		return false
	}
	required := r.kvReady + reservedDecodeTokens
	if max(required, r.kvReady+min(r.Output, clipMaxNewTokens)-retractable) > *budget {
		return false
	}
	need := w.pages(r.kvReady)
	if need > w.available() {
		return false
	}
	*budget -= required
	w.alloc(need)
	r.own = need
	r.PulledTokens = r.kvReady
	r.where = onReserved
	w.inTransfer++
	return true
}

// ReserveWaiting reserves the KV of the handoffs waiting for it, in order,
// and returns those reserved (reused by the next call).
func (w *Worker) ReserveWaiting() []*engine.Request {
	w.reservedNow = w.reservedNow[:0]
	if len(w.awaiting) == 0 {
		return w.reservedNow
	}
	budget, retractable := w.allocatable()
	n := 0
	for n < len(w.awaiting) && w.reserve(w.awaiting[n], &budget, retractable) {
		w.reservedNow = append(w.reservedNow, &w.awaiting[n].Request)
		n++
	}
	if n > 0 {
		copy(w.awaiting, w.awaiting[n:])
		clear(w.awaiting[len(w.awaiting)-n:])
		w.awaiting = w.awaiting[:len(w.awaiting)-n]
	}
	return w.reservedNow
}

// KVArrived queues a reserved handoff whose KV arrived: it joins the running
// batch when a pass is formed with room for it (the decode server's
// prebuilt batch, joinArrived).
// Its first decode, as the replay's P/D contract has it (docs/design.md,
// "P/D disaggregation"), reads the prompt but its last token and samples
// output token 1.
func (w *Worker) KVArrived(er *engine.Request) {
	r := own(er)
	if r.where != onReserved {
		panic("sglang: KVArrived of a request without reserved KV")
	}
	w.inTransfer--
	keep := r.kvReady - 1 // the first decode computes the last prompt token
	w.release(r.own - keep)
	r.own = keep
	r.admitted = true
	r.where = onArrived
	w.arrived = append(w.arrived, r)
}

// joinArrived moves the handoffs whose KV arrived into the running batch, in
// order, while it has fewer than max_running_requests
// (get_new_prebuilt_batch: min(req_to_token_pool.size,
// max_running_requests) − the running batch's size). Under the overlap
// scheduler the running batch still holds the requests that finished in the
// pass just run (their results are processed after the next pass is
// launched): they count.
func (w *Worker) joinArrived() {
	n := min(len(w.arrived), max(w.cfg.MaxNumSeqs-len(w.running)-len(w.late), 0))
	for _, r := range w.arrived[:n] {
		r.where = onRunning
		w.running = append(w.running, r)
	}
	copy(w.arrived, w.arrived[n:])
	clear(w.arrived[len(w.arrived)-n:])
	w.arrived = w.arrived[:len(w.arrived)-n]
}

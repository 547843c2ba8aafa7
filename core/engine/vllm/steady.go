package vllm

// Steady decoding: a pass without per-request work for requests that only
// decode.
//
// A running request that decodes one token per pass and needs nothing else
// (no prefill chunk, no block to register) is "steady": it advances
// implicitly. Its Generated and computed counts are stored as of the start of
// pass sPass; at the start of pass P it has produced P − sPass more tokens
// (tokens = passes since its last change). What a pass needs from the steady
// set is kept in aggregates, updated only when a request joins or leaves:
//
//	D     = n                  (steady requests: one decode each)
//	Σ kv  = key + n·P          (key = Σ (computed − sPass))
//
// so pricing a pass (perf.Batch's Decodes and DecodeKVSum), counting its
// samplers and its outputs costs O(1) whatever the batch. A perf model with
// decode windows (sliding-window or top-k sparse attention: a decode reads
// min(kv+1, W) keys, perf.WindowUser) needs Σ min(kv+1, W) too; per window
// the steady set splits into the requests still below W (b of them, their
// key sum kb) and those at W (f of them):
//
//	Σ min(kv+1, W) = kb + b·(P+1) + f·W
//
// A request below W reaches it at a pass known when it becomes steady
// (kv + 1 ≥ W from pass W − 1 − (computed − sPass) on), kept in a min-heap
// per window: it moves from b to f once, at that pass.
//
// The only per-request work left is at the request's events, each known in
// advance:
//
//   - a KV block boundary: the pass in which its next token no longer fits its
//     blocks takes one new block. A steady request's computed count at pass P
//     is (computed − sPass) + P, so it crosses a boundary every BlockSize
//     passes, in the passes P ≡ sPass − computed (mod BlockSize): the steady
//     set is kept in BlockSize phase buckets, and pass P visits only bucket
//     (−P mod BlockSize). The block a generated token fills holds content
//     only the request can name, named only if it is preempted (nameOwn), so
//     nothing is registered at a boundary.
//   - its last token: the pass that produces it is scheduled when it becomes
//     steady (a min-heap by pass); from that pass on it is handled explicitly
//     (it finishes, its blocks are released in order).
//   - anything irregular (KV too short for the pass, a token budget that does
//     not reach every running request, a cancel): every steady request is made
//     explicit first (materialize) and the pass is formed request by request,
//     as vLLM's scheduler does (scheduler.go).
//
// When a request leaves the steady set its counts are brought up to date and
// the tokens it produced implicitly are reported (Syncs), so that the replay
// can account the client's tokens of those passes without a per-pass visit
// either.

// steadySet holds a worker's steady requests.
type steadySet struct {
	buckets [][]*Request // by phase: (computed − sPass) mod BlockSize
	// next is the bucket of the worker's next pass p = Passes + 1, −p mod
	// BlockSize, kept as the passes begin (BeginPass): no division per pass
	next int
	n    int // steady requests
	// unmeasured counts the Unmeasured ones among them
	unmeasured int
	key        int64       // Σ (computed − sPass) over them
	fin        finHeap     // each steady request's last pass
	win        []windowAgg // one per decode window (Config.DecodeWindows)
}

// maxWindows is the most decode windows a worker keeps (Request.winFull's
// bits); models have at most two (a sliding window and sparse kept keys).
const maxWindows = 8

// windowAgg keeps Σ min(kv+1, W) over the steady requests for one window W:
// below requests (kv + 1 < W) count kv + 1, full ones W.
type windowAgg struct {
	w     int64
	below int     // steady requests below W
	key   int64   // Σ (computed − sPass) over them
	full  int     // steady requests at W
	reach finHeap // each below request's first pass at W
}

// newSteadySet returns an empty steady set for blocks of bs tokens and the
// given decode windows.
func newSteadySet(bs int, windows []int) steadySet {
	st := steadySet{buckets: make([][]*Request, bs), next: mod(-1, bs)}
	for _, w := range windows {
		st.win = append(st.win, windowAgg{w: int64(w)})
	}
	return st
}

// mod is x mod m in [0, m).
func mod(x int64, m int) int {
	r := int(x % int64(m))
	if r < 0 {
		r += m
	}
	return r
}

// canSteady reports whether r, which just produced a token and decodes next
// pass, may decode implicitly from the next pass: its second token already
// produced (it was an explicit output, so the client records its time for
// time to second token), not its last token next pass (that pass is handled
// explicitly anyway), and no prompt block left to register.
//
// A model with chunked local attention (a decode window of chunks,
// perf.WindowKeys) never decodes steadily: its keys reset at every chunk
// boundary, which the aggregates below do not follow, so its requests are
// walked one by one (the PerTokenDecode path: same passes, more work).
func (w *Worker) canSteady(r *Request) bool {
	return !w.cfg.PerTokenDecode && !w.chunked && r.Generated >= 2 && r.Generated < r.Output-1 &&
		(w.kv.cache == nil || r.registered == len(r.Hashes))
}

// enterSteady makes r steady from pass s: its counts are as of the start of s.
func (w *Worker) enterSteady(r *Request, s int64) {
	st := &w.steady
	k := int64(r.computed) - s
	b := mod(k, w.cfg.BlockSize)
	r.steady, r.sPass = true, s
	r.bucket, r.bpos = int32(b), int32(len(st.buckets[b]))
	st.buckets[b] = append(st.buckets[b], r)
	st.n++
	if r.Unmeasured {
		st.unmeasured++
	}
	st.key += k
	for i := range st.win {
		a := &st.win[i]
		// its term at pass P is min(k + P + 1, W): W from pass W − 1 − k on
		if at := a.w - 1 - k; s >= at {
			a.full++
			r.winFull |= 1 << i
		} else {
			a.below++
			a.key += k
			a.reach.push(finEvent{pass: at, seq: r.seq, stamp: r.stamp, req: r})
		}
	}
	// its last token is produced by the pass at which Generated reaches
	// Output − 1 at the start: s + (Output − 1 − Generated)
	st.fin.push(finEvent{pass: s + int64(r.Output-1-r.Generated), seq: r.seq, stamp: r.stamp, req: r})
}

// materialize brings a steady request's counts up to the start of pass p and
// returns the tokens it produced implicitly since it became steady. It does
// not remove r from the set.
func (r *Request) materialize(p int64) int {
	d := int(p - r.sPass)
	r.computed += d
	r.Generated += d
	r.sPass = p
	return d
}

// leaveSteady takes r out of the steady set at the start of pass p (its
// counts brought up to date; its finish event goes stale) and records its
// implicit tokens as a Sync when there are any.
func (w *Worker) leaveSteady(r *Request, p int64, sync bool) {
	st := &w.steady
	st.key -= int64(r.computed) - r.sPass
	st.n--
	if r.Unmeasured {
		st.unmeasured--
	}
	for i := range st.win {
		a := &st.win[i]
		if r.winFull&(1<<i) != 0 {
			a.full--
		} else {
			a.below--
			a.key -= int64(r.computed) - r.sPass
		}
	}
	r.winFull = 0
	b := st.buckets[r.bucket]
	last := b[len(b)-1]
	b[r.bpos] = last
	last.bpos = r.bpos
	b[len(b)-1] = nil
	st.buckets[r.bucket] = b[:len(b)-1]
	r.steady = false
	r.stamp++
	if d := r.materialize(p); sync && d > 0 {
		w.syncs = append(w.syncs, Sync{Req: &r.Request, Tokens: d})
	}
}

// leaveAll makes every steady request explicit at the start of pass p (the
// slow path of schedule): counts up to date, syncs recorded, set emptied.
func (w *Worker) leaveAll(p int64) {
	st := &w.steady
	for i, b := range st.buckets {
		for j, r := range b {
			r.steady = false
			r.stamp++
			r.winFull = 0
			if d := r.materialize(p); d > 0 {
				w.syncs = append(w.syncs, Sync{Req: &r.Request, Tokens: d})
			}
			b[j] = nil
		}
		st.buckets[i] = b[:0]
	}
	st.n, st.key, st.unmeasured = 0, 0, 0
	st.fin.ev = st.fin.ev[:0]
	for i := range st.win {
		a := &st.win[i]
		a.below, a.key, a.full = 0, 0, 0
		clear(a.reach.ev)
		a.reach.ev = a.reach.ev[:0]
	}
}

// addSteadyWindows adds the steady requests' Σ min(kv+1, W) in pass p to
// sums (one per decode window): the requests whose KV length reaches W by
// p move from below to full first.
func (w *Worker) addSteadyWindows(p int64, sums []int64) {
	st := &w.steady
	for i := range st.win {
		a := &st.win[i]
		for h := &a.reach; len(h.ev) > 0 && h.ev[0].pass <= p; {
			e := h.pop()
			if r := e.req; r.steady && r.stamp == e.stamp {
				a.below--
				a.key -= int64(r.computed) - r.sPass
				a.full++
				r.winFull |= 1 << i
			}
		}
		sums[i] += a.key + int64(a.below)*(p+1) + int64(a.full)*a.w
	}
}

// dueFinish takes out of the steady set, in seq order, the requests whose
// last token is produced by pass p (they are handled explicitly in it), and
// appends them to dst.
func (w *Worker) dueFinish(p int64, dst []*Request) []*Request {
	h := &w.steady.fin
	for len(h.ev) > 0 && h.ev[0].pass <= p {
		e := h.pop()
		if r := e.req; r.steady && r.stamp == e.stamp {
			w.leaveSteady(r, p, true)
			dst = append(dst, r)
		}
	}
	return dst
}

// bucketOf is the phase bucket pass p visits, −p mod BlockSize.
func (w *Worker) bucketOf(p int64) int {
	if p == w.Passes+1 {
		return w.steady.next
	}
	return mod(-p, w.cfg.BlockSize)
}

// steadyBlocks counts the blocks the steady requests need in pass p: those of
// the pass's phase bucket whose next token starts a new block.
func (w *Worker) steadyBlocks(p int64) int {
	bs := w.cfg.BlockSize
	n := 0
	for _, r := range w.steady.buckets[w.bucketOf(p)] {
		if int64(r.computed)-r.sPass+p >= int64(len(r.blocks)*bs) {
			n++
		}
	}
	return n
}

// takeSteadyBlocks gives each steady request that needs one in pass p its new
// block. Which request gets which block does not matter: blocks just taken
// are alike (referenced once, no content), so any order of takes within a
// pass leaves the same cache up to block ids.
func (w *Worker) takeSteadyBlocks(p int64) {
	bs := w.cfg.BlockSize
	for _, r := range w.steady.buckets[w.bucketOf(p)] {
		if int64(r.computed)-r.sPass+p >= int64(len(r.blocks)*bs) {
			r.blocks = append(r.blocks, w.kv.take())
		}
	}
}

// StartSteadyPass starts the next pass at once when it holds the steady
// requests only, as the pass that just ended did (after OnlySteady and
// FinishSteadyPass): no explicit running request, nothing waiting, no steady
// request's last token due, every request within the token budget and the
// blocks of the pass's boundaries free. That is the pass schedule would
// form (fastRunning, without a walk), without its general steps. It returns
// false, changing nothing, in any other case: the caller forms the pass with
// StartPass.
func (w *Worker) StartSteadyPass() (durNs int64, ok bool) {
	st := &w.steady
	p := w.Passes + 1
	if w.busy || len(w.active) > 0 || w.waiting.Len() > 0 || w.kvArrived.Len() > 0 || st.n == 0 ||
		w.nRunning > w.cfg.MaxNumBatchedTokens || len(st.fin.ev) > 0 && st.fin.ev[0].pass <= p ||
		w.steadyBlocks(p) > w.kv.available() {
		return 0, false
	}
	w.syncs = w.syncs[:0]
	w.takeSteadyBlocks(p)
	b := w.resetBatch()
	w.addSteady(p)
	if len(w.cfg.DecodeWindows) > 0 {
		w.addSteadyWindows(p, b.DecodeWindowSums)
	}
	d := w.perf.PassTime(b)
	w.BeginPass(d)
	return d, true
}

// FinishSteadyPass is FinishPass for a pass of steady requests only
// (OnlySteady): it returns the steady count.
func (w *Worker) FinishSteadyPass() int {
	if !w.busy || len(w.active) > 0 {
		panic("engine: FinishSteadyPass of a pass that is not steady only")
	}
	w.busy = false
	w.outs = w.outs[:0]
	return w.steadyOut
}

// finEvent is a steady request's last pass.
type finEvent struct {
	pass  int64
	seq   uint64
	stamp uint32 // the request's stamp when scheduled: stale once it left
	req   *Request
}

func (a *finEvent) before(b *finEvent) bool {
	if a.pass != b.pass {
		return a.pass < b.pass
	}
	return a.seq < b.seq
}

// finHeap is a binary min-heap of finEvents by (pass, seq).
type finHeap struct{ ev []finEvent }

func (h *finHeap) push(e finEvent) {
	h.ev = append(h.ev, e)
	i := len(h.ev) - 1
	for i > 0 { // the parents above e move down into the hole; e lands once
		p := (i - 1) / 2
		if !e.before(&h.ev[p]) {
			break
		}
		h.ev[i] = h.ev[p]
		i = p
	}
	h.ev[i] = e
}

func (h *finHeap) pop() finEvent {
	top := h.ev[0]
	n := len(h.ev) - 1
	last := h.ev[n]
	h.ev[n] = finEvent{}
	h.ev = h.ev[:n]
	if n == 0 {
		return top
	}
	i := 0
	for { // the smaller children move up into the hole; the last event lands once
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.ev[r].before(&h.ev[l]) {
			m = r
		}
		if !h.ev[m].before(&last) {
			break
		}
		h.ev[i] = h.ev[m]
		i = m
	}
	h.ev[i] = last
	return top
}

package sglang

import (
	"fmt"
	"math"
	"sort"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Forming a pass (python/sglang/srt/managers/scheduler.py,
// get_next_batch_to_run): the prefill pass just run joins the running batch;
// then a prefill pass is formed if one can be (get_new_batch_prefill, the
// PrefillAdder of schedule_policy.py), and only if none can, a decode pass of
// the running batch (update_running_batch): SGLang runs prefill first, and a
// prefill pass decodes nothing unless --enable-mixed-chunk is set.

// StartPass forms the next pass, prices it and starts it.
func (w *Worker) StartPass() (int64, bool) {
	if !w.PlanPass() {
		return 0, false
	}
	d := w.perf.PassTime(&w.batch)
	w.BeginPass(d)
	return d, true
}

// PlanPass forms the next pass without pricing it.
func (w *Worker) PlanPass() bool {
	if w.busy {
		panic("sglang: PlanPass on a busy worker")
	}
	w.resetBatch()
	w.mergeLast()
	if w.opt.PrefillServer {
		w.batchFull = false
	}
	if w.formPrefill() || w.formDecode() {
		w.draftSteps()
		w.eagerLaunch()
		w.late = w.late[:0]
		return true
	}
	w.pass = w.pass[:0]
	w.late = w.late[:0]
	return false
}

// draftSteps adds EAGLE's draft model to the formed pass
// (speculative/eagle_worker.py): after a decode pass's verify, the draft
// model extends over the accepted tokens and proposes the next drafts,
// speculative_num_steps forwards in all; after a prefill pass, one forward
// over the prompt (forward_draft_extend) gives its first draft. Each is
// priced as one decoder layer of the pass and the LM head (perf.DraftNs).
func (w *Worker) draftSteps() {
	if w.opt.DraftSteps == 0 {
		return
	}
	if w.batch.Decodes > 0 {
		w.batch.DraftSteps = w.opt.DraftSteps
	} else {
		w.batch.DraftSteps = 1
	}
}

// eagerLaunch gives the formed pass the host's launch of its kernels when
// it runs eagerly (Options.EagerLaunchNs): SGLang replays a CUDA graph only
// for a forward mode that has one (model_executor/model_runner.py
// _forward_raw, forward_mode.is_cuda_graph: decode, verify, idle) of at most
// cuda_graph_max_bs requests (cuda_graph_runner.py can_run), so a larger
// decode pass launches each layer's kernels from the host, and so does an
// extend pass (a prefill chunk, mixed or not) unless piecewise CUDA graphs
// replay it (model_runner.py forward_extend: piecewise_cuda_graph_runner.py
// can_run, at most Options.PiecewiseMaxTokens tokens; the attention between
// the pieces still runs eagerly, and its launch is not modelled).
func (w *Worker) eagerLaunch() { w.opt.ShapePass(&w.batch) }

// ShapePass gives b the host's launch of its kernels (EagerLaunchNs) when
// SGLang runs it eagerly: a pass with a prefill chunk of more than
// PiecewiseMaxTokens tokens in all, or a decode pass of more than
// GraphMaxBS requests (engine.PassShaper; see Worker.eagerLaunch).
func (o Options) ShapePass(b *perf.Batch) {
	if len(b.Prefill) > 0 {
		if n := b.Tokens(); n > o.PiecewiseMaxTokens || n < o.PiecewiseMinTokens {
			b.HostLaunchNs = o.EagerLaunchNs
		}
	} else if b.Decodes > o.GraphMaxBS {
		b.HostLaunchNs = o.EagerLaunchNs
	}
}

// BeginPass starts the planned pass, lasting durNs.
func (w *Worker) BeginPass(durNs int64) {
	if w.busy {
		panic("sglang: BeginPass on a busy worker")
	}
	if durNs < 1 {
		panic(fmt.Sprintf("sglang: perf model %s returned a pass time of %d ns", w.perf.Name(), durNs))
	}
	w.busy = true
	w.busyNs += durNs
	w.passes++
}

func (w *Worker) resetBatch() {
	b := &w.batch
	b.Prefill = b.Prefill[:0]
	b.Decodes, b.DecodeKVSum, b.Samplers = 0, 0, 0
	b.SpecTokens, b.DraftSteps, b.HostLaunchNs = 0, 0, 0
	b.DecodeWindowSums = b.DecodeWindowSums[:0]
	for range w.cfg.DecodeWindows {
		b.DecodeWindowSums = append(b.DecodeWindowSums, 0)
	}
	w.pass = w.pass[:0]
}

// mergeLast joins the last prefill pass's requests to the running batch, and
// the P/D handoffs whose KV arrived as far as max_running_requests lets them
// (the decode server's prebuilt batch);
// the chunked request's computed tokens go into the radix tree
// (cache_unfinished_req(chunked=True)).
func (w *Worker) mergeLast() {
	if w.chunked != nil && w.tree != nil {
		w.cacheUnfinished(w.chunked)
	}
	if w.lastShrunk {
		w.batchFull = false
	}
	w.running = append(w.running, w.last...)
	clear(w.last)
	w.last, w.lastShrunk = w.last[:0], false
	if len(w.arrived) > 0 {
		w.joinArrived()
	}
}

// adder is a PrefillAdder: the budgets of one prefill pass's admissions
// (schedule_policy.py).
type adder struct {
	remTotalOffset, curRemOffset float64 // tokens reserved (rem_total_token_offset, cur_rem_token_offset)
	remInput, remChunk           int     // rem_input_tokens, rem_chunk_tokens (chunking: remChunk valid)
	chunking                     bool
	canRun                       []*Request
	newChunked                   *Request
	states                       []reqState // add_one_req_ignore_eos's sorted estimates (nil: not built)
}

type reqState struct{ left, occupied int }

// addResult is AddReqResult.
type addResult uint8

const (
	addContinue addResult = iota
	addNoToken
	addOther
)

func (w *Worker) remTotal() float64 { return float64(w.available()) - w.adder.remTotalOffset }
func (w *Worker) curRem() float64   { return float64(w.available()) - w.adder.curRemOffset }

// runningOffset is a running request's reserved decode room:
// min(max_new_tokens − output, CLIP) × new_token_ratio (× 1 with
// Options.IgnoreEOSFullRoom: the simulated requests run to their output
// length, ignore_eos).
func (w *Worker) runningOffset(r *Request) float64 {
	if w.opt.IgnoreEOSFullRoom {
		return float64(min(r.remaining(), clipMaxNewTokens))
	}
	return float64(min(r.remaining(), clipMaxNewTokens)) * w.ratio
}

func (w *Worker) budgetState() addResult {
	a := &w.adder
	if w.remTotal() <= 0 || w.curRem() <= 0 {
		return addNoToken
	}
	if a.remInput <= 0 || a.chunking && a.remChunk <= 0 {
		return addOther
	}
	return addContinue
}

// update charges an admission of extend tokens (page-rounded) and maxNew
// reserved output tokens (_update_prefill_budget).
func (w *Worker) update(extend, maxNew int) {
	a := &w.adder
	extend = w.pages(extend)
	overhead := 0
	if w.opt.PageOverhead {
		overhead = w.opt.PageSize
	}
	a.remTotalOffset += float64(extend + maxNew + overhead)
	a.curRemOffset += float64(extend + overhead)
	a.remInput -= extend
	if a.chunking {
		a.remChunk -= extend
	}
}

// formPrefill forms a prefill pass (get_new_batch_prefill) and reports
// whether it did.
func (w *Worker) formPrefill() bool {
	if (w.batchFull || len(w.waiting) == 0) && w.chunked == nil {
		return false
	}
	running := len(w.running)
	if w.cfg.MaxNumSeqs-running <= 0 && w.chunked == nil {
		w.batchFull = true
		return false
	}
	w.calcPriority()
	mixed := 0
	if w.opt.MixedChunk {
		mixed = running
	}
	a := &w.adder
	*a = adder{canRun: a.canRun[:0], states: a.states[:0], remInput: w.opt.MaxPrefillTokens - mixed,
		remTotalOffset: float64(mixed), curRemOffset: float64(mixed)}
	a.states = nil
	if w.opt.ChunkedPrefillSize > 0 {
		a.chunking, a.remChunk = true, w.opt.ChunkedPrefillSize-mixed
	}
	for _, r := range w.running {
		a.remTotalOffset += w.runningOffset(r)
	}
	if c := w.chunked; c != nil {
		if truncated, ok := w.addChunked(c); ok {
			a.canRun = append(a.canRun, c)
			if !truncated {
				w.chunked = nil
			}
		}
	}
	for _, r := range w.waiting {
		if len(a.canRun) >= w.cfg.MaxNumSeqs-running {
			w.batchFull = true
			break
		}
		res := w.addOne(r)
		if res != addContinue {
			if res == addNoToken {
				w.batchFull = true
			}
			break
		}
	}
	if len(a.canRun) == 0 {
		return false
	}
	if a.newChunked != nil {
		w.chunked = a.newChunked
	}
	w.takeFromWaiting(a.canRun)
	w.prefillRun = true
	for _, r := range a.canRun {
		w.extend(r)
	}
	if w.opt.MixedChunk && len(w.running) > 0 {
		// mix_with_running: the running requests decode in the prefill pass
		// (their tokens are in the adder's budget: no memory check)
		for _, r := range w.running {
			w.addDecode(r)
		}
		// the running batch is empty until the pass is merged back
		w.last = append(w.last, w.running...)
		clear(w.running)
		w.running = w.running[:0]
	}
	return true
}

// takeFromWaiting removes the admitted requests from the waiting queue, in
// one pass.
func (w *Worker) takeFromWaiting(rs []*Request) {
	for _, r := range rs {
		if r.where == onWaiting {
			r.where = onRunning
		}
	}
	kept := w.waiting[:0]
	for _, r := range w.waiting {
		if r.where == onWaiting {
			kept = append(kept, r)
		}
	}
	clear(w.waiting[len(kept):])
	w.waiting = kept
}

// addChunked continues the chunked request (add_chunked_req): its next chunk,
// as far as the chunk budget and the pool allow. ok is false when nothing of
// it fits this pass.
func (w *Worker) addChunked(r *Request) (truncated, ok bool) {
	a := &w.adder
	rem := min(a.remChunk, int(math.Floor(w.remTotal())))
	ext := r.fill() - r.computed()
	if rem <= 0 {
		return true, false
	}
	truncated = ext > rem
	ext = min(ext, rem)
	r.scheduled = ext
	maxNew := 0
	if !truncated {
		maxNew = min(r.Output, clipMaxNewTokens)
	}
	w.update(ext, maxNew)
	return truncated, true
}

// match finds r's cached prefix (init_next_round_input): at most its tokens
// but one, so that the pass computes the last and samples. It sets r.prefix
// and r.last (not yet locked).
func (w *Worker) match(r *Request) {
	if w.tree == nil {
		return
	}
	r.prefix, r.last = w.tree.match(r.key, r.fill()-1)
	if r.prefix == 0 {
		r.last = nil
	}
}

// addOne admits waiting request r if the budgets allow (add_one_req).
func (w *Worker) addOne(r *Request) addResult {
	a := &w.adder
	if w.tree == nil {
		// the simulated requests all run to their output length
		// (ignore_eos), which without the radix cache takes
		// add_one_req_ignore_eos
		return w.addOneIgnoreEOS(r)
	}
	w.match(r)
	ext := r.fill() - r.prefix
	total := ext + min(r.remaining(), clipMaxNewTokens)
	if w.opt.PageInAdmitCheck {
		total += w.opt.PageSize
	}
	input := w.pages(ext)
	if float64(total) >= w.remTotal() {
		w.forgetMatch(r)
		return addNoToken
	}
	overInput := input >= a.remInput && len(a.canRun) > 0 && (!a.chunking || !w.opt.InputCapUnchunkedOnly)
	if overInput {
		w.forgetMatch(r)
		return addOther
	}
	reused := w.lockPrefix(r) // locking the prefix takes it out of the evictable tokens
	if float64(total) >= w.remTotal() || overInput {
		res := addOther
		if float64(total) >= w.remTotal() {
			res = addNoToken
		}
		w.kv.Reused -= int64(reused)
		w.unlockPrefix(r)
		w.kv.Released -= int64(reused)
		return res
	}
	if !a.chunking || input <= a.remChunk {
		r.scheduled = ext
		a.canRun = append(a.canRun, r)
		w.update(input, min(r.Output, clipMaxNewTokens))
		return w.budgetState()
	}
	trunc := a.remChunk / w.opt.PageSize * w.opt.PageSize
	if trunc <= 0 {
		w.kv.Reused -= int64(reused)
		w.unlockPrefix(r)
		w.kv.Released -= int64(reused)
		return addOther
	}
	r.scheduled = trunc
	a.canRun = append(a.canRun, r)
	a.newChunked = r
	w.update(trunc, 0)
	return w.budgetState()
}

// forgetMatch drops a prefix matched but not locked.
func (w *Worker) forgetMatch(r *Request) { r.prefix, r.last = 0, nil }

// lockPrefix locks r's matched prefix and returns the tokens that stopped
// being evictable.
func (w *Worker) lockPrefix(r *Request) int {
	if r.last == nil {
		return 0
	}
	n := w.tree.lock(r.last)
	w.kv.Reused += int64(n)
	return n
}

// addOneIgnoreEOS admits r when, with every request already admitted running
// to its full output, the pool can never run out
// (add_one_req_ignore_eos: requests sorted by tokens left, each prefix of the
// order must fit what the pool holds after the shorter ones finish).
func (w *Worker) addOneIgnoreEOS(r *Request) addResult {
	a := &w.adder
	ext := r.fill() - r.computed()
	if float64(w.pages(ext)) > math.Min(w.curRem(), w.remTotal()) {
		return addNoToken
	}
	state := func(x *Request) (reqState, bool) {
		left := x.Output - x.Generated // new_token_ratio 1.0 for ignore_eos
		return reqState{left, x.Prompt + x.Generated}, left > 0
	}
	if a.states == nil {
		a.states = make([]reqState, 0, len(w.running)+len(a.canRun)+1)
		for _, x := range append(append([]*Request{r}, w.running...), a.canRun...) {
			if s, ok := state(x); ok {
				a.states = append(a.states, s)
			}
		}
		sort.SliceStable(a.states, func(i, j int) bool { return a.states[i].left < a.states[j].left })
	} else if s, ok := state(r); ok {
		i := sort.Search(len(a.states), func(i int) bool { return s.left <= a.states[i].left })
		a.states = append(a.states, reqState{})
		copy(a.states[i+1:], a.states[i:])
		a.states[i] = s
	}
	cur := w.curRem() - float64(w.pages(ext))
	freed := 0.0
	for i, s := range a.states {
		bs := float64(len(a.states) - i)
		if cur+freed-float64(s.left)*bs <= ignoreEOSReserveTokens*bs {
			return addNoToken
		}
		freed += float64(s.occupied)
	}
	if !a.chunking || ext <= a.remChunk {
		r.scheduled = ext
		a.canRun = append(a.canRun, r)
		w.update(ext, min(r.Output, clipMaxNewTokens))
	} else {
		if a.remChunk == 0 {
			return addOther
		}
		r.scheduled = a.remChunk
		a.canRun = append(a.canRun, r)
		a.newChunked = r
		w.update(a.remChunk, 0)
	}
	return w.budgetState()
}

// extend adds r's prefill chunk to the pass (prepare_for_extend): its KV
// slots taken, SGLang's cached_tokens counted.
func (w *Worker) extend(r *Request) {
	n := r.scheduled
	if !w.alloc(n) {
		panic(fmt.Sprintf("sglang: prefill out of memory: %d tokens, %d free", n, w.free))
	}
	pre := r.computed()
	if !r.admitted || r.retracted {
		w.recordLookup(r)
	}
	if !r.admitted {
		r.admitted = true
	}
	if r.retracted {
		w.recomputed += int64(max(r.lost-pre, 0))
		r.retracted = false
	}
	r.cached += pre - r.already
	r.already = pre + n
	r.CachedTokens = r.cached
	r.own += n
	r.decode = false
	w.batch.Prefill = append(w.batch.Prefill, prefillChunk(n, pre))
	if pre+n == r.fill() && r.Generated < r.Output {
		w.batch.Samplers++
	}
	w.pass = append(w.pass, r)
}

// recordLookup counts an admission's prefix lookup (engine.PrefixCacheStats).
func (w *Worker) recordLookup(r *Request) {
	if w.tree == nil {
		return
	}
	p := &w.prefix
	if r.admitted {
		p.PreemptedRequests++
		p.PreemptedQueries += int64(r.fill())
		p.PreemptedHits += int64(r.prefix)
		return
	}
	p.Requests++
	p.Queries += int64(r.fill())
	p.Hits += int64(r.prefix)
}

// addDecode adds r's decode (one token at KV length computed) to the pass;
// with EAGLE it verifies its drafts too: it writes w.verify tokens of KV (the
// rejected ones are freed at the pass's end) and samples at each.
func (w *Worker) addDecode(r *Request) {
	if !w.alloc(w.verify) {
		panic("sglang: decode out of memory after the check")
	}
	r.own += w.verify
	r.scheduled, r.decode = w.verify, true
	kv := r.computed() - w.verify
	w.batch.AddDecode(kv)
	for i, win := range w.cfg.DecodeWindows {
		w.batch.DecodeWindowSums[i] += int64(perf.WindowKeys(kv, win))
	}
	w.batch.SpecTokens += w.verify - 1
	w.batch.Samplers += w.verify
	w.pass = append(w.pass, r)
}

// formDecode forms a decode pass of the running batch
// (update_running_batch): when the pool cannot give every request its next
// token, requests are retracted; otherwise the ratio decays.
func (w *Worker) formDecode() bool {
	if len(w.running) == 0 && len(w.late) == 0 {
		return false
	}
	w.prefillRun = false
	if len(w.running) > 0 {
		w.decodeMem()
	}
	for _, r := range w.running {
		w.addDecode(r)
	}
	// the overlap scheduler's extra decode of each request that finished in
	// the pass before (its tokens discarded, its KV not yet freed when the
	// batch was formed): priced, nothing emitted
	for _, kv := range w.late {
		w.batch.AddDecode(kv)
		for i, win := range w.cfg.DecodeWindows {
			w.batch.DecodeWindowSums[i] += int64(min(kv+1, win))
		}
		w.batch.SpecTokens += w.verify - 1
		w.batch.Samplers += w.verify
	}
	return true
}

// decodeMem makes room for one token per running request
// (check_decode_mem, then retract_decode when it fails).
func (w *Worker) decodeMem() {
	need := w.decodeNeed(w.running)
	if w.free < need && w.tree != nil {
		w.evict(need)
	}
	if w.free >= need {
		w.ratio = math.Max(w.ratio-w.opt.NewTokenRatioDecay, w.opt.MinNewTokenRatio)
		return
	}
	w.retract()
}

// retract retracts running requests until the rest can decode
// (ScheduleBatch.retract_decode): the requests with the fewest output tokens,
// and of those the longest prompts, go first, back to the waiting queue's
// end with their output kept; their own KV is freed (what the radix tree
// holds of their prompt stays, unlocked). The new ratio is what the kept
// requests have decoded plus retract_decode_steps each, over their
// max_new_tokens.
//
// With EAGLE, through 0.5.16, the requests are not sorted: the batch's last
// goes first ("filter_batch API can only filter requests from the back";
// from 0.5.17 _get_decode_retraction_order sorts them too:
// Options.RetractSortsSpec).
func (w *Worker) retract() {
	rs := w.running
	if w.opt.DraftSteps == 0 || w.opt.RetractSortsSpec {
		sort.SliceStable(rs, func(i, j int) bool { // descending by (output, −prompt): the last is retracted first
			if rs[i].Generated != rs[j].Generated {
				return rs[i].Generated > rs[j].Generated
			}
			return rs[i].Prompt < rs[j].Prompt
		})
	}
	for first := true; first || !w.decodeFits(rs); first = false {
		if len(rs) == 1 {
			break
		}
		r := rs[len(rs)-1]
		rs[len(rs)-1] = nil
		rs = rs[:len(rs)-1]
		r.lost = r.computed()
		w.dropKV(r)
		r.retracted = true
		r.already = 0
		r.Preemptions++
		r.where = onWaiting
		w.waiting = append(w.waiting, r)
	}
	w.running = rs
	w.batchFull = false
	decoded, maxNew := 0, 0
	for _, r := range rs {
		decoded += r.Generated
		maxNew += r.Output
	}
	if maxNew > 0 {
		w.ratio = math.Min(1, float64(decoded+retractDecodeSteps*len(rs))/float64(maxNew))
	}
}

// decodeNeed is the KV tokens the next decode of requests rs takes
// (ScheduleBatch.new_tokens_required_next_decode): each writes w.verify
// tokens (one; EAGLE: the drafts verified too), and with page_size > 1
// SGLang asks for the new pages they open, a page for each request whose
// tokens [kv, kv + verify) pass its last page's end (kv_committed_len %
// page_size == 0 for one token). The pool here counts tokens, not pages (a
// request's last page is not rounded up), so the need is the larger of the
// two.
func (w *Worker) decodeNeed(rs []*Request) int {
	need := len(rs) * w.verify
	if p := w.opt.PageSize; p > 1 {
		pages := 0
		for _, r := range rs {
			kv := r.computed()
			pages += (kv+w.verify+p-1)/p - (kv+p-1)/p
		}
		need = max(need, pages*p)
	}
	return need
}

// decodeFits reports whether requests rs can each take a decode's tokens
// (evicting).
func (w *Worker) decodeFits(rs []*Request) bool {
	n := w.decodeNeed(rs)
	if w.free < n && w.tree != nil {
		w.evict(n)
	}
	return w.free >= n
}

// calcPriority orders the waiting queue by the policy (SchedulePolicy.
// calc_priority): fcfs keeps arrival order; lpm, while at most 128 wait and
// the radix cache is on, sorts by cached prefix, longest first, putting last
// a request that matches little of the cache but much of a request ahead of
// it (in-batch prefix caching); lof sorts by max_new_tokens, longest first.
// Sorts are stable.
func (w *Worker) calcPriority() {
	q := w.waiting
	switch w.opt.Policy {
	case config.SGLangPolicyLPM:
		if w.tree == nil || len(q) > lpmQueueLimit {
			return
		}
		inQueue := newRadixTree(1)
		depri := make(map[*Request]bool)
		for _, r := range q {
			n, _ := w.tree.match(r.key, r.fill())
			r.prefix = n
			if n <= inBatchPrefixThreshold {
				m, _ := inQueue.match(r.key, r.fill())
				if m >= inBatchPrefixThreshold {
					depri[r] = true
				} else {
					inQueue.insert(r.key, r.fill())
				}
			}
		}
		sort.SliceStable(q, func(i, j int) bool {
			if depri[q[i]] != depri[q[j]] {
				return depri[q[j]]
			}
			return q[i].prefix > q[j].prefix
		})
		for _, r := range q {
			r.prefix = 0 // matched again at admission
		}
	case config.SGLangPolicyLOF:
		sort.SliceStable(q, func(i, j int) bool { return q[i].Output > q[j].Output })
	}
}

// FinishPass applies the running pass at its end and returns its outputs in
// batch order (process_batch_result_prefill / _decode).
func (w *Worker) FinishPass() ([]engine.Out, int) {
	if !w.busy {
		panic("sglang: FinishPass on an idle worker")
	}
	w.busy = false
	w.outs = w.outs[:0]
	for _, r := range w.pass {
		if r.where != onRunning { // aborted during the pass
			r.scheduled = 0
			continue
		}
		r.scheduled = 0
		if !r.decode && r.computed() < r.fill() { // a chunk of a longer prompt
			continue
		}
		k := 1
		if r.decode && w.verify > 1 { // EAGLE: the drafts accepted, meanAccepted a decode, carried in fractions
			r.accepted += w.meanAccepted
			n := int(r.accepted)
			r.accepted -= float64(n)
			k += n
			k = min(k, max(r.remaining(), 1))
			w.release(w.verify - k) // the rejected drafts' KV
			r.own -= w.verify - k
		}
		first := r.Generated == 0
		k = min(k, max(r.Output-r.Generated, 0))
		r.Generated += k
		r.held += k
		if r.Generated >= r.Output || w.streamsHeld(r, first) {
			for ; r.held > 0; r.held-- {
				w.outs = append(w.outs, engine.Out{Req: &r.Request, Kind: engine.OutToken})
			}
		}
		if r.Generated >= r.Output {
			// from 0.5.22 the next batch leaves out a request whose
			// next output was known to finish it (Options.SkipFinishingDecode:
			// its output before this pass one short of the length)
			skipped := w.opt.SkipFinishingDecode && r.Generated-k+1 >= r.Output
			if r.decode && w.opt.Overlap && !skipped {
				w.late = append(w.late, r.computed())
			}
			w.finish(r)
			continue
		}
		if !r.decode {
			if w.tree != nil {
				w.cacheUnfinished(r)
			}
			w.last = append(w.last, r)
		}
	}
	if !w.prefillRun { // the finished requests leave the running batch
		var shrunk bool
		if w.running, shrunk = keepRunning(w.running); shrunk {
			w.batchFull = false
		}
	} else if w.opt.MixedChunk { // the mixed pass's decodes sit in last
		var shrunk bool
		if w.last, shrunk = keepRunning(w.last); shrunk {
			w.lastShrunk = true
		}
	}
	return w.outs, 0
}

// streams reports whether a request not finished whose output has reached n
// tokens sends what it holds (stream_output_generation): every pass at an
// interval of at most 1; else, from 0.4.9, at the lengths ≡ 1 modulo the
// interval, and its first token (first: this pass made it), which SGLang
// makes alone, in the prefill pass or a P/D decode server's prebuilt pass,
// at length 1 (here a P/D decode server's first decode also makes the
// tokens it accepts); before 0.4.9 at the multiples of the interval. Only
// the length after the pass is tested, so a speculative decode that
// accepts several tokens may step over a sending length.
func (w *Worker) streams(n int, first bool) bool {
	iv := w.opt.StreamInterval
	switch {
	case iv <= 1:
		return true
	case w.opt.StreamsFirstToken:
		return first || n%iv == 1
	}
	return n%iv == 0
}

// streamsHeld reports whether r's held tokens go out after a pass: from
// 0.5.22 (Options.StreamByUnsent; scheduler_components/output_streamer.py
// accept) when none was sent yet or at least the interval's tokens are
// held, so a speculative decode that accepts several tokens no longer steps
// over a sending length; before, streams at r's output length.
func (w *Worker) streamsHeld(r *Request, first bool) bool {
	if iv := w.opt.StreamInterval; w.opt.StreamByUnsent && iv > 1 {
		return r.held >= iv || r.held > 0 && r.held == r.Generated
	}
	return w.streams(r.Generated, first)
}

// keepRunning drops from rs the requests no longer running (finished or
// aborted), in place, and reports whether any was dropped.
func keepRunning(rs []*Request) ([]*Request, bool) {
	kept := rs[:0]
	for _, r := range rs {
		if r.where == onRunning {
			kept = append(kept, r)
		}
	}
	clear(rs[len(kept):])
	return kept, len(kept) < len(rs)
}

// finish ends r: its KV goes to the radix tree (cache_finished_req: its
// prompt and output but the last token), or is held for the P/D transfer.
func (w *Worker) finish(r *Request) {
	w.outs = append(w.outs, engine.Out{Req: &r.Request, Kind: engine.OutFinished})
	if !r.decode {
		w.lastShrunk = true
	}
	if r.HoldKV {
		r.where = onHeld
		return
	}
	w.cacheFinished(r)
	r.where = onNone
}

// cacheUnfinished puts r's computed tokens into the radix tree and moves its
// lock there (cache_unfinished_req): tokens the tree held already were
// computed twice and are freed.
func (w *Worker) cacheUnfinished(r *Request) {
	n := r.computed()
	held, end := w.tree.insert(r.key, n)
	inserted := n - n%max(w.opt.PageSize, 1)
	if held > r.prefix { // duplicates of what the tree held
		w.release(held - r.prefix)
		r.own -= held - r.prefix
	}
	moved := max(inserted-max(held, r.prefix), 0) // its tokens now in the tree
	r.own -= moved
	w.kv.Released += int64(moved) // unreferenced until the lock below
	w.unlockPrefix(r)             // dec_lock_ref(last_node), then inc_lock_ref(new_last_node)
	r.prefix = inserted
	if end != &w.tree.root {
		r.last = end
		w.lockPrefix(r)
	}
}

// cacheFinished frees a finished request's KV into the radix tree (or the
// pool, without one).
func (w *Worker) cacheFinished(r *Request) {
	if w.tree == nil {
		w.release(r.own)
		r.own = 0
		return
	}
	n := min(r.computed(), r.Prompt+max(r.Generated-1, 0))
	held, _ := w.tree.insert(r.key, n)
	inserted := n - n%max(w.opt.PageSize, 1)
	if held > r.prefix {
		w.release(held - r.prefix)
		r.own -= held - r.prefix
	}
	moved := max(inserted-max(held, r.prefix), 0)
	r.own -= moved
	w.kv.Released += int64(moved)
	w.release(r.own) // tokens past the inserted pages
	r.own = 0
	w.unlockPrefix(r)
}

// prefillChunk is a perf chunk of n new tokens after pre cached ones.
func prefillChunk(n, pre int) perf.Chunk { return perf.Chunk{NewTokens: n, PrefixTokens: pre} }

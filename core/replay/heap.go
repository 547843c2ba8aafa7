package replay

// event kinds
const (
	evPassEnd     uint8 = iota
	evSend              // open loop: the next request of the source is sent
	evArrival           // a request reaches the engine
	evRelease           // the client acts on a finished response
	evTurnSend          // a session's next turn is sent
	evReceive           // a worker's detokenization job completes
	evTransferEnd       // P/D: a prompt's KV reached its decode worker
	evTimeout           // the client cancels a request still in flight
	evIntakeDone        // a request's input processing on its API server's loop is done
	evStageStart        // a load stage starts sending (traffic.load mode stages)
	evGraceEnd          // the client cancels a measured request still in flight at traffic.stop.grace_s's end
)

type event struct {
	t    int64  // virtual time, ns
	ord  uint64 // phase << 56 | insertion order: ties at t by phase, then by insertion
	kind uint8
	idx  int32  // worker index (evPassEnd) or in-flight slot (others)
	gen  uint32 // flight events: the flight's generation when it was scheduled
}

// phaseShift places the phase above the insertion counter in event.ord (a
// replay inserts far fewer than 2^56 events).
const phaseShift = 56

func (a *event) before(b *event) bool {
	return a.t < b.t || a.t == b.t && a.ord < b.ord
}

// eventHeap orders the replay's events: a binary min-heap by value for
// events after the time being processed, and a FIFO per phase for events at
// that time. Hand-rolled rather than container/heap so that pushes and pops
// do not box events into interfaces.
//
// Most events a request causes happen at the time that caused them (its
// arrival after a send leg of 0, the client's action on a response without
// overhead, the next send of a closed-loop client), so they never enter the
// heap: the heap holds about one event per worker (its pass end) instead of
// one per request in flight. The order is the same as one heap's: at time t,
// by phase, then by insertion; an event pushed while t is processed has a
// later insertion than every event of t already in the heap.
type eventHeap struct {
	ev   []event
	seq  uint64
	cur  int64            // the time being processed (setTime)
	now  [phaseCount]fifo // events at cur, by phase
	nNow int              // events in now
}

// fifo is a queue of events; its buffer is reused once drained.
type fifo struct {
	ev   []event
	head int
}

// Len is the number of events waiting.
func (h *eventHeap) Len() int { return len(h.ev) + h.nNow }

// setTime starts processing time t (≥ every earlier time, ≤ every waiting
// event's time).
func (h *eventHeap) setTime(t int64) { h.cur = t }

// next returns the time of the earliest waiting event; Len must be > 0.
func (h *eventHeap) next() int64 {
	if h.nNow > 0 {
		return h.cur
	}
	return h.ev[0].t
}

func (h *eventHeap) push(t int64, phase, kind uint8, idx int32) { h.pushGen(t, phase, kind, idx, 0) }

func (h *eventHeap) pushGen(t int64, phase, kind uint8, idx int32, gen uint32) {
	h.seq++
	e := event{t: t, ord: uint64(phase)<<phaseShift | h.seq, kind: kind, idx: idx, gen: gen}
	if t == h.cur {
		q := &h.now[phase]
		q.ev = append(q.ev, e)
		h.nNow++
		return
	}
	h.ev = append(h.ev, e)
	i := len(h.ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.ev[i].before(&h.ev[p]) {
			break
		}
		h.ev[i], h.ev[p] = h.ev[p], h.ev[i]
		i = p
	}
}

// popAt removes and returns the first event at time t (the time being
// processed), or false when none is left.
func (h *eventHeap) popAt(t int64) (event, bool) {
	heap := len(h.ev) > 0 && h.ev[0].t == t
	if h.nNow > 0 {
		for p := range h.now {
			q := &h.now[p]
			if q.head == len(q.ev) {
				continue
			}
			if heap && h.ev[0].ord>>phaseShift <= uint64(p) {
				break // the heap's event is of an earlier phase, or of this one and inserted earlier
			}
			e := q.ev[q.head]
			q.head++
			if q.head == len(q.ev) {
				q.ev, q.head = q.ev[:0], 0
			}
			h.nNow--
			return e, true
		}
	}
	if !heap {
		return event{}, false
	}
	return h.pop(), true
}

func (h *eventHeap) pop() event {
	top := h.ev[0]
	n := len(h.ev) - 1
	h.ev[0] = h.ev[n]
	h.ev = h.ev[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.ev[r].before(&h.ev[l]) {
			m = r
		}
		if !h.ev[m].before(&h.ev[i]) {
			break
		}
		h.ev[i], h.ev[m] = h.ev[m], h.ev[i]
		i = m
	}
	return top
}

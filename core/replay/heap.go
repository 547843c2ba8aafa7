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
)

type event struct {
	t     int64  // virtual time, ns
	seq   uint64 // insertion order, the last tie-breaker
	phase uint8
	kind  uint8
	idx   int32  // worker index (evPassEnd) or in-flight slot (others)
	gen   uint32 // flight events: the flight's generation when it was scheduled
}

func (a *event) before(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	return a.seq < b.seq
}

// eventHeap is a binary min-heap of events by value. Hand-rolled rather than
// container/heap so that pushes and pops do not box events into interfaces:
// a replay pushes one event per pass and a few per request.
type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) Len() int { return len(h.ev) }

func (h *eventHeap) push(t int64, phase, kind uint8, idx int32) { h.pushGen(t, phase, kind, idx, 0) }

func (h *eventHeap) pushGen(t int64, phase, kind uint8, idx int32, gen uint32) {
	h.seq++
	h.ev = append(h.ev, event{t: t, seq: h.seq, phase: phase, kind: kind, idx: idx, gen: gen})
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

func (h *eventHeap) peek() *event { return &h.ev[0] }

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

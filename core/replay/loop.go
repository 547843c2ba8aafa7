package replay

import (
	"encoding/json"
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
)

type jsonRaw = json.RawMessage

// flight is one request between its send and the client acting on its end.
type flight struct {
	rec    int // index into sim.records
	eng    engine.Request
	lastNs int64   // last token received by the client
	gaps   []int64 // gaps between received tokens, ns
	slot   int32   // closed-loop client, -1 in an open loop
	hashes []uint64
}

// sim is the state of one replay.
type sim struct {
	spec    *config.Spec
	dep     *deployment
	tr      *traffic
	workers []*engine.Worker
	h       eventHeap
	now     int64

	flights []*flight
	free    []int32 // unused flight slots
	active  int

	records []report.Record
	acc     report.Accumulator
	req     workload.Request // scratch for the source
	pending workload.Request // open loop: the next request to send
	rr      int              // round-robin cursor
}

// Run replays a decoded spec and returns its report. Errors: *config.Error for a
// spec the core cannot build (with the field), *workload.DataError for bad
// workload data (file and line), other errors for simulation failures.
func Run(s *config.Spec) (*report.Report, error) {
	dep, err := buildDeployment(s)
	if err != nil {
		return nil, err
	}
	tr, err := openTraffic(s, dep.engineCfg.BlockSize)
	if err != nil {
		return nil, err
	}
	defer tr.close()
	m := &sim{spec: s, dep: dep, tr: tr}
	for i := 0; i < dep.count; i++ {
		w, err := engine.NewWorker(dep.engineCfg, dep.perf)
		if err != nil {
			return nil, err
		}
		m.workers = append(m.workers, w)
	}
	if err := m.start(); err != nil {
		return nil, err
	}
	if err := m.loop(); err != nil {
		return nil, err
	}
	if err := m.checkEnd(); err != nil {
		return nil, err
	}
	return &report.Report{
		Metadata: dep.metadata(s, m.workers),
		Summary:  m.acc.Close(dep.count * dep.tp),
		Records:  m.records,
	}, nil
}

// start schedules the first sends: the first request of an open loop, or one
// request per closed-loop client at time 0.
func (m *sim) start() error {
	if m.tr.mode == "concurrency" {
		for c := 0; c < m.tr.concurrency; c++ {
			m.h.push(0, phaseClientAction, evSlotStart, int32(c))
		}
		return nil
	}
	return m.prefetch()
}

// prefetch reads the next open-loop request and schedules its send.
func (m *sim) prefetch() error {
	t, ok, err := m.tr.next(&m.pending, m.now)
	if err != nil || !ok {
		return err
	}
	m.h.push(t, phaseArrival, evSend, -1)
	return nil
}

func (m *sim) loop() error {
	for m.h.Len() > 0 {
		t := m.h.peek().t
		if t < m.now {
			panic(fmt.Sprintf("replay: INV-3 clock went back from %d to %d ns", m.now, t))
		}
		m.now = t
		for m.h.Len() > 0 && m.h.peek().t == t {
			e := m.h.pop()
			if err := m.dispatch(&e); err != nil {
				return err
			}
		}
		m.startPasses()
	}
	return nil
}

func (m *sim) dispatch(e *event) error {
	switch e.kind {
	case evPassEnd:
		m.passEnd(int(e.idx))
	case evSend:
		m.send(&m.pending, -1)
		return m.prefetch()
	case evArrival:
		m.arrive(e.idx)
	case evRelease:
		return m.release(e.idx)
	case evSlotStart:
		return m.slotNext(e.idx)
	}
	return nil
}

// send starts a flight for r at m.now.
func (m *sim) send(r *workload.Request, slot int32) {
	idx := m.newFlight()
	f := m.flights[idx]
	f.slot, f.lastNs = slot, report.NoTime
	f.gaps = f.gaps[:0]
	f.rec = len(m.records)
	m.records = append(m.records, report.Record{
		RequestID: r.ID, InputTokens: r.InputTokens, SendNs: m.now, ArrivalNs: m.now,
		FirstTokenNs: report.NoTime, Worker: -1, SessionID: r.SessionID, Turn: r.Turn,
	})
	f.eng = engine.Request{ID: int64(idx), Prompt: r.InputTokens, Output: r.OutputTokens}
	if m.dep.engineCfg.PrefixCaching {
		f.hashes = workload.BlockHashes(r, m.dep.engineCfg.BlockSize, f.hashes)
		f.eng.Hashes = f.hashes
	}
	m.h.push(m.now, phaseArrival, evArrival, idx)
}

func (m *sim) newFlight() int32 {
	m.active++
	if n := len(m.free); n > 0 {
		idx := m.free[n-1]
		m.free = m.free[:n-1]
		return idx
	}
	m.flights = append(m.flights, &flight{})
	return int32(len(m.flights) - 1)
}

// arrive places a request that reached the engine on a worker, or rejects it.
func (m *sim) arrive(idx int32) {
	f := m.flights[idx]
	rec := &m.records[f.rec]
	rec.ArrivalNs = m.now
	w := m.place()
	rec.Worker = w
	if reason := m.workers[w].CheckFits(f.eng.Prompt, f.eng.Output); reason != "" {
		rec.Reason = reason
		m.end(idx, report.StatusRejected)
		return
	}
	m.workers[w].Add(&f.eng)
}

// place picks the worker for an arriving request.
func (m *sim) place() int {
	if m.dep.placement == "least_outstanding" {
		best := 0
		for i, w := range m.workers {
			if w.Outstanding() < m.workers[best].Outstanding() {
				best = i
			}
		}
		return best
	}
	w := m.rr
	m.rr = (m.rr + 1) % len(m.workers)
	return w
}

func (m *sim) startPasses() {
	for i, w := range m.workers {
		if w.Busy() || !w.HasWork() {
			continue
		}
		if d, ok := w.StartPass(); ok {
			m.h.push(m.now+d, phasePassEnd, evPassEnd, int32(i))
		}
	}
}

// passEnd applies a finished pass; the client receives its outputs at once.
func (m *sim) passEnd(w int) {
	for _, o := range m.workers[w].FinishPass() {
		idx := int32(o.Req.ID)
		switch o.Kind {
		case engine.OutToken:
			m.token(idx)
		case engine.OutFinished:
			m.end(idx, report.StatusCompleted)
		}
	}
}

// token records that the client received one output token at m.now.
func (m *sim) token(idx int32) {
	f := m.flights[idx]
	if f.lastNs == report.NoTime {
		m.records[f.rec].FirstTokenNs = m.now
	} else {
		f.gaps = append(f.gaps, m.now-f.lastNs)
	}
	f.lastNs = m.now
}

// end records that the client received the end of the response at m.now and
// schedules the client's action on it.
func (m *sim) end(idx int32, status string) {
	f := m.flights[idx]
	rec := &m.records[f.rec]
	rec.Status, rec.EndNs = status, m.now
	rec.OutputTokens = f.eng.Generated
	rec.CachedTokens = f.eng.CachedTokens
	rec.Preemptions = f.eng.Preemptions
	m.acc.Add(rec, f.gaps)
	m.h.push(m.now, phaseClientAction, evRelease, idx)
}

// release: the client acts on the finished response; a closed-loop client sends
// its next request.
func (m *sim) release(idx int32) error {
	f := m.flights[idx]
	m.records[f.rec].ReleaseNs = m.now
	slot := f.slot
	m.free = append(m.free, idx)
	m.active--
	if slot >= 0 {
		return m.slotNext(slot)
	}
	return nil
}

// slotNext sends closed-loop client slot's next request at m.now, if any.
func (m *sim) slotNext(slot int32) error {
	_, ok, err := m.tr.next(&m.req, m.now)
	if err != nil || !ok {
		return err
	}
	m.send(&m.req, slot)
	return nil
}

// checkEnd verifies INV-1 (every sent request reached one terminal status) and
// INV-2 (every KV block is back: free or cached).
func (m *sim) checkEnd() error {
	if m.active != 0 {
		return fmt.Errorf("replay: INV-1 broken: %d requests never finished (engine stalled)", m.active)
	}
	for i, w := range m.workers {
		st := w.KVStats()
		if st.Allocated+st.Reused != st.Released || w.KVFree() != m.dep.engineCfg.NumBlocks {
			return fmt.Errorf("replay: INV-2 broken on worker %d: %+v, %d of %d blocks free", i, st, w.KVFree(), m.dep.engineCfg.NumBlocks)
		}
	}
	return nil
}

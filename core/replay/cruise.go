package replay

import (
	"math"

	"github.com/aisimulate/aisimulate/core/clock"
)

// Cruising: passes of steady requests only, run without the event queue.
//
// A pass whose requests are all steady (engine.Worker.OnlySteady: each
// decodes one token implicitly, nobody is explicit) produces no output at its
// end, only a count of tokens (FinishPass): its end changes nothing but its
// own worker and the ITL pool, whose statistics do not depend on the order of
// its gaps (report.gapPool). Its end is not an event: the worker cruises, its
// pass end kept in cruiseEnd. Before the loop takes the next event, cruise
// runs the cruising workers' passes that end before it, earliest first (a
// worker at a time: its pass end, then its next pass formed at once), for no
// event at an earlier time can reach the worker: nothing happens at such a
// time but other cruising workers' pass ends. A pass of explicit requests
// ends by an event as any other; its outputs may reach any worker (a
// finished request frees a closed-loop client, whose next request arrives at
// once). A cruising pass that ends at the time of the next event ends first
// among that time's events (landCruises), before the requests arriving then
// join the queues, as its event would (phasePassEnd is the first phase).
//
// The result is the one the event queue gives, pass for pass: every pass
// starts at the same time with the same batch, and the timeline records
// passes in the same order (by start, then by worker, as startPasses forms
// them). Workers cruise only where a pass end has no effect beyond its
// worker and the ITL pool: no detokenization (its job would be an event) nor
// input processing on the API server's loop (its jobs are events),
// no P/D (handoffs), no async scheduling (the inbox follows Busy), no
// lockstep ranks, no client timeout (a timeout makes every request decode
// per token, so none is steady), and no worker stalled (one that startPasses retries at
// every event; while one is, the cruising workers' pass ends go back to the
// queue).

// canCruise reports whether this replay's workers may cruise.
func (m *sim) canCruise() bool {
	if m.path.Detokenize || m.path.SharedLoop || m.dep.disagg || m.inbox != nil {
		return false
	}
	for _, p := range m.pools {
		if p.lockstep {
			return false
		}
	}
	return true
}

// cruise runs, earliest first (then in worker order), the cruising workers'
// passes that end before the next event: each one's end, and the worker's
// next pass. It returns with every cruising pass ending at or after the next
// event (or with none cruising when no event is left), or with m.halt set.
func (m *sim) cruise(steps *int) error {
	for m.nCruise > 0 {
		if m.stalled { // back to the queue: startPasses retries the stalled worker at every event
			m.queueCruises()
			return nil
		}
		w, e := -1, int64(math.MaxInt64)
		for i, end := range m.cruiseEnd {
			if end < e {
				w, e = i, end
			}
		}
		if m.h.Len() > 0 && e >= m.h.next() {
			return nil
		}
		if *steps++; *steps&(checkEvery-1) == 0 {
			if err := m.poll(); err != nil {
				return err
			}
		}
		m.setNow(e)
		steady, unmeasured, d, ok := m.workers[w].CruiseSteady() // its pass ends; the next starts if steady-only too
		m.touchDown(w, steady, unmeasured)
		if end := m.now + d; ok && end <= clock.Horizon { // the common case, in short: the next pass cruises too
			m.busy[w], m.cruiseEnd[w] = true, end
			m.nCruise++
			if m.tl != nil {
				m.recordPass(w, d)
			}
		} else if ok {
			m.passStarted(w, d) // past the horizon: its end is an event
		} else if m.workers[w].HasWork() && !m.startPass(w) {
			m.stalled = true
		}
		if m.halt != nil {
			return m.halt
		}
	}
	return nil
}

// land ends cruising worker w's pass at m.now: its steady requests' tokens.
func (m *sim) land(w int) {
	steady, unmeasured := m.workers[w].LandSteady()
	m.touchDown(w, steady, unmeasured)
}

// touchDown accounts cruising worker w's pass that ended at m.now with steady
// tokens, unmeasured of them from warm-up requests.
func (m *sim) touchDown(w, steady, unmeasured int) {
	m.busy[w], m.cruiseEnd[w] = false, math.MaxInt64
	m.load.passEnded(m.now)
	m.nCruise--
	m.landed++
	m.steadyTokens(w, steady, steady-unmeasured, false)
}

// landCruises ends the cruising passes that end at t, the time of the next
// event, before its events.
func (m *sim) landCruises(t int64) {
	for w, end := range m.cruiseEnd {
		if end == t {
			m.land(w)
		}
	}
}

// queueCruises turns every cruising pass back into a pass-end event.
func (m *sim) queueCruises() {
	for w, end := range m.cruiseEnd {
		if end != math.MaxInt64 {
			m.cruiseEnd[w] = math.MaxInt64
			m.nCruise--
			m.at(end, phasePassEnd, evPassEnd, int32(w), 0)
		}
	}
}

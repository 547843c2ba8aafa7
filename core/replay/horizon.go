package replay

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/clock"
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/workload"
)

// at schedules an event at time t (ns), or, when t is past clock.Horizon,
// records in m.halt why the replay cannot go on: every cost is at most
// clock.MaxSpan and every scheduled time at most the horizon, so time + cost
// never wraps (before this check, a wrapped sum turned the clock back and
// the loop panicked on INV-3). The loop returns m.halt after the current
// timestamp's events.
func (m *sim) at(t int64, phase, kind uint8, idx int32, gen uint32) {
	if t > clock.Horizon {
		if m.halt == nil {
			m.halt = m.horizonError(t, kind, idx)
		}
		return
	}
	m.h.pushGen(t, phase, kind, idx, gen)
}

// horizonError names the cost that would carry an event of kind (for flight
// or worker idx) to time t, past the clock's range: a *config.Error with the
// spec field, or a *workload.DataError for a trace row's own delay.
func (m *sim) horizonError(t int64, kind uint8, idx int32) error {
	var field, what string
	switch kind {
	case evPassEnd:
		field, what = "engine.perf", fmt.Sprintf("a pass of worker %d lasts %s", idx, human(t-m.now))
	case evArrival:
		field, what = "engine.tokenization.send_ms", fmt.Sprintf("a request's send leg lasts %s", human(m.path.SendNs))
		if m.path.IntakePerTokenNs > 0 {
			field, what = "engine.tokenization", fmt.Sprintf("a request's send leg and input processing last %s", human(t-m.now))
		}
	case evStageStart:
		field, what = "traffic.load.stages", fmt.Sprintf("stage %d would begin at %s", m.tr.stage, human(t))
	case evIntakeDone:
		field, what = "engine.tokenization", fmt.Sprintf("worker %d's API server event loop is busy until %s", m.flights[idx].pw, human(t))
	case evTimeout:
		field, what = "traffic.load.request_timeout_ms", fmt.Sprintf("a request's timeout is %s", human(m.path.TimeoutNs))
	case evGraceEnd:
		field, what = "traffic.stop.grace_s", fmt.Sprintf("the grace period ends at %s", human(t))
	case evReceive:
		field, what = "engine.detokenization", fmt.Sprintf("worker %d's output processor is busy until %s", idx, human(t))
	case evRelease:
		field, what = "traffic.load.response_overhead", fmt.Sprintf("a response's overhead ends %s after it", human(t-m.now))
	case evTurnSend:
		r := &m.flights[idx].req
		if r.HasDelay {
			return &workload.DataError{File: m.spec.Traffic.Source.TracePath(), Line: r.Line, Field: "delay",
				Msg: fmt.Sprintf("session %d's turn %d would be sent at %s, past the end of the virtual clock (2^60 ns, %.1f years)",
					r.SessionID, r.Turn, human(t), clock.Years(clock.Horizon))}
		}
		field, what = "traffic.load.inter_turn_delay_ms", fmt.Sprintf("session %d's turn %d is sent %s after the previous turn's release", r.SessionID, r.Turn, human(t-m.now))
	case evTransferEnd:
		field, what = "engine.workers.disaggregated.kv_transfer", fmt.Sprintf("a KV transfer lasts %s", human(t-m.now))
	default: // evSend: the next open-loop arrival
		field, what = "traffic.load", fmt.Sprintf("the next request is sent at %s", human(t))
		if m.tr.mode == config.LoadRate {
			field = "traffic.load.rate_rps"
		}
	}
	return &config.Error{Field: field, Msg: fmt.Sprintf(
		"the replay would run past the end of the virtual clock (2^60 ns, %.1f years of simulated time) at %s: %s; lower it or the workload",
		clock.Years(clock.Horizon), human(m.now), what)}
}

// human writes a duration in ns for a message: "1.5e+09 s (47.5 years)".
func human(ns int64) string {
	if ns >= 1e9*3600*24*365 {
		return fmt.Sprintf("%.4g s (%.1f years)", float64(ns)/1e9, clock.Years(ns))
	}
	return fmt.Sprintf("%.4g s", float64(ns)/1e9)
}

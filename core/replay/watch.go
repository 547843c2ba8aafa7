package replay

import (
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
	"math"
)

// Watcher sees a replay's measured requests (the warm-up's are not shown)
// as they are sent, receive their first token and end, so that a caller can
// stop a replay whose outcome is already certain (capacity planning stops a
// deployment certain to miss its SLO: core/search). index is the request's
// place among the measured requests in send order (0, 1, …); rec is its
// record as it stands (SendNs, then FirstTokenNs, then Status and EndNs set;
// the event's time is that field: the replay's clock never goes back, so the
// calls come in time order). A non-nil error stops the replay at the end of
// the current time step: Run returns that error.
type Watcher interface {
	Sent(index int, rec *report.Record) error
	FirstToken(index int, rec *report.Record) error
	Ended(index int, rec *report.Record) error
}

// WithWatcher shows the run's measured requests to w (Watcher). The loop's
// cost without one is a nil check per send, first token and end.
func WithWatcher(w Watcher) Option { return func(o *runOptions) { o.watch = w } }

// watched reports err (from the run's Watcher) as the reason the replay
// stops, unless it stops for another reason already.
func (m *sim) watched(err error) {
	if err != nil && m.halt == nil {
		m.halt = err
	}
}

// Offer is the load a spec's traffic offers, read without replaying it
// (OfferedLoad): its measured requests in send order (the warm-up's left
// out), each with its prompt and output lengths and, when the replay sends
// it at a time no deployment changes, that time.
type Offer struct {
	// InputTokens and OutputTokens of each measured request (tokens); with
	// sessions, only the requests that start something (lone requests and
	// first turns): Exact is then false.
	InputTokens, OutputTokens []int
	// SendNs is each request's send time (ns from the start of the
	// measured phase), nil when a send depends on the deployment (a closed
	// loop, a warm-up phase, sessions).
	SendNs []int64
	// Exact: the lists hold every measured request the replay sends (no
	// session's later turns, which follow their first's release).
	Exact bool
	// Timeouts: the client cancels requests (traffic.load.request_timeout_ms),
	// so a request that received a token may still not complete.
	Timeouts bool
}

// OfferedLoad reads the requests spec s's traffic sends (its source through
// the replay's own reader, its stop conditions, the same seeds), simulating
// nothing. A trace is read to its end.
//
// Errors: as the replay's (a *config.Error naming the field, a
// *workload.DataError naming the file and line).
func OfferedLoad(s *config.Spec) (*Offer, error) {
	if s.Traffic.Benchmark != nil {
		s = s.Clone()
		s.ExpandBenchmark()
	}
	tr, err := openTraffic(s)
	if err != nil {
		return nil, err
	}
	defer tr.close()
	o := &Offer{Timeouts: s.Traffic.Load.RequestTimeoutMs > 0, Exact: true}
	_, generated := s.Traffic.Source.Type.(config.SessionsSource)
	// a capped rate's sends wait for the deployment's responses, and so does
	// what a duration lets it send
	fixed := (tr.mode == config.LoadTrace || tr.mode == config.LoadRate) && !tr.inWarmup && !generated && tr.capN == 0
	if tr.capN > 0 && tr.stopNs != math.MaxInt64 {
		o.Exact = false
	}
	var r workload.Request
	for {
		sendNs, ok, err := tr.next(&r, 0)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if tr.inWarmup { // a closed loop's warm-up: not measured
			tr.warmSent++
			if tr.warmLeft--; tr.warmLeft == 0 {
				tr.inWarmup = false
			}
			continue
		}
		if r.SessionID >= 0 {
			o.Exact, fixed = false, false
		}
		o.InputTokens = append(o.InputTokens, r.InputTokens)
		o.OutputTokens = append(o.OutputTokens, r.OutputTokens)
		o.SendNs = append(o.SendNs, sendNs)
	}
	if generated {
		o.Exact = false
	}
	if !fixed {
		o.SendNs = nil
	}
	return o, nil
}

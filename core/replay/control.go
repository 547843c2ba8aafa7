package replay

import (
	"context"
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// Progress is a running replay's state, as WithProgress reports it.
type Progress struct {
	// Sent is the requests sent so far; Finished those that reached a
	// terminal status (completed, rejected, failed, canceled).
	Sent, Finished int64
	// Expected is the requests the replay will send when they are known
	// ahead (a synthetic count, stop.max_requests, a trace's rows: the memory
	// estimate's exact count), else 0.
	Expected int64
	// NowNs is the virtual clock; StopNs is stop.max_duration_s in ns (0 =
	// none): no request is sent at or after it.
	NowNs, StopNs int64
}

// WithProgress calls f with the replay's progress every checkEvery
// timestamps of the event loop (a fraction of a millisecond of host time on
// the benchmark workloads) and once when the loop ends. f runs on the
// replay's goroutine and must return quickly.
func WithProgress(f func(Progress)) Option { return func(o *runOptions) { o.progress = f } }

// checkEvery is how many timestamps the loop runs between two looks at its
// context and progress callback (a power of two: the test is a mask).
const checkEvery = 1024

// Stopped is the error of a replay whose context was canceled (RunContext):
// the user stopped it. It carries how far it got; errors.Is(err,
// context.Canceled) holds for a cancel, context.DeadlineExceeded for a
// deadline.
type Stopped struct {
	Progress
	Cause error
}

func (e *Stopped) Error() string {
	return fmt.Sprintf("replay stopped after %d of its requests were sent (%d finished), at %.3f s of simulated time: %v",
		e.Sent, e.Finished, float64(e.NowNs)/1e9, e.Cause)
}

func (e *Stopped) Unwrap() error { return e.Cause }

// RunContext is Run that stops when ctx is done: the event loop looks at ctx
// every checkEvery timestamps and returns a *Stopped error (no report). The
// look costs a channel poll per checkEvery timestamps, nothing measurable.
func RunContext(ctx context.Context, s *config.Spec, opts ...Option) (*report.Report, error) {
	return run(ctx, s, opts)
}

// progress is the replay's Progress now.
func (m *sim) progressNow() Progress {
	p := Progress{Sent: int64(m.sent()), Finished: m.ended, NowNs: m.now}
	if m.mem.Exact {
		p.Expected = m.mem.Requests
	}
	if at := m.tr.stopAtNs(m.now); at != math.MaxInt64 {
		p.StopNs = at
	}
	return p
}

// poll reports progress and returns a *Stopped error once the context is done.
func (m *sim) poll() error {
	if m.onProgress != nil {
		m.onProgress(m.progressNow())
	}
	select {
	case <-m.done:
		return &Stopped{Progress: m.progressNow(), Cause: m.ctx.Err()}
	default:
		return nil
	}
}

// checkSLO requires every bound of an SLO to be a finite number > 0 (ms).
func checkSLO(o *report.SLO) error {
	for _, b := range []struct {
		name string
		v    *float64
	}{{"ttft_ms", o.TTFTMs}, {"tpot_ms", o.TPOTMs}, {"e2e_ms", o.E2EMs}} {
		if b.v != nil && !(*b.v > 0 && *b.v <= math.MaxFloat64) {
			return &config.Error{Field: "slo." + b.name, Msg: fmt.Sprintf("must be a finite number of ms > 0, got %g", *b.v)}
		}
	}
	if o.TTFTMs == nil && o.TPOTMs == nil && o.E2EMs == nil {
		return &config.Error{Field: "slo", Msg: "has no bound: give ttft_ms, tpot_ms and/or e2e_ms"}
	}
	return nil
}

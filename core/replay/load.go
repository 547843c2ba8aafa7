package replay

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// loadStats follows the measured load as the replay runs, for the summary's
// in_flight and saturation (docs/metrics.md, "In flight" and "Saturation"):
// the requests in flight, and the engines' waiting queues as each measured
// send sees them, kept in time buckets (queueBuckets) so that the memory stays
// fixed however long the run. Its work is a few additions per request sent or
// ended, and a pass over the workers per send.
type loadStats struct {
	inFlight, peak  int
	sends           int64
	firstNs, lastNs int64
	tokens          int64   // prompt + output tokens asked for by the measured requests sent
	spanNs          float64 // Σ (end − send) of the measured requests ended
	runStarted      bool
	runStartNs      int64 // the first send of any request, warm-up included
	// servedNs is the end of the first pass after the first measured send (0:
	// none yet): the waiting queues shrink only when a pass ends and the
	// scheduler admits again (vLLM's vllm/v1/engine/core.py EngineCore.step
	// calls scheduler.schedule() once a step).
	servedNs int64

	// Bucket b holds the sends in [originNs + b·widthNs, originNs + (b+1)·widthNs):
	// their count and the sum of the waiting requests each saw. When a send
	// falls past the last bucket, pairs merge and the width doubles.
	widthNs int64
	n, sum  [queueBuckets]int64
}

// queueBuckets is the number of time buckets of the queue samples: the two
// halves of the sending window are told apart to within one bucket, at most
// 1/32 of the window.
const queueBuckets = 64

// sent counts a measured request sent at nowNs with its prompt and output
// tokens, seeing waiting requests queued in the engines (−1: not sampled).
func (l *loadStats) sent(nowNs int64, tokens int64, waiting int) {
	if l.sends == 0 {
		l.firstNs, l.widthNs = nowNs, 1
	}
	l.sends++
	l.lastNs = nowNs
	l.tokens += tokens
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	if waiting < 0 {
		return
	}
	off := nowNs - l.firstNs
	for off >= queueBuckets*l.widthNs {
		for b := 0; b < queueBuckets/2; b++ {
			l.n[b], l.sum[b] = l.n[2*b]+l.n[2*b+1], l.sum[2*b]+l.sum[2*b+1]
		}
		clear(l.n[queueBuckets/2:])
		clear(l.sum[queueBuckets/2:])
		l.widthNs *= 2
	}
	b := off / l.widthNs
	l.n[b]++
	l.sum[b] += int64(waiting)
}

// passEnded counts a pass that ended at nowNs on any worker.
func (l *loadStats) passEnded(nowNs int64) {
	if l.servedNs == 0 && l.sends > 0 && nowNs > l.firstNs {
		l.servedNs = nowNs
	}
}

// ended counts the end of a measured request sent at sendNs, at nowNs.
func (l *loadStats) ended(sendNs, nowNs int64) {
	l.inFlight--
	l.spanNs += float64(nowNs - sendNs)
}

// inFlightSummary is the summary's in_flight over a measured window of winNs.
func (l *loadStats) inFlightSummary(winNs int64) *report.InFlight {
	f := &report.InFlight{Peak: l.peak}
	if winNs > 0 {
		mean := l.spanNs / float64(winNs)
		f.Mean = &mean
	}
	return f
}

// utilization is the summary's worker_utilization: busyMs, every worker's
// time in passes, over the run's span spanNs (nil when the span is 0).
func utilization(busyMs []float64, spanNs int64) *report.WorkerUtilization {
	if spanNs <= 0 || len(busyMs) == 0 {
		return nil
	}
	u := &report.WorkerUtilization{Min: math.Inf(1)}
	for _, b := range busyMs {
		share := b * 1e6 / float64(spanNs)
		u.Mean += share
		u.Min, u.Max = min(u.Min, share), max(u.Max, share)
	}
	u.Mean /= float64(len(busyMs))
	return u
}

// saturation is the summary's saturation (nil when the deployment kept up, or
// the sends had no window to tell): s is the closed summary, with its
// worker_utilization.
//
// The growth between the halves is the excess of the offered over the served
// rate only when the deployment served within the window: a window with no
// pass end in its first half (a burst sent within one pass) shows a queue
// that grows at the offered rate whatever the deployment's capacity, so it is
// not judged (docs/metrics.md, "Saturation").
func (l *loadStats) saturation(s *report.Summary) *report.Saturation {
	windowNs := l.lastNs - l.firstNs
	if l.sends < 2 || windowNs <= 0 || s.DurationMs <= 0 {
		return nil
	}
	half := float64(windowNs) / 2
	if l.servedNs == 0 || float64(l.servedNs-l.firstNs) >= half {
		return nil
	}
	var n [2]int64
	var sum, at [2]float64 // waiting seen; sum of bucket centres (ns), weighted by sends
	for b := 0; b < queueBuckets; b++ {
		if l.n[b] == 0 {
			continue
		}
		centre := (float64(b) + 0.5) * float64(l.widthNs)
		h := 0
		if centre >= half {
			h = 1
		}
		n[h] += l.n[b]
		sum[h] += float64(l.sum[b])
		at[h] += centre * float64(l.n[b])
	}
	if n[0] == 0 || n[1] == 0 { // a closed loop (not sampled), or every send in one half
		return nil
	}
	q1, q2 := sum[0]/float64(n[0]), sum[1]/float64(n[1])
	gap := (at[1]/float64(n[1]) - at[0]/float64(n[0])) / 1e9 // s between the halves' mean sends
	offered := float64(l.sends) / (float64(windowNs) / 1e9)
	if gap <= 0 || q2-q1 < 1 {
		return nil
	}
	growth := (q2 - q1) / gap
	if growth < report.SaturatedGrowthShare*offered {
		return nil
	}
	durS := s.DurationMs / 1e3
	sat := &report.Saturation{
		OfferedRequestRateRPS: offered,
		OfferedTokenRateTPS:   float64(l.tokens) / (float64(windowNs) / 1e9),
		ServedRequestRateRPS:  float64(s.Completed) / durS,
		ServedTokenRateTPS:    float64(s.TotalInputTokens+s.TotalOutputTokens) / durS,
		QueueFirstHalf:        q1, QueueSecondHalf: q2, QueueGrowthRPS: growth,
	}
	if s.WorkerUtilization != nil {
		sat.BusiestWorkerUtilization = s.WorkerUtilization.Max
	}
	sat.Diagnosis = fmt.Sprintf("saturated: offered %s req/s (%s tok/s), served %s req/s (%s tok/s); "+
		"the waiting queue grew %s → %s (+%s req/s); busiest worker %.1f %% busy",
		sig3(sat.OfferedRequestRateRPS), kilo(sat.OfferedTokenRateTPS), sig3(sat.ServedRequestRateRPS),
		kilo(sat.ServedTokenRateTPS), sig3(q1), sig3(q2), sig3(growth), 100*sat.BusiestWorkerUtilization)
	return sat
}

// sig3 writes v with three significant digits (at least one decimal below 100).
func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// kilo writes a rate in thousands above 10,000 ("33.6k"), else whole.
func kilo(v float64) string {
	if v >= 10_000 {
		return fmt.Sprintf("%.1fk", v/1000)
	}
	return fmt.Sprintf("%.0f", v)
}

// queueSample is the requests waiting in every worker's queue
// (engine.Worker.Waiting) as a send sees them, or −1 (no sample) for a closed loop: its
// clients hold the queue at what they send, so it is never saturated in the
// summary's sense (docs/metrics.md, "Saturation"), and the pass over the
// workers would be a twentieth of a short closed-loop request's cost.
func (m *sim) queueSample() int {
	if m.tr.mode == config.LoadConcurrency {
		return -1
	}
	n := 0
	for _, w := range m.workers {
		n += w.Waiting()
	}
	return n
}

// loadSummary adds the in_flight and saturation of the run to its summary s
// (pools: the run's metadata pools, for each worker's busy time).
func (m *sim) loadSummary(s *report.Summary, pools []report.Pool) {
	s.InFlight = m.load.inFlightSummary(m.acc.WindowNs())
	var busy []float64
	for _, p := range pools {
		busy = append(busy, p.WorkerBusyMs...)
	}
	if m.load.runStarted {
		s.WorkerUtilization = utilization(busy, m.now-m.load.runStartNs)
	}
	s.Saturation = m.load.saturation(s)
}

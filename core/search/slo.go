package search

import (
	"fmt"
	"math"
	"slices"

	"github.com/aisimulate/aisimulate/core/report"
)

// SLO is the service-level objective a deployment must meet: the
// Percentile-th percentile of each bounded per-request metric within its
// bound (ms; 0 = not bounded). Metrics are AIPerf's (docs/metrics.md):
// TTFT, TPOT (per request, (e2e − ttft)/(output − 1), requests of two or
// more output tokens) and E2E. A measured request that does not complete
// (rejected, failed, canceled) counts as missing every bound: a deployment
// that refuses part of the load does not serve it.
type SLO struct {
	TTFTMs     float64 `json:"ttft_ms"`
	TPOTMs     float64 `json:"tpot_ms"`
	E2EMs      float64 `json:"e2e_ms"`
	Percentile float64 `json:"percentile"`
}

// metric indices of an SLO's bounds.
const (
	mTTFT = iota
	mTPOT
	mE2E
	nMetrics
)

// metricNames are the per-request metrics' names (report.Summary's).
var metricNames = [nMetrics]string{"ttft_ms", "tpot_ms", "e2e_ms"}

func (s *SLO) bound(m int) float64 { return [nMetrics]float64{s.TTFTMs, s.TPOTMs, s.E2EMs}[m] }

// Check refuses an SLO without a bound, with a bound that is not a finite
// number > 0, or a percentile outside (0, 100].
func (s *SLO) Check() error {
	any := false
	for m := range nMetrics {
		b := s.bound(m)
		if b < 0 || math.IsNaN(b) || math.IsInf(b, 0) {
			return fmt.Errorf("slo.%s = %g, want a finite number of ms > 0", metricNames[m], b)
		}
		any = any || b > 0
	}
	if !any {
		return fmt.Errorf("slo: no bound: give ttft_ms, tpot_ms or e2e_ms")
	}
	if !(s.Percentile > 0 && s.Percentile <= 100) {
		return fmt.Errorf("slo.percentile = %g, want in (0, 100]", s.Percentile)
	}
	return nil
}

// mustExceed is how many of n values must exceed a bound for their p-th
// percentile (numpy's linear interpolation) to exceed it whatever the
// others are: the values at sorted positions ≥ ⌊(n−1)·p/100⌋ all exceed it,
// so the interpolation between two of them does. It does not decrease as n
// grows, so with n at most N, mustExceed(N) misses certainly.
func mustExceed(n int, p float64) int {
	if n <= 0 {
		return 1
	}
	return n - int(math.Floor(float64(n-1)*p/100))
}

// Percentile is numpy's linear-interpolation percentile of xs (sorted in
// place; +Inf allowed: a percentile that reaches one is +Inf), NaN when xs
// is empty.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	h := float64(len(xs)-1) * p / 100
	lo := int(math.Floor(h))
	hi := min(lo+1, len(xs)-1)
	f := h - float64(lo)
	if f == 0 || xs[lo] == xs[hi] {
		return xs[lo]
	}
	if math.IsInf(xs[hi], 1) {
		return math.Inf(1)
	}
	return xs[lo] + f*(xs[hi]-xs[lo])
}

// tracker watches a candidate's replay (replay.Watcher) and stops it with a
// *CertainMiss once one of the SLO's percentiles is certain to exceed its
// bound. For each bounded metric it counts the measured requests certain to
// miss the bound so far, at the current time now:
//
//   - TTFT: a first token more than the bound after the send; an end
//     without completing (a miss by the SLO's rule); and a request that has
//     neither, sent more than the bound before now: its first token, if it
//     comes, comes later still. The last are counted by a pointer over the
//     send times (sends come in index order) less the requests behind it
//     already resolved (a first token or an end), each of which resolved as
//     a miss: a first token behind the pointer is past the bound.
//   - E2E: likewise, with the end of the response for the first token.
//   - TPOT: completed requests over the bound, and ends without completing.
//
// With n measured requests, a metric misses once mustExceed(n, p) of them
// do. Sound when n is exact and no client timeout cancels a request after
// its first token (a TTFT once received then stands): Evaluate uses a
// tracker only then.
type tracker struct {
	slo     SLO
	need    int // mustExceed(n, p)
	n, seen int // measured requests; sent so far
	sendNs  []int64
	ftNs    []int64 // first token, report.NoTime until then
	ended   []bool
	on      [nMetrics]bool  // the metric is bounded
	boundNs [nMetrics]int64 // its bound, ns (a value misses when its ns exceed this)
	misses  [nMetrics]int   // resolved misses
	ptr     [nMetrics]int   // TTFT, E2E: requests sent more than the bound before now
	behind  [nMetrics]int   // of those, resolved (their misses are in misses)
}

// CertainMiss is the error a tracker stops a replay with: Metric's
// percentile is certain to exceed its bound, Missed of N measured requests
// being certain to miss it once Seen were sent (Need suffice).
type CertainMiss struct {
	Metric                string
	BoundMs, Percentile   float64
	Missed, Need, Seen, N int
}

func (e *CertainMiss) Error() string {
	return fmt.Sprintf("%s p%g is certain to exceed %g ms: %d of the %d requests miss it once %d were sent (%d suffice)",
		e.Metric, e.Percentile, e.BoundMs, e.Missed, e.N, e.Seen, e.Need)
}

func newTracker(slo SLO, n int) *tracker {
	t := &tracker{slo: slo, n: n, need: mustExceed(n, slo.Percentile),
		sendNs: make([]int64, n), ftNs: make([]int64, n), ended: make([]bool, n)}
	for i := range t.ftNs {
		t.ftNs[i] = report.NoTime
	}
	for m := range nMetrics {
		t.on[m] = slo.bound(m) > 0
		t.boundNs[m] = int64(math.Floor(slo.bound(m) * 1e6)) // ns > ⌊b⌋ ⟺ ns > b
	}
	return t
}

// errMoreRequests: the replay sent more measured requests than the offer
// counted (a bug in OfferedLoad's count).
var errMoreRequests = fmt.Errorf("search: the replay sent more requests than its offered load counts")

// resolvedFor reports whether request i's miss of metric m is settled (TTFT:
// a first token or an end; E2E: an end).
func (t *tracker) resolvedFor(m, i int) bool {
	return t.ended[i] || m == mTTFT && t.ftNs[i] != report.NoTime
}

// check moves the TTFT and E2E pointers to now and stops the replay once a
// bounded metric has enough misses.
func (t *tracker) check(now int64) error {
	for m := range nMetrics {
		if !t.on[m] {
			continue
		}
		b := t.boundNs[m]
		missed := t.misses[m]
		if m != mTPOT {
			for t.ptr[m] < t.seen && t.sendNs[t.ptr[m]] < now-b {
				if t.resolvedFor(m, t.ptr[m]) {
					t.behind[m]++
				}
				t.ptr[m]++
			}
			missed += t.ptr[m] - t.behind[m]
		}
		if missed >= t.need {
			return &CertainMiss{Metric: metricNames[m], BoundMs: t.slo.bound(m), Percentile: t.slo.Percentile,
				Missed: missed, Need: t.need, Seen: t.seen, N: t.n}
		}
	}
	return nil
}

// resolve settles request i for metric m as a miss or not; one behind the
// pointer leaves the pointer's count (it is a miss: counted in misses).
func (t *tracker) resolve(m, i int, miss bool) {
	if !t.on[m] {
		return
	}
	if m != mTPOT && i < t.ptr[m] {
		t.behind[m]++
	}
	if miss {
		t.misses[m]++
	}
}

// Sent implements replay.Watcher.
func (t *tracker) Sent(i int, rec *report.Record) error {
	if i != t.seen || i >= t.n {
		return errMoreRequests
	}
	t.sendNs[i], t.seen = rec.SendNs, i+1
	return t.check(rec.SendNs)
}

// FirstToken implements replay.Watcher.
func (t *tracker) FirstToken(i int, rec *report.Record) error {
	if i >= t.seen {
		return errMoreRequests
	}
	if !t.ended[i] && t.ftNs[i] == report.NoTime {
		t.resolve(mTTFT, i, rec.FirstTokenNs-rec.SendNs > t.boundNs[mTTFT])
	}
	t.ftNs[i] = rec.FirstTokenNs
	return t.check(rec.FirstTokenNs)
}

// Ended implements replay.Watcher.
func (t *tracker) Ended(i int, rec *report.Record) error {
	if i >= t.seen || t.ended[i] {
		return errMoreRequests
	}
	done := rec.Status == report.StatusCompleted
	if t.ftNs[i] == report.NoTime { // settled for TTFT now: a miss unless it completed (never, without output)
		t.resolve(mTTFT, i, !done)
	} else if !done && rec.FirstTokenNs-rec.SendNs <= t.boundNs[mTTFT] {
		t.misses[mTTFT]++ // a first token in time, then no completion: a miss after all
	}
	t.resolve(mE2E, i, !done || rec.EndNs-rec.SendNs > t.boundNs[mE2E])
	tpot, ok := rec.TPOT()
	t.resolve(mTPOT, i, !done || ok && tpot > t.slo.TPOTMs)
	t.ended[i] = true
	return t.check(rec.EndNs)
}

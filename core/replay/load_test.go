package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// sends64 is 64 sends 2^31 ns apart, the k-th seeing waiting(k) requests: the
// buckets end 2^31 ns wide (the narrowest power of two whose 64 buckets hold
// 63 × 2^31 ns), one send each. A pass ends between the first two sends.
func sends64(waiting func(k int) int) *loadStats {
	var l loadStats
	for k := 0; k < 64; k++ {
		l.sent(int64(k)<<31, 10, waiting(k))
		if k == 0 {
			l.passEnded(1 << 30)
		}
	}
	return &l
}

// A queue that grows by one request a send, sends 2^31 ns apart: the halves of
// the 63 × 2^31 ns window split at 31.5 × 2^31 ns, so buckets 0–30 (31 sends,
// mean queue 15) are the first half and 31–63 (33 sends, mean 47) the second;
// their mean sends are 15.5 and 47.5 × 2^31 ns, 32 × 2^31 ns = 68.719476736 s
// apart, so the growth is 32 / 68.719476736 = 1e9 / 2^31 = 0.4656612873 req/s,
// the rate at which this queue grew. Offered: 64 sends / 135.291469824 s.
func TestSaturationOfAQueueThatGrows(t *testing.T) {
	l := sends64(func(k int) int { return k })
	assert.Equal(t, int64(1)<<31, l.widthNs)
	s := &report.Summary{Completed: 10, DurationMs: 200_000, TotalInputTokens: 900, TotalOutputTokens: 100}
	s.WorkerUtilization = utilization([]float64{150_000, 199_000}, 200_000e6)
	sat := l.saturation(s)
	require.NotNil(t, sat)
	assert.InDelta(t, 15.0, sat.QueueFirstHalf, 1e-12)
	assert.InDelta(t, 47.0, sat.QueueSecondHalf, 1e-12)
	assert.InDelta(t, 1e9/float64(int64(1)<<31), sat.QueueGrowthRPS, 1e-12)
	assert.InDelta(t, 64/(63*float64(int64(1)<<31)/1e9), sat.OfferedRequestRateRPS, 1e-12)
	assert.InDelta(t, 640/(63*float64(int64(1)<<31)/1e9), sat.OfferedTokenRateTPS, 1e-9)
	assert.InDelta(t, 0.05, sat.ServedRequestRateRPS, 1e-15) // 10 / 200 s
	assert.InDelta(t, 5.0, sat.ServedTokenRateTPS, 1e-12)    // 1000 tokens / 200 s
	assert.InDelta(t, 0.995, sat.BusiestWorkerUtilization, 1e-15)
	assert.Equal(t, "saturated: offered 0.47 req/s (5 tok/s), served 0.05 req/s (5 tok/s); "+
		"the waiting queue grew 15.0 → 47.0 (+0.47 req/s); busiest worker 99.5 % busy", sat.Diagnosis)
}

// A queue that grows by less than 5 % of the offered rate is not saturation:
// waiting k/25 (0 for sends 0–24, 1 for 25–49, 2 for 50–63) is 6/31 in the
// first half and 47/33 in the second, a growth of (47/33 − 6/31) / 68.719476736
// s = 0.0179 req/s, under 5 % of 0.473 req/s offered (0.0237). Nor is a flat
// queue, or one grown by less than one request.
func TestSaturationNeedsTheQueueToGrowByFivePercentOfTheLoad(t *testing.T) {
	s := &report.Summary{Completed: 10, DurationMs: 200_000}
	l := sends64(func(k int) int { return k / 25 })
	assert.Nil(t, l.saturation(s))
	assert.Nil(t, sends64(func(int) int { return 7 }).saturation(s))
	// 0.9 more requests in the second half, over about a minute: below one request
	assert.Nil(t, sends64(func(k int) int { return 9 * k / 640 }).saturation(s))
	// the same growth as the first test's, 30 times faster than 5 %: saturated
	require.NotNil(t, sends64(func(k int) int { return k }).saturation(s))
	var one loadStats
	one.sent(5, 1, 100) // a single send has no window
	assert.Nil(t, one.saturation(s))
}

// The queue can shrink only when a pass ends: sends with no pass end in the
// first half of their window (the first at 0, the window 63 × 2^31 ns, its
// half 31.5 × 2^31 ns) show a queue that grows at the offered rate whatever
// the deployment serves, and are not judged; a pass end at the first send's
// own instant is not one after it.
func TestSaturationNeedsAPassEndInTheFirstHalf(t *testing.T) {
	s := &report.Summary{Completed: 10, DurationMs: 200_000}
	grows := func(pass int64) *loadStats {
		var l loadStats
		l.passEnded(0) // before any send: not counted
		for k := 0; k < 64; k++ {
			l.sent(int64(k)<<31, 10, k)
			l.passEnded(pass)
		}
		return &l
	}
	assert.Nil(t, grows(0).saturation(s))                   // at the first send only
	assert.Nil(t, grows(int64(63)<<30*2).saturation(s))     // at the last send
	assert.Nil(t, grows(int64(63)<<30).saturation(s))       // at the half exactly
	require.NotNil(t, grows(int64(63)<<30-1).saturation(s)) // 1 ns before it
	var none loadStats
	for k := 0; k < 64; k++ {
		none.sent(int64(k)<<31, 10, k)
	}
	assert.Nil(t, none.saturation(s))
}

// A burst: 200 requests of 100 prompt and 100 output tokens sent 5 µs apart
// (all within 1 ms) to the worked-example engine, whose first pass (request 0's
// prefill, 2 + 0.01 × 100 = 3 ms) ends after the last send: every send sees the
// queue it found plus the sends since, 199 → 0 requests waiting at the last,
// whatever the deployment serves, so the summary has no saturation. The same
// requests 5 ms apart (200 req/s for 1 s) against at most 4 running requests
// whose 100 tokens take 100 passes of at least 2.4 ms (under 17 req/s) do
// saturate it.
func TestABurstWithinOnePassIsNotSaturation(t *testing.T) {
	rows := func(gapMs float64) []traceRow {
		r := make([]traceRow, 200)
		for i := range r {
			r[i] = traceRow{float64(i) * gapMs, 100, 100, nil}
		}
		return r
	}
	burst := runYAML(t, linearEngineFor(1000)+traceTraffic(t, rows(0.005), "{mode: trace}"))
	require.Equal(t, 200, burst.Summary.Completed)
	assert.Nil(t, burst.Summary.Saturation)
	spread := runYAML(t, linearEngineFor(1000)+traceTraffic(t, rows(5), "{mode: trace}"))
	require.Equal(t, 200, spread.Summary.Completed)
	require.NotNil(t, spread.Summary.Saturation)
	assert.InDelta(t, 200*1000/995.0, spread.Summary.Saturation.OfferedRequestRateRPS, 1e-9)
	assert.Less(t, spread.Summary.Saturation.ServedRequestRateRPS, 17.0)
}

// Two workers busy 10 and 30 ms in a run of 40 ms: a quarter and three
// quarters of it; no span, no share.
func TestWorkerUtilizationIsTheShareOfTheRunInPasses(t *testing.T) {
	u := utilization([]float64{10, 30}, 40e6)
	assert.InDelta(t, 0.5, u.Mean, 1e-15)
	assert.InDelta(t, 0.25, u.Min, 1e-15)
	assert.InDelta(t, 0.75, u.Max, 1e-15)
	assert.Nil(t, utilization([]float64{10}, 0))
}

// Canceled requests keep the engine busy after the last completed response,
// where the measured window ends: one worker busy through a window of 10.5 ms
// runs passes for longer than it (busy / duration > 1, the "137 % busy" a
// share of the window would say); over the run's span it is at most 1.
func TestWorkerUtilizationCountsTheWholeRun(t *testing.T) {
	rows := []traceRow{{0, 1000, 2, []int{1, 2}}, {0.5, 1000, 2000, []int{3, 4}}, {1, 1000, 2000, []int{5, 6}}}
	rep := runYAML(t, linearEngineFor(1000)+traceTraffic(t, rows, "{mode: trace, request_timeout_ms: 40}"))
	s := rep.Summary
	require.Equal(t, 1, s.Completed)
	require.Equal(t, 2, s.Canceled)
	require.NotNil(t, s.WorkerUtilization)
	assert.Greater(t, rep.Metadata.WorkerBusyMs[0], s.DurationMs)
	assert.LessOrEqual(t, s.WorkerUtilization.Max, 1.0)
	assert.Greater(t, s.WorkerUtilization.Max, 0.9)
}

// Worked example 1 (docs/design.md): r1 sent at 0 and ended at 19.30, r2 sent
// at 10.0 and ended at 19.30: 19.3 + 9.3 = 28.6 ms in flight over a 19.3 ms
// window, 1.4819 requests on average, 2 at most; a trace of two requests
// keeps up.
func TestInFlightOfWorkedExampleOne(t *testing.T) {
	rep := runYAML(t, traceSpec(t, 1000, []traceRow{{0, 1000, 3, []int{1, 2}}, {10, 100, 2, []int{3}}}, ""))
	require.NotNil(t, rep.Summary.InFlight)
	assert.Equal(t, 2, rep.Summary.InFlight.Peak)
	assert.InDelta(t, 28.6/19.3, *rep.Summary.InFlight.Mean, 1e-12)
	assert.Nil(t, rep.Summary.Saturation)
}

// The linear engine takes about 14 ms for a 1000-token prompt (two 512-token
// chunks, 2 ms each plus 0.01 ms a token) and runs one prompt at a time, so it
// serves at most about 70 of them a second: sent at 200 a second its queue
// grows, at 20 a second it does not, and a closed loop holds its queue at its
// clients' count.
func TestReplaySaysWhenTheDeploymentCannotKeepUp(t *testing.T) {
	load := func(l string) string {
		return linearEngineFor(1000) + `
traffic:
  source: {type: synthetic, num_requests: 400, isl: 1000, osl: 2}
  load: ` + l + "\n"
	}
	over := runYAML(t, load("{mode: rate, rate_rps: 200, arrival: constant}")).Summary
	require.NotNil(t, over.Saturation)
	sat := over.Saturation
	assert.InDelta(t, 200.0*400/399, sat.OfferedRequestRateRPS, 1e-9) // 400 sends over 399 × 5 ms
	assert.Less(t, sat.ServedRequestRateRPS, 75.0)
	assert.Greater(t, sat.QueueSecondHalf, sat.QueueFirstHalf+100)
	// the queue grows at what is offered and not served: 200 − ~70 req/s
	assert.InDelta(t, sat.OfferedRequestRateRPS-sat.ServedRequestRateRPS, sat.QueueGrowthRPS, 20)
	assert.InDelta(t, 1.0, sat.BusiestWorkerUtilization, 0.01)
	assert.Equal(t, over.WorkerUtilization.Max, sat.BusiestWorkerUtilization)
	assert.Greater(t, over.InFlight.Peak, 200)

	under := runYAML(t, load("{mode: rate, rate_rps: 20, arrival: constant}")).Summary
	assert.Nil(t, under.Saturation)
	assert.Equal(t, 1, under.InFlight.Peak) // each done in ~16 ms, sent 50 ms apart
	closed := runYAML(t, load("{mode: concurrency, concurrency: 16}")).Summary
	assert.Nil(t, closed.Saturation)
	assert.Equal(t, 16, closed.InFlight.Peak)
}

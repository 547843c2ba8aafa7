package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rateCapYAML is 4 requests of 100 prompt tokens and 2 output tokens, each
// its own random prompt, on the linear engine (pass ms = 2.0 + 0.01 × prompt
// tokens + 0.1 × decodes), sent at a constant rate with load options extra.
func rateCapYAML(extra string) string {
	return linearEngineFor(100) + `
traffic:
  source: {type: synthetic, num_requests: 4, isl: 100, osl: 2}
  load: {mode: rate, arrival: constant` + extra + `}
`
}

// A rate so high that every request's time has come at once (1 ns apart)
// behind a cap of 2 sends as a closed loop of 2 does: the third and fourth
// wait for a slot and go when a response is acted on.
//
//	0 ns: r0 sent, pass [0, 3.0] ms prefills it (2 + 1.0); r1 at 1 ns waits
//	      for that pass; r2's time (2 ns) comes with 2 in flight: it waits.
//	[3.0, 6.1]: r0 decodes, r1 prefills (2 + 1.0 + 0.1): r0 ends at 6.1,
//	      r1's first token. r2 sent at 6.1; r3's time is 3 ns + the wait
//	      (6.1 ms − 2 ns): 6.1 ms + 1 ns, with r1 and r2 in flight: it waits.
//	[6.1, 9.2]: r1 decodes, r2 prefills: r1 ends at 9.2, r3 sent then.
//	[9.2, 12.3]: r2 decodes, r3 prefills: r2 ends; [12.3, 14.4]: r3 decodes.
//
// TTFT counts from the send, as AIPerf's does (its request starts at the
// HTTP send, after the slot): r2's is 9.2 − 6.1 = 3.1, not from 2 ns.
func TestRateCapAllAtOnce(t *testing.T) {
	rep := runYAML(t, rateCapYAML(", rate_rps: 1e9, max_concurrency: 2"))
	require.Len(t, rep.Records, 4)
	want := []struct{ sendMs, ttft, e2e float64 }{
		{0, 3.0, 6.1}, {1e-6, 6.1 - 1e-6, 9.2 - 1e-6}, {6.1, 3.1, 6.2}, {9.2, 3.1, 5.2}}
	for i, w := range want {
		r := rep.Records[i]
		assert.InDelta(t, w.sendMs, msOf(r.SendNs), 1e-9, "record %d send", i)
		ttft, _ := r.TTFT()
		assert.InDelta(t, w.ttft, ttft, 1e-9, "record %d ttft", i)
		assert.InDelta(t, w.e2e, r.E2E(), 1e-9, "record %d e2e", i)
	}
}

// A cap of 1 with responses (5.1 ms: [0, 3.0] prefill, [3.0, 5.1] decode)
// longer than the gaps (4 ms): every request waits for the one before it,
// a closed loop of 1, sends at 0, 5.1, 10.2, 15.3 ms. The gaps count from
// each send: r2's time is 8 ms + 1.1 ms late (r1 waited 4 → 5.1) = 9.1,
// before r1 ends at 10.2, so it waits again.
func TestRateCapOfOne(t *testing.T) {
	sentEvery(t, rateCapYAML(", rate_rps: 250, max_concurrency: 1"), 5.1)
}

// sentEvery runs yml and checks its 4 requests, each of 5.1 ms, were sent
// gapMs apart from 0.
func sentEvery(t *testing.T, yml string, gapMs float64) {
	t.Helper()
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	for i, r := range rep.Records {
		assert.InDelta(t, gapMs*float64(i), msOf(r.SendNs), 1e-9, "record %d send", i)
		assert.InDelta(t, 5.1, r.E2E(), 1e-9, "record %d e2e", i)
	}
}

// The same with capped_arrival skip (AIPerf from 0.5.0): the arrivals keep
// their 4 ms schedule and one that finds the slot taken passes unused. r0 at
// 0 ends at 5.1; the arrival at 4 passes; r1 goes at 8, ends at 13.1; the
// one at 12 passes; r2 at 16, r3 at 24.
func TestRateCapSkips(t *testing.T) {
	sentEvery(t, rateCapYAML(", rate_rps: 250, max_concurrency: 1, capped_arrival: skip"), 8)
	// a duration that ends before the next free arrival sends nothing more:
	// 10 ms lets r0 (0) and r1 (8) go; r2's arrival at 12 passes, 16 is past it
	rep := runYAML(t, rateCapYAML(", rate_rps: 250, max_concurrency: 1, capped_arrival: skip}\n  stop: {max_duration_s: 0.010"))
	assert.Len(t, rep.Records, 2)
}

// A rate low enough that the cap never binds (a request every 100 ms, each
// done in 5.1 ms, cap 2) is the same open loop as without the cap: the
// same records and summary.
func TestRateCapNeverBinding(t *testing.T) {
	capped := runYAML(t, rateCapYAML(", rate_rps: 10, max_concurrency: 2"))
	open := runYAML(t, rateCapYAML(", rate_rps: 10"))
	require.Len(t, capped.Records, 4)
	assert.Equal(t, open.Records, capped.Records)
	assert.Equal(t, open.Summary, capped.Summary)
	for i, r := range capped.Records {
		assert.InDelta(t, 100*float64(i), msOf(r.SendNs), 1e-9, "record %d send", i)
	}
}

// The cap takes a synthetic source only; AIPerf's --request-rate with
// --concurrency makes it.
func TestRateCapRefusals(t *testing.T) {
	configErrorOf(t, linearEngineFor(100)+`
traffic:
  source: {type: sessions, num_sessions: 2, turns: 2, isl: 10, osl: 2}
  load: {mode: rate, rate_rps: 5, max_concurrency: 2}
`, "traffic.load.max_concurrency", "synthetic source")
	configErrorOf(t, rateCapYAML(", rate_rps: 5, capped_arrival: skip"), "traffic.load.capped_arrival", "max_concurrency")
}

// capped_arrival queue (vLLM's benchmark) against wait (AIPerf before 0.5.0),
// 6 one-token requests of 100 prompt tokens arriving every 1.25 ms behind a
// cap of 2 (a pass of k prompts lasts 2 + k ms, and ends them):
//
//	both: r0 at 0, [0, 3.0]; r1 at 1.25; r2's arrival at 2.5 finds 2 in
//	      flight; r0 ends at 3.0 and r2 goes then; [3.0, 7.0] prefills r1, r2.
//	queue: r3 (3.75), r4 (5.0), r5 (6.25) queue; r1 and r2 end at 7.0 and
//	      r3, r4 go then, [7.0, 11.0]; r5 at 11.0. Sends 0, 1.25, 3, 7, 7, 11.
//	wait: the gaps count from the sends: r3 is due 3.75 + 0.5 = 4.25, waits
//	      for 7.0 (2.75 more, 3.25 late in all); r4 due 5.0 + 3.25 = 8.25 finds
//	      a slot; [7.0, 10.0] r3, [10.0, 13.0] r4; r5 due 9.5 waits for r3's
//	      end at 10.0. Sends 0, 1.25, 3, 7, 8.25, 10.
func TestRateCapQueueAndWait(t *testing.T) {
	yml := linearEngineFor(100) + `
traffic:
  source: {type: synthetic, num_requests: 6, isl: 100, osl: 1}
  load: {mode: rate, arrival: constant, rate_rps: 800, max_concurrency: 2, capped_arrival: %s}
`
	for mode, sends := range map[string][]float64{"queue": {0, 1.25, 3, 7, 7, 11}, "wait": {0, 1.25, 3, 7, 8.25, 10}} {
		rep := runYAML(t, fmt.Sprintf(yml, mode))
		require.Len(t, rep.Records, 6, mode)
		for i, r := range rep.Records {
			assert.InDelta(t, sends[i], msOf(r.SendNs), 1e-9, "%s: record %d send", mode, i)
		}
	}
}

// span_s rescales the arrival times so that the last of num_requests lands
// at it (vLLM's get_request from 0.10.0): constant 4 ms gaps (0, 4, 8, 12)
// over a span of 24 ms are × 24/12: 0, 8, 16, 24; Poisson times t_k become
// t_k × 100 ms / t_4, the last exactly at 100 ms.
func TestRateSpan(t *testing.T) {
	sentEvery(t, rateCapYAML(", rate_rps: 250, span_s: 0.024"), 8)
	poisson := func(extra string) []int64 {
		rep := runYAML(t, linearEngineFor(100)+`
traffic:
  source: {type: synthetic, num_requests: 4, isl: 100, osl: 2}
  load: {mode: rate, arrival: poisson, rate_rps: 2`+extra+`}
`)
		require.Len(t, rep.Records, 4)
		var sends []int64
		for _, r := range rep.Records {
			sends = append(sends, r.SendNs)
		}
		return sends
	}
	drawn, scaled := poisson(""), poisson(", span_s: 0.1")
	for i := range drawn {
		assert.InDelta(t, float64(drawn[i])*1e8/float64(drawn[3]), float64(scaled[i]), 0.5, "send %d", i)
	}
	assert.Equal(t, int64(1e8), scaled[3])
}

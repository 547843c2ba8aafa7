package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f64p(v float64) *float64 { return &v }

// The completed requests of worked example 1 plus the P/D one (golden_test.go):
//
//	r0 ttft 14.0  tpot 2.65  e2e 19.3
//	r1 ttft  7.1  tpot 2.20  e2e  9.3
//	r3 ttft 18.3  tpot 2.10  e2e 22.5
//	r4 ttft  5.0  (1 output token: no tpot) e2e 5.0
//
// Under ttft ≤ 15 ms and tpot ≤ 2.5 ms: r0 misses the TPOT bound, r3 the
// TTFT bound, r4 has no TPOT and so misses it too (AIPerf: a record without
// the SLO's metric is not good); r1 alone is good: 1 of 4 completed, over
// the 22.5 ms duration = 1 / 0.0225 s = 44.4 req/s.
func TestGoodputUnderAnSLO(t *testing.T) {
	recs := []Record{
		{Status: StatusCompleted, OutputTokens: 3, FirstTokenNs: 14_000_000, SecondTokenNs: 17_100_000, EndNs: 19_300_000},
		{Status: StatusCompleted, OutputTokens: 2, SendNs: 10_000_000, FirstTokenNs: 17_100_000, SecondTokenNs: 19_300_000, EndNs: 19_300_000},
		{Status: StatusCompleted, OutputTokens: 3, FirstTokenNs: 18_300_000, SecondTokenNs: 20_400_000, EndNs: 22_500_000},
		{Status: StatusCompleted, OutputTokens: 1, FirstTokenNs: 5_000_000, SecondTokenNs: NoTime, EndNs: 5_000_000},
		{Status: StatusRejected, FirstTokenNs: NoTime, SecondTokenNs: NoTime, EndNs: 1_000_000},
	}
	var acc Accumulator
	acc.SetSLO(SLO{TTFTMs: f64p(15), TPOTMs: f64p(2.5)})
	for i := range recs {
		acc.Add(&recs[i])
	}
	s := acc.Close(1)
	require.NotNil(t, s.Goodput)
	assert.Equal(t, 1, s.Goodput.GoodRequests)
	assert.InDelta(t, 1/0.0225, *s.Goodput.GoodputRPS, 1e-9)
	assert.InDelta(t, 0.25, *s.Goodput.SLOAttainment, 1e-12)
	assert.Nil(t, s.Goodput.SLO.E2EMs)
	// TTST over the three requests with two tokens: 3.1, 2.2, 2.1 ms.
	require.NotNil(t, s.TTST)
	assert.InDelta(t, (3.1+2.2+2.1)/3, s.TTST.Mean, 1e-12)
	assert.InDelta(t, 2.1, s.TTST.Min, 1e-12)
	// Per user: 1000 / tpot for the same three: 377.36, 454.55, 476.19 tokens/s.
	assert.InDelta(t, (1000/2.65+1000/2.2+1000/2.1)/3, s.OutputTPSPerUser.Mean, 1e-9)
	// OSL over the 4 completed: 3, 2, 3, 1.
	assert.InDelta(t, 2.25, s.OutputSequenceLength.Mean, 1e-12)
	assert.Equal(t, 1.0, s.OutputSequenceLength.Min)

	var plain Accumulator // without an SLO there is no goodput block
	plain.Add(&recs[0])
	assert.Nil(t, plain.Close(1).Goodput)

	var ttft Accumulator // a TTFT bound alone: r4 has a TTFT and meets it
	ttft.SetSLO(SLO{TTFTMs: f64p(15)})
	for i := range recs {
		ttft.Add(&recs[i])
	}
	assert.Equal(t, 3, ttft.Close(1).Goodput.GoodRequests)

	var e2e Accumulator // an E2E bound alone: 19.3 and 9.3 ≤ 20, 22.5 is not, 5.0 is
	e2e.SetSLO(SLO{E2EMs: f64p(20)})
	for i := range recs {
		e2e.Add(&recs[i])
	}
	assert.Equal(t, 3, e2e.Close(1).Goodput.GoodRequests)

	// vLLM's rule: r4's one token has a TPOT of 0 for the SLO, so it meets
	// the 2.5 ms bound and its 5.0 ms TTFT the 15 ms one: r1 and r4 are good
	var vllm Accumulator
	vllm.SetSLO(SLO{TTFTMs: f64p(15), TPOTMs: f64p(2.5)})
	vllm.SetVLLMGoodput()
	for i := range recs {
		vllm.Add(&recs[i])
	}
	assert.Equal(t, 2, vllm.Close(1).Goodput.GoodRequests)
}

// The measured window as AIPerf measures it: only completed requests bound it
// (AIPerf's valid records). A 100/2-token request sent at 0 that ends at
// 4.2 ms, beside one canceled by a 10 ms timeout and one rejected at 12 ms:
// the window is 4.2 ms and the throughput 1 / 0.0042 s = 238.1 req/s (the
// canceled and rejected ones are errors, outside it). Every request bounds
// vLLM bench serve's window instead: 0 → 12 ms, 83.3 req/s.
func TestWindowRules(t *testing.T) {
	recs := []Record{
		{Status: StatusCanceled, SendNs: 0, FirstTokenNs: 3_000_000, SecondTokenNs: 4_200_000, OutputTokens: 6, EndNs: 10_000_000},
		{Status: StatusCompleted, SendNs: 0, FirstTokenNs: 3_000_000, SecondTokenNs: 4_200_000, InputTokens: 100, OutputTokens: 2, EndNs: 4_200_000},
		{Status: StatusRejected, SendNs: 12_000_000, FirstTokenNs: NoTime, SecondTokenNs: NoTime, EndNs: 12_000_000},
	}
	var aiperf Accumulator
	for i := range recs {
		aiperf.Add(&recs[i])
	}
	s := aiperf.Close(2)
	assert.InDelta(t, 4.2, s.DurationMs, 1e-12)
	assert.InDelta(t, 1/0.0042, *s.RequestThroughputRPS, 1e-9)
	assert.InDelta(t, 2/0.0042, *s.OutputTokenThroughputTPS, 1e-9)
	assert.InDelta(t, 2*0.0042/3600, s.GPUHours, 1e-15)

	var every Accumulator
	every.SetWindowRule(EveryRequestWindow)
	for i := range recs {
		every.Add(&recs[i])
	}
	s = every.Close(2)
	assert.InDelta(t, 12.0, s.DurationMs, 1e-12)
	assert.InDelta(t, 1/0.012, *s.RequestThroughputRPS, 1e-9)

	// The first request sent failed: the window starts at the first completed
	// request's send (5 ms), not at 0.
	late := []Record{
		{Status: StatusFailed, SendNs: 0, FirstTokenNs: NoTime, SecondTokenNs: NoTime, EndNs: 2_000_000},
		{Status: StatusCompleted, SendNs: 5_000_000, FirstTokenNs: 6_000_000, SecondTokenNs: NoTime, OutputTokens: 1, EndNs: 6_000_000},
	}
	var a Accumulator
	for i := range late {
		a.Add(&late[i])
	}
	assert.Equal(t, int64(5_000_000), a.FirstSendNs())
	assert.InDelta(t, 1.0, a.Close(1).DurationMs, 1e-12)

	// Nothing completed: no window, no throughput.
	var none Accumulator
	none.Add(&late[0])
	s = none.Close(1)
	assert.Equal(t, 0.0, s.DurationMs)
	assert.Nil(t, s.RequestThroughputRPS)
	assert.Equal(t, 0.0, s.GPUHours)
}

// A load generator whose clock starts before its first send (vLLM bench
// serve's benchmark_start_time, taken before the first arrival's delay):
// the phase starts at 1 ms, the first request goes at 3 ms and ends at 7 ms,
// a second is rejected at 10 ms. Every request bounds the window, from the
// start: 1 → 10 ms = 9 ms, 1 / 0.009 = 111.1 req/s. A start later than the
// first send does not move the window (it starts at that send), and with no
// record there is no window.
func TestWindowStart(t *testing.T) {
	recs := []Record{
		{Status: StatusCompleted, SendNs: 3_000_000, FirstTokenNs: 5_000_000, SecondTokenNs: 6_000_000, InputTokens: 10, OutputTokens: 3, EndNs: 7_000_000},
		{Status: StatusRejected, SendNs: 10_000_000, FirstTokenNs: NoTime, SecondTokenNs: NoTime, EndNs: 10_000_000},
	}
	var a Accumulator
	a.SetWindowRule(EveryRequestWindow)
	a.SetWindowStart(1_000_000)
	assert.Zero(t, a.WindowNs())
	for i := range recs {
		a.Add(&recs[i])
	}
	assert.Equal(t, int64(1_000_000), a.FirstSendNs())
	s := a.Close(1)
	assert.InDelta(t, 9.0, s.DurationMs, 1e-12)
	assert.InDelta(t, 1/0.009, *s.RequestThroughputRPS, 1e-9)

	var later Accumulator
	later.SetWindowStart(4_000_000)
	later.Add(&recs[0])
	assert.Equal(t, int64(3_000_000), later.FirstSendNs())
	assert.InDelta(t, 4.0, later.Close(1).DurationMs, 1e-12)
}

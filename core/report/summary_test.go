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
// TTFT bound, r1 and r4 are good (r4 has no TPOT to miss): 2 good of 4
// completed, over the 22.5 ms duration = 2 / 0.0225 s = 88.9 req/s.
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
	assert.Equal(t, 2, s.Goodput.GoodRequests)
	assert.InDelta(t, 2/0.0225, *s.Goodput.GoodputRPS, 1e-9)
	assert.InDelta(t, 0.5, *s.Goodput.SLOAttainment, 1e-12)
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

	var e2e Accumulator // an E2E bound alone: 19.3 and 9.3 ≤ 20, 22.5 is not, 5.0 is
	e2e.SetSLO(SLO{E2EMs: f64p(20)})
	for i := range recs {
		e2e.Add(&recs[i])
	}
	assert.Equal(t, 3, e2e.Close(1).Goodput.GoodRequests)
}

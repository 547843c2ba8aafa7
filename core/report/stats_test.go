package report

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values from numpy 2.x: np.percentile([15, 20, 35, 40, 50], q) with the default
// linear method: q=50 → 35.0, q=90 → 46.0 (v = 3.6: 40 + 0.6·10),
// q=95 → 48.0, q=99 → 49.6 (v = 3.96).
func TestPercentileMatchesNumpyLinear(t *testing.T) {
	xs := []float64{15, 20, 35, 40, 50}
	assert.Equal(t, 35.0, Percentile(xs, 50))
	assert.InDelta(t, 46.0, Percentile(xs, 90), 1e-12)
	assert.InDelta(t, 48.0, Percentile(xs, 95), 1e-12)
	assert.InDelta(t, 49.6, Percentile(xs, 99), 1e-12)
	assert.Equal(t, 7.0, Percentile([]float64{7}, 99))
}

func TestComputeStats(t *testing.T) {
	assert.Nil(t, Compute(nil))
	s := Compute([]float64{4, 2, 6, 8}) // unsorted on purpose
	require.NotNil(t, s)
	assert.Equal(t, 5.0, s.Mean)
	assert.InDelta(t, 2.2360679775, s.Std, 1e-9) // sqrt((9+1+1+9)/4)
	assert.Equal(t, 2.0, s.Min)
	assert.Equal(t, 8.0, s.Max)
	assert.Equal(t, 5.0, s.P50) // v = 1.5: 4 + 0.5·2
}

// TPOT is null below two output tokens; TTFT is null without a token.
func TestRecordUndefinedMetrics(t *testing.T) {
	r := Record{SendNs: 0, FirstTokenNs: 5e6, EndNs: 5e6, OutputTokens: 1}
	_, ok := r.TPOT()
	assert.False(t, ok)
	v, ok := r.TTFT()
	assert.True(t, ok)
	assert.Equal(t, 5.0, v)
	r = Record{FirstTokenNs: NoTime, EndNs: 3e6}
	_, ok = r.TTFT()
	assert.False(t, ok)
	b := AppendRecordJSON(nil, &Record{RequestID: 1, Status: StatusRejected, Reason: "x", FirstTokenNs: NoTime, EndNs: 2500000, SessionID: -1})
	assert.Contains(t, string(b), `"first_token_ms":null,"end_ms":2.5,`)
	assert.Contains(t, string(b), `"ttft_ms":null,"e2e_ms":2.5,"tpot_ms":null`)
}

// Duration runs to the last completed response (a rejected request ending
// later is outside AIPerf's window); throughputs divide by it; zero duration
// gives null rates, never NaN.
func TestAccumulatorClose(t *testing.T) {
	var a Accumulator
	assert.Nil(t, a.Close(2).RequestThroughputRPS)
	a.AddGap(1e8)
	a.AddGap(1e8)
	a.Add(&Record{Status: StatusCompleted, FirstTokenNs: 1e9, EndNs: 2e9, OutputTokens: 11, InputTokens: 5})
	a.Add(&Record{Status: StatusRejected, FirstTokenNs: NoTime, EndNs: 4e9})
	s := a.Close(8)
	assert.Equal(t, 2000.0, s.DurationMs)
	assert.Equal(t, 0.5, *s.RequestThroughputRPS)        // 1 / 2 s
	assert.Equal(t, 11/2.0, *s.OutputTokenThroughputTPS) // 11 tokens / 2 s
	assert.InDelta(t, 8*2/3600.0, s.GPUHours, 1e-15)
	assert.Equal(t, 1, s.Rejected)
	assert.Equal(t, 100.0, s.ITL.Mean)
}

// The window starts at the first request sent, not at the replay's start
// (AIPerf's benchmark duration: max response − min request timestamp): sends
// at 1.5 s and 2 s, last response received at 4 s → 2.5 s; 2 completed / 2.5 s
// = 0.8 req/s; 3 GPUs × 2.5 s.
func TestAccumulatorWindowFromFirstSend(t *testing.T) {
	var a Accumulator
	a.Add(&Record{Status: StatusCompleted, SendNs: 2e9, FirstTokenNs: 3e9, EndNs: 4e9, OutputTokens: 1})
	a.Add(&Record{Status: StatusCompleted, SendNs: 1.5e9, FirstTokenNs: 2e9, EndNs: 3e9, OutputTokens: 1})
	s := a.Close(3)
	assert.Equal(t, 2500.0, s.DurationMs)
	assert.Equal(t, 0.8, *s.RequestThroughputRPS)
	assert.InDelta(t, 3*2.5/3600, s.GPUHours, 1e-15)
	assert.Equal(t, int64(1.5e9), a.FirstSendNs())
}

// The pooled gap statistics equal Compute over the expanded list (runs, repeats
// and interleavings of values).
func TestGapPoolMatchesExpandedList(t *testing.T) {
	var p gapPool
	var flat []float64
	gaps := []int64{5e6, 5e6, 5e6, 2e6, 9e6, 5e6, 2e6, 2e6, 7_123_457, 1e6, 5e6}
	for rep := 0; rep < 3; rep++ {
		for _, g := range gaps {
			p.add(g, 1)
			flat = append(flat, ms(g))
		}
		// a run of 4 equal gaps in one call (a pass's steady requests) counts 4
		p.add(3e6, 4)
		flat = append(flat, 3, 3, 3, 3)
	}
	got, want := p.stats(), Compute(flat)
	assert.InDelta(t, want.Mean, got.Mean, 1e-12)
	assert.InDelta(t, want.Std, got.Std, 1e-12)
	for _, pair := range [][2]float64{{want.P50, got.P50}, {want.P90, got.P90}, {want.P95, got.P95}, {want.P99, got.P99},
		{want.Min, got.Min}, {want.Max, got.Max}} {
		assert.Equal(t, pair[0], pair[1])
	}
	var empty gapPool
	assert.Nil(t, empty.stats())
}

// A pool long enough for the radix sort (whose buffer then holds the values
// and counts) still equals Compute over the expanded list, and a second call
// gives the same Stats.
func TestGapPoolRadixPathMatchesExpandedList(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var p gapPool
	var flat []float64
	for range 5 * radixMin {
		g, n := int64(1e6+rng.IntN(3000)*1000), int64(1+rng.IntN(3)) // repeats: ~3,000 distinct gaps
		p.add(g, n)
		for range n {
			flat = append(flat, ms(g))
		}
	}
	require.GreaterOrEqual(t, len(p.runs), radixMin)
	got, want := p.stats(), Compute(flat)
	assert.InDelta(t, want.Mean, got.Mean, 1e-9)
	assert.InDelta(t, want.Std, got.Std, 1e-9)
	for _, pair := range [][2]float64{{want.P50, got.P50}, {want.P90, got.P90}, {want.P95, got.P95}, {want.P99, got.P99},
		{want.Min, got.Min}, {want.Max, got.Max}} {
		assert.Equal(t, pair[0], pair[1])
	}
	assert.Equal(t, got, p.stats())
}

// Runs too wide for one word (a gap of 2^40 ns or more, a count of 2^24 or
// more) are pooled apart and counted with the others. Two runs of 2^24 gaps
// of 1 and 3 ms: mean 2, std 1 (population), median between them (2), p90
// and max 3, min 1; with a gap of 2^40 ns (1,099,511.627776 ms) added once,
// the max is that gap.
func TestGapPoolWideRuns(t *testing.T) {
	var p gapPool
	p.add(1e6, 1<<24)
	p.add(3e6, 1<<24)
	require.Len(t, p.wide, 1) // the first run, flushed
	s := p.stats()
	assert.Equal(t, 2.0, s.Mean)
	assert.Equal(t, 1.0, s.Std)
	assert.Equal(t, []float64{1, 2, 3, 3}, []float64{s.Min, s.P50, s.P90, s.Max})

	var q gapPool
	var flat []float64
	for i := range 50 {
		q.add(int64(1e6+i%7*1e5), 2)
		flat = append(flat, ms(int64(1e6+i%7*1e5)), ms(int64(1e6+i%7*1e5)))
	}
	q.add(1<<40, 1)
	q.add(1e6, 1)
	flat = append(flat, ms(1<<40), 1)
	require.Len(t, q.wide, 1)
	got, want := q.stats(), Compute(flat)
	assert.Equal(t, 1_099_511.627776, got.Max)
	assert.InDelta(t, want.Mean, got.Mean, 1e-9)
	assert.InDelta(t, want.Std, got.Std, 1e-9)
	assert.Equal(t, []float64{want.Min, want.P50, want.P90, want.P99}, []float64{got.Min, got.P50, got.P90, got.P99})
	assert.Same(t, got, q.stats())
}

// The statistics are computed once: a gap pooled after them would be lost,
// so it is refused.
func TestGapPoolRefusesGapsAfterStats(t *testing.T) {
	var p gapPool
	p.add(1e6, 3)
	require.NotNil(t, p.stats())
	p.add(2e6, 1)
	assert.Panics(t, func() { p.stats() })
}

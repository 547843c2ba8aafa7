package workload

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// take returns the first n send times of a, failing if it ends early.
func take(t *testing.T, a Arrival, n int) []int64 {
	t.Helper()
	out := make([]int64, n)
	for i := range out {
		v, ok := a.Next()
		require.True(t, ok, "arrival %d", i)
		out[i] = v
	}
	return out
}

// gapStats returns the mean and coefficient of variation of consecutive gaps
// of send times that start from 0 (the first gap is times[0] − 0).
func gapStats(times []int64) (mean, cv float64) {
	var sum, sumSq float64
	prev := int64(0)
	for _, v := range times {
		g := float64(v - prev)
		sum += g
		sumSq += g * g
		prev = v
	}
	n := float64(len(times))
	mean = sum / n
	return mean, math.Sqrt(sumSq/n-mean*mean) / mean
}

func TestConstant_ExactGaps(t *testing.T) {
	cases := []struct {
		name string
		rate float64
		want []int64
	}{
		// 10⁹/4 = 250,000,000 ns
		{"4 rps", 4, []int64{0, 250_000_000, 500_000_000, 750_000_000}},
		// round(k·10⁹/3): 333,333,333.3 → …333; 666,666,666.7 → …667; 10⁹
		{"3 rps, no drift", 3, []int64{0, 333_333_333, 666_666_667, 1_000_000_000, 1_333_333_333}},
		// 10⁹/0.5 = 2·10⁹ ns
		{"0.5 rps", 0.5, []int64{0, 2_000_000_000, 4_000_000_000}},
		// 10⁹/10⁹ = 1 ns
		{"1e9 rps", 1e9, []int64{0, 1, 2, 3}},
		// period 1/3 ns: round(0.33)=0, round(0.67)=1, round(1)=1, round(1.33)=1, round(1.67)=2
		{"3e9 rps, sub-ns period", 3e9, []int64{0, 0, 1, 1, 1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConstant(tc.rate)
			require.NoError(t, err)
			assert.Equal(t, tc.want, take(t, c, len(tc.want)))
		})
	}
}

func TestConstant_OverflowEnds(t *testing.T) {
	// 10⁹ / 1e-10 = 1e19 ns > MaxInt64 ≈ 9.22e18: one arrival at 0, then the end.
	c, err := NewConstant(1e-10)
	require.NoError(t, err)
	v, ok := c.Next()
	assert.True(t, ok)
	assert.Zero(t, v)
	_, ok = c.Next()
	assert.False(t, ok)
	_, ok = c.Next()
	assert.False(t, ok, "stays ended")

	// 10⁹ / 2.5e-10 = 4e18 ns: 0, 4e18, 8e18, then 1.2e19 would overflow.
	c, err = NewConstant(2.5e-10)
	require.NoError(t, err)
	got := take(t, c, 3)
	assert.Zero(t, got[0])
	assert.InEpsilon(t, 4e18, float64(got[1]), 1e-12)
	assert.InEpsilon(t, 8e18, float64(got[2]), 1e-12)
	_, ok = c.Next()
	assert.False(t, ok)
}

func TestPoisson_FirstArrivalIsOneGap(t *testing.T) {
	// Two generators with the same seed: the first send time is the first
	// exponential draw scaled by the mean gap 10⁹/100 = 10⁷ ns.
	p, err := NewPoisson(100, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	twin := rand.New(rand.NewPCG(1, 2))
	e1, e2 := twin.ExpFloat64(), twin.ExpFloat64()
	g1, g2 := int64(math.Round(e1*1e7)), int64(math.Round(e2*1e7))
	assert.Equal(t, []int64{g1, g1 + g2}, take(t, p, 2))
}

func TestPoisson_MeanGap(t *testing.T) {
	// rate 100 rps → mean gap 10⁷ ns, cv 1. With n = 10⁵ gaps the standard
	// error of the mean is 1/√n ≈ 0.32 %, so 1.5 % is ≈ 5σ.
	p, err := NewPoisson(100, NewStreams(1).Get(StreamArrival))
	require.NoError(t, err)
	times := take(t, p, 100_000)
	mean, cv := gapStats(times)
	assert.InEpsilon(t, 1e7, mean, 0.015)
	assert.InEpsilon(t, 1.0, cv, 0.02)
	assertNonDecreasing(t, times)
}

func TestGamma_MeanAndCV(t *testing.T) {
	cases := []struct {
		name    string
		cv      float64
		tolMean float64
		tolCV   float64
	}{
		// shape k = 1/0.25 = 4 (Marsaglia–Tsang directly); std err of the mean 0.5/√n ≈ 0.16 %
		{"cv 0.5 (shape 4)", 0.5, 0.01, 0.03},
		// k = 1: exponential gaps
		{"cv 1 (shape 1)", 1, 0.015, 0.03},
		// k = 0.25 (the U^(1/k) boost); std err of the mean 2/√n ≈ 0.63 %;
		// the gap kurtosis (excess 6/k = 24) makes the cv estimate noisy
		{"cv 2 (shape 0.25)", 2, 0.03, 0.06},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// rate 100 rps → mean gap 10⁷ ns, std cv·10⁷ ns
			g, err := NewGamma(100, tc.cv, NewStreams(1).Get(StreamArrival))
			require.NoError(t, err)
			times := take(t, g, 100_000)
			mean, cv := gapStats(times)
			assert.InEpsilon(t, 1e7, mean, tc.tolMean)
			assert.InEpsilon(t, tc.cv, cv, tc.tolCV)
			assertNonDecreasing(t, times)
		})
	}
}

func TestGamma_MatchesPoissonMomentsAtCV1(t *testing.T) {
	// Property: Gamma(k=1) gaps are exponential; both processes with the same
	// rate have mean gaps within 2 % of each other over 10⁵ gaps.
	g, err := NewGamma(50, 1, NewStreams(9).Get(StreamArrival))
	require.NoError(t, err)
	p, err := NewPoisson(50, NewStreams(10).Get(StreamArrival))
	require.NoError(t, err)
	mg, _ := gapStats(take(t, g, 100_000))
	mp, _ := gapStats(take(t, p, 100_000))
	assert.InEpsilon(t, mp, mg, 0.02)
}

func assertNonDecreasing(t *testing.T, times []int64) {
	t.Helper()
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			t.Fatalf("send time %d (%d) < previous (%d)", i, times[i], times[i-1])
		}
	}
}

func TestArrival_OverflowEnds(t *testing.T) {
	// rate 1e-12 rps → mean gap 10²¹ ns, beyond MaxInt64: the first draw ends
	// the process (unless it is below 9.2e-3 of the mean, probability < 1 %).
	rng := rand.New(rand.NewPCG(5, 5))
	p, err := NewPoisson(1e-12, rng)
	require.NoError(t, err)
	_, ok := p.Next()
	assert.False(t, ok)
	_, ok = p.Next()
	assert.False(t, ok, "stays ended")

	g, err := NewGamma(1e-12, 0.5, rng)
	require.NoError(t, err)
	_, ok = g.Next()
	assert.False(t, ok)
}

func TestArrival_RejectsBadParameters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := NewConstant(rate)
		assert.ErrorContains(t, err, "rate: must be finite and > 0", "rate %v", rate)
		_, err = NewPoisson(rate, rng)
		assert.ErrorContains(t, err, "rate: must be finite and > 0", "rate %v", rate)
		_, err = NewGamma(rate, 1, rng)
		assert.ErrorContains(t, err, "rate: must be finite and > 0", "rate %v", rate)
	}
	for _, cv := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-200, 1e200} {
		_, err := NewGamma(1, cv, rng)
		assert.ErrorContains(t, err, "cv: must be finite and > 0", "cv %v", cv)
	}
	_, err := NewPoisson(1, nil)
	assert.EqualError(t, err, "workload: arrival: rng: missing (nil)")
	_, err = NewGamma(1, 1, nil)
	assert.EqualError(t, err, "workload: arrival: rng: missing (nil)")
}

func TestTraceArrival_At(t *testing.T) {
	cases := []struct {
		name    string
		speedup float64
		ts      int64
		want    int64
	}{
		{"speedup 1 is the identity", 1, 123, 123},
		{"speedup 1 keeps MaxInt64 exact", 1, math.MaxInt64, math.MaxInt64},
		{"zero", 2, 0, 0},
		{"2× faster: 10⁹ / 2", 2, 1_000_000_000, 500_000_000},
		{"half rounds away from zero: 3 / 2 = 1.5 → 2", 2, 3, 2},
		{"10 / 3 = 3.33 → 3", 3, 10, 3},
		{"2× slower: 3 / 0.5 = 6", 0.5, 3, 6},
		{"saturates: MaxInt64 / 0.5 → MaxInt64", 0.5, math.MaxInt64, math.MaxInt64},
		// Mooncake's last row: 3,536,999 ms at 10× → 353,699,900,000 ns
		{"real trace end at 10×", 10, 3_536_999_000_000, 353_699_900_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, NewTraceArrival(tc.speedup).At(tc.ts))
		})
	}
}

func TestTraceArrival_MonotonicProperty(t *testing.T) {
	// Non-decreasing timestamps give non-decreasing send times for any speedup.
	rng := rand.New(rand.NewPCG(2, 2))
	for _, s := range []float64{0.3, 1, 1.7, 3, 1000} {
		a := NewTraceArrival(s)
		ts, prev := int64(0), int64(0)
		for i := 0; i < 10_000; i++ {
			ts += rng.Int64N(1000)
			v := a.At(ts)
			require.GreaterOrEqual(t, v, prev, "speedup %v ts %d", s, ts)
			prev = v
		}
	}
}

func TestTraceArrival_PanicsOnBadSpeedup(t *testing.T) {
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		assert.Panics(t, func() { NewTraceArrival(s) }, "speedup %v", s)
	}
}

// NewScaledTo: constant 1 s gaps (0, 1, 2 s) scaled so that the 3rd is at
// 10 s: × 5 (0, 5, 10 s, then 15 s); a last time of 0 (one send at 0) is
// left as drawn; no sends to scale is an error.
func TestScaledTo(t *testing.T) {
	newC := func() Arrival { c, _ := NewConstant(1); return c }
	s, err := NewScaledTo(newC(), newC(), 3, 10e9)
	require.NoError(t, err)
	for _, want := range []int64{0, 5e9, 10e9, 15e9} {
		got, ok := s.Next()
		require.True(t, ok)
		assert.Equal(t, want, got)
	}
	s, err = NewScaledTo(newC(), newC(), 1, 10e9)
	require.NoError(t, err)
	got, _ := s.Next()
	assert.Equal(t, int64(0), got, "a single send at 0 stays at 0")
	_, err = NewScaledTo(newC(), newC(), 0, 10e9)
	assert.Error(t, err, "no sends to scale")
}

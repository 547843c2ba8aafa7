package clock

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSpan(t *testing.T) {
	cases := []struct {
		in   float64
		want int64
	}{
		{0, 0},
		{1.5, 2},   // half away from zero
		{-1.5, -2}, // half away from zero
		{1e15, 1_000_000_000_000_000},
		{math.Inf(1), MaxSpan},
		{math.NaN(), MaxSpan},
		{1e300, MaxSpan},
		{float64(MaxSpan), MaxSpan}, // 2^62 is exact in float64
		{math.Inf(-1), -MaxSpan},
		// the float64 just below 2^62 (2^62 − 512: the spacing there is 2^9) is in range and kept
		{math.Nextafter(float64(MaxSpan), 0), MaxSpan - 512},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Span(c.in), "Span(%v)", c.in)
	}
}

func TestAdd(t *testing.T) {
	assert.Equal(t, int64(5), Add(2, 3))
	assert.Equal(t, int64(math.MaxInt64), Add(math.MaxInt64-1, 2))
	assert.Equal(t, int64(math.MinInt64), Add(math.MinInt64+1, -2))
	assert.Equal(t, Horizon+MaxSpan, Add(Horizon, MaxSpan), "the largest sum the replay forms does not saturate")
	// 2^60 + 2^62 = 5,764,607,523,034,234,880 < 2^63 − 1
	assert.Equal(t, int64(5_764_607_523_034_234_880), Horizon+MaxSpan)
}

func TestYears(t *testing.T) {
	// 2^60 ns = 1.152921504606847e18 ns / 3.15576e16 ns per year = 36.53 years
	assert.InDelta(t, 36.53, Years(Horizon), 0.01)
}

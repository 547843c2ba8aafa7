package workload

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inference-perf's constant timer: n gaps scaled to the span. With draws E_k,
// t_k = span · S_k / S_n; the last is the span's end, the times increase, and
// the same stream repeats them.
func TestSpreadHandWorked(t *testing.T) {
	draw := func() []int64 {
		rng := rand.New(rand.NewPCG(1, 2))
		s, err := NewSpread(4, 10_000_000_000, rng)
		require.NoError(t, err)
		var out []int64
		for {
			v, ok := s.Next()
			if !ok {
				return out
			}
			out = append(out, v)
		}
	}
	got := draw()
	rng := rand.New(rand.NewPCG(1, 2))
	e := []float64{rng.ExpFloat64(), rng.ExpFloat64(), rng.ExpFloat64(), rng.ExpFloat64()}
	sum := e[0] + e[1] + e[2] + e[3]
	want := []int64{int64(math.Round(1e10 * e[0] / sum)), int64(math.Round(1e10 * (e[0] + e[1]) / sum)),
		int64(math.Round(1e10 * (e[0] + e[1] + e[2]) / sum)), 10_000_000_000}
	assert.Equal(t, want, got)
	assert.Equal(t, got, draw())
	s, err := NewSpread(0, 5, nil)
	require.NoError(t, err)
	_, ok := s.Next()
	assert.False(t, ok)
	_, err = NewSpread(-1, 5, nil)
	assert.Error(t, err)
}

// inference-perf's Poisson timer sends exactly n requests, second by second:
// every send of second j lies in (j s, (j+1) s], a second's last at its end,
// and over many seconds the mean count per second is the rate.
func TestPerSecondPoisson(t *testing.T) {
	p, err := NewPerSecondPoisson(3.5, 7000, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	var n int
	var last int64
	seconds := map[int64]int{}
	for {
		v, ok := p.Next()
		if !ok {
			break
		}
		require.GreaterOrEqual(t, v, last)
		last = v
		seconds[(v-1)/1_000_000_000]++
		n++
	}
	assert.Equal(t, 7000, n)
	// 7,000 requests at 3.5/s over about 2,000 seconds (empty seconds included)
	span := float64(last) / 1e9
	assert.InEpsilon(t, 3.5, float64(n)/span, 0.05)
	_, err = NewPerSecondPoisson(0, 1, rand.New(rand.NewPCG(1, 1)))
	assert.Error(t, err)
}

// The Poisson count has the law's mean and variance (λ = 3.5 by inversion,
// λ = 800 by the normal approximation).
func TestPoissonCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, lambda := range []float64{3.5, 800} {
		var s, s2 float64
		const n = 20000
		for range n {
			c := float64(poissonCount(lambda, rng))
			s += c
			s2 += c * c
		}
		mean := s / n
		assert.InEpsilon(t, lambda, mean, 0.02)
		assert.InEpsilon(t, lambda, s2/n-mean*mean, 0.06)
	}
}

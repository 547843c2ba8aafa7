package workload

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixedLen is a fixed length of n tokens.
func fixedLen(n int) config.Length { return config.Length{Kind: config.FixedLength{Value: n}} }

func TestRoundClamp(t *testing.T) {
	cases := []struct {
		x      float64
		lo, hi int
		want   int
	}{
		{2.5, 1, 10, 3},    // half away from zero
		{2.49, 1, 10, 2},   // down
		{0.2, 1, 10, 1},    // below Min → Min
		{10.4, 1, 10, 10},  // above Max → Max (not 10 by rounding alone)
		{1e300, 1, 10, 10}, // far above: clamp before converting, no overflow
		{math.NaN(), 1, 10, 1},
		{math.Inf(-1), 1, 10, 1},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, roundClamp(tc.x, tc.lo, tc.hi), "x=%v", tc.x)
	}
}

func TestSampleLength(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(11, 12))

	t.Run("fixed draws nothing", func(t *testing.T) {
		a, b := rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(1, 1))
		assert.Equal(t, 7, sampleLength(fixedLen(7), a))
		assert.Equal(t, b.Uint64(), a.Uint64(), "the stream did not advance")
	})
	t.Run("uniform covers [3, 5] evenly", func(t *testing.T) {
		counts := map[int]int{}
		for range n {
			counts[sampleLength(config.Length{Kind: config.UniformLength{Min: 3, Max: 5}}, rng)]++
		}
		require.Len(t, counts, 3)
		for v := 3; v <= 5; v++ {
			// expected n/3 ≈ 33,333 each; binomial std ≈ 149, 2 % ≈ 4.5σ
			assert.InEpsilon(t, n/3.0, float64(counts[v]), 0.02, "value %d", v)
		}
	})
	t.Run("normal is clamped to [Min, Max] and hits both", func(t *testing.T) {
		d := config.Length{Kind: config.NormalLength{Mean: 100, Std: 1000, Min: 1, Max: 200}}
		lo, hi := 0, 0
		for range n {
			v := sampleLength(d, rng)
			require.GreaterOrEqual(t, v, 1)
			require.LessOrEqual(t, v, 200)
			if v == 1 {
				lo++
			}
			if v == 200 {
				hi++
			}
		}
		// P(x ≤ 1.5) = Φ(−0.0985) ≈ 0.46, P(x ≥ 199.5) = 1 − Φ(0.0995) ≈ 0.46
		assert.InEpsilon(t, 0.46*n, float64(lo), 0.03)
		assert.InEpsilon(t, 0.46*n, float64(hi), 0.03)
	})
	t.Run("normal mean with wide bounds", func(t *testing.T) {
		d := config.Length{Kind: config.NormalLength{Mean: 1000, Std: 100, Min: 1, Max: 1_000_000}}
		mean, std := sampleMoments(d, rng, n)
		assert.InEpsilon(t, 1000, mean, 0.005) // std err 100/√n ≈ 0.32 tokens
		assert.InEpsilon(t, 100, std, 0.02)
	})
	t.Run("lognormal has the configured mean and std", func(t *testing.T) {
		// σ² = ln(1 + 500²/1000²) = ln 1.25 ≈ 0.2231, μ = ln 1000 − 0.1116
		d := config.Length{Kind: config.LognormalLength{Mean: 1000, Std: 500, Min: 1, Max: 1_000_000_000}}
		mean, std := sampleMoments(d, rng, n)
		assert.InEpsilon(t, 1000, mean, 0.01) // std err 500/√n ≈ 1.6 tokens
		assert.InEpsilon(t, 500, std, 0.04)
	})
}

func sampleMoments(d config.Length, rng *rand.Rand, n int) (mean, std float64) {
	var s, s2 float64
	for range n {
		v := float64(sampleLength(d, rng))
		s += v
		s2 += v * v
	}
	mean = s / float64(n)
	return mean, math.Sqrt(s2/float64(n) - mean*mean)
}

func synthAll(t *testing.T, spec config.SyntheticSource, streams *Streams) []Request {
	t.Helper()
	src, err := NewSynthetic(spec, streams)
	require.NoError(t, err)
	reqs, err := drain(src)
	require.NoError(t, err)
	return reqs
}

func TestSynthetic_Deterministic(t *testing.T) {
	spec := config.SyntheticSource{
		NumRequests: 200,
		ISL:         config.Length{Kind: config.UniformLength{Min: 100, Max: 4000}},
		OSL:         config.Length{Kind: config.LognormalLength{Mean: 300, Std: 100, Min: 1, Max: 2000}},
	}
	a := synthAll(t, spec, NewStreams(42))
	b := synthAll(t, spec, NewStreams(42))
	c := synthAll(t, spec, NewStreams(43))
	require.Len(t, a, 200)
	assert.Equal(t, a, b, "same seed, same requests")
	assert.NotEqual(t, a, c, "another seed, other requests")
	for i, r := range a {
		assert.Equal(t, int64(i), r.ID)
		assert.Zero(t, r.Timestamp)
		assert.Nil(t, r.HashIDs)
		assert.Zero(t, r.HashBlockTokens)
		assert.Equal(t, int64(-1), r.SessionID)
		assert.Zero(t, r.Line)
		assert.GreaterOrEqual(t, r.InputTokens, 100)
		assert.LessOrEqual(t, r.InputTokens, 4000)
	}
}

func TestSynthetic_FixedWorkedValues(t *testing.T) {
	// ISL fixed 1024, OSL fixed 1: three requests of 1024 tokens and one output token.
	got := synthAll(t, config.SyntheticSource{
		NumRequests: 3,
		ISL:         fixedLen(1024),
		OSL:         fixedLen(1),
	}, NewStreams(1))
	want := []Request{
		{ID: 0, InputTokens: 1024, OutputTokens: 1, SessionID: -1},
		{ID: 1, InputTokens: 1024, OutputTokens: 1, SessionID: -1},
		{ID: 2, InputTokens: 1024, OutputTokens: 1, SessionID: -1},
	}
	assert.Equal(t, want, got)
}

// W4: the ISL values depend only on the seed and the "isl" stream; changing
// the OSL distribution (and so the draws on "osl") never shifts them.
func TestSynthetic_OSLStreamDoesNotShiftISL(t *testing.T) {
	isl := config.Length{Kind: config.NormalLength{Mean: 2000, Std: 500, Min: 1, Max: 8000}}
	islOf := func(reqs []Request) []int {
		out := make([]int, len(reqs))
		for i, r := range reqs {
			out[i] = r.InputTokens
		}
		return out
	}
	fixedOSL := synthAll(t, config.SyntheticSource{NumRequests: 100, ISL: isl, OSL: fixedLen(10)}, NewStreams(7))
	uniformOSL := synthAll(t, config.SyntheticSource{NumRequests: 100, ISL: isl, OSL: config.Length{Kind: config.UniformLength{Min: 1, Max: 500}}}, NewStreams(7))
	// and one whose "osl" stream was advanced before the source was built
	pre := NewStreams(7)
	for range 17 {
		pre.Get(StreamOSL).Uint64()
	}
	advancedOSL := synthAll(t, config.SyntheticSource{NumRequests: 100, ISL: isl, OSL: config.Length{Kind: config.UniformLength{Min: 1, Max: 500}}}, pre)

	assert.Equal(t, islOf(fixedOSL), islOf(uniformOSL))
	assert.Equal(t, islOf(fixedOSL), islOf(advancedOSL))
	assert.NotEqual(t, uniformOSL, advancedOSL, "the OSL values did change")
}

func TestSynthetic_EOFAndErrors(t *testing.T) {
	ok := fixedLen(1)
	src, err := NewSynthetic(config.SyntheticSource{NumRequests: 1, ISL: ok, OSL: ok}, NewStreams(1))
	require.NoError(t, err)
	var r Request
	require.NoError(t, src.Next(&r))
	assert.ErrorIs(t, src.Next(&r), io.EOF)

	// the rules are config.SyntheticSource.Validate's (one rule for the spec
	// and the generator), with the generator's prefix
	cases := []struct {
		name    string
		spec    config.SyntheticSource
		streams *Streams
		want    string
	}{
		{"nil streams", config.SyntheticSource{NumRequests: 1, ISL: ok, OSL: ok}, nil,
			"workload: synthetic: streams: missing (nil)"},
		{"no request", config.SyntheticSource{NumRequests: 0, ISL: ok, OSL: ok}, NewStreams(1),
			"workload: synthetic: num_requests: must be ≥ 1, got 0"},
		{"ISL value 0", config.SyntheticSource{NumRequests: 1, ISL: fixedLen(0), OSL: ok}, NewStreams(1),
			"workload: synthetic: isl.value: must be ≥ 1, got 0"},
		{"OSL value 0 (vLLM refuses max_tokens < 1)", config.SyntheticSource{NumRequests: 1, ISL: ok, OSL: fixedLen(0)}, NewStreams(1),
			"workload: synthetic: osl.value: must be ≥ 1, got 0"},
		{"OSL uniform inverted", config.SyntheticSource{NumRequests: 1, ISL: ok, OSL: config.Length{Kind: config.UniformLength{Min: 3, Max: 2}}}, NewStreams(1),
			"workload: synthetic: osl.max: must be ≥ min (3), got 2"},
		{"ISL missing", config.SyntheticSource{NumRequests: 1, OSL: ok}, NewStreams(1),
			"workload: synthetic: isl: is required (an integer, or a mapping with kind: fixed, uniform, normal, lognormal)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSynthetic(tc.spec, tc.streams)
			assert.EqualError(t, err, tc.want)
		})
	}
}

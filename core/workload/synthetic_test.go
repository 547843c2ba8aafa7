package workload

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDist_Validate(t *testing.T) {
	cases := []struct {
		name string
		d    Dist
		min  int
		want string // "" = valid
	}{
		{"fixed ISL 1", Dist{Kind: DistFixed, Value: 1}, 1, ""},
		{"fixed ISL 0", Dist{Kind: DistFixed, Value: 0}, 1, "value: must be ≥ 1, got 0"},
		{"fixed OSL 0", Dist{Kind: DistFixed, Value: 0}, 0, ""},
		{"fixed OSL -1", Dist{Kind: DistFixed, Value: -1}, 0, "value: must be ≥ 0, got -1"},
		{"uniform single point", Dist{Kind: DistUniform, Min: 5, Max: 5}, 1, ""},
		{"uniform max < min", Dist{Kind: DistUniform, Min: 5, Max: 4}, 1, "max: must be ≥ min (5), got 4"},
		{"uniform min below floor", Dist{Kind: DistUniform, Min: 0, Max: 4}, 1, "min: must be ≥ 1, got 0"},
		{"uniform OSL from 0", Dist{Kind: DistUniform, Min: 0, Max: math.MaxInt}, 0, ""},
		{"normal", Dist{Kind: DistNormal, Mean: 100, Std: 10, Min: 1, Max: 200}, 1, ""},
		{"normal max 0", Dist{Kind: DistNormal, Mean: 0, Std: 1, Min: 0, Max: 0}, 0, "max: must be > 0, got 0"},
		{"normal NaN mean", Dist{Kind: DistNormal, Mean: math.NaN(), Min: 1, Max: 2}, 1, "mean: must be finite, got NaN"},
		{"normal negative std", Dist{Kind: DistNormal, Mean: 1, Std: -1, Min: 1, Max: 2}, 1, "std: must be finite and ≥ 0, got -1"},
		{"lognormal", Dist{Kind: DistLognormal, Mean: 100, Std: 50, Min: 1, Max: 1000}, 1, ""},
		{"lognormal mean 0", Dist{Kind: DistLognormal, Mean: 0, Std: 1, Min: 1, Max: 2}, 1, "mean: must be finite and > 0 for lognormal, got 0"},
		{"missing kind", Dist{}, 1, "kind: missing (want fixed, uniform, normal or lognormal)"},
		{"unknown kind", Dist{Kind: "zipf"}, 1, `kind: unknown "zipf" (want fixed, uniform, normal or lognormal)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Validate(tc.min)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tc.want)
			}
		})
	}
}

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

func TestDist_Sample(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(11, 12))

	t.Run("fixed draws nothing", func(t *testing.T) {
		a, b := rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(1, 1))
		assert.Equal(t, 7, Dist{Kind: DistFixed, Value: 7}.Sample(a))
		assert.Equal(t, b.Uint64(), a.Uint64(), "the stream did not advance")
	})
	t.Run("uniform covers [3, 5] evenly", func(t *testing.T) {
		counts := map[int]int{}
		for range n {
			counts[Dist{Kind: DistUniform, Min: 3, Max: 5}.Sample(rng)]++
		}
		require.Len(t, counts, 3)
		for v := 3; v <= 5; v++ {
			// expected n/3 ≈ 33,333 each; binomial std ≈ 149, 2 % ≈ 4.5σ
			assert.InEpsilon(t, n/3.0, float64(counts[v]), 0.02, "value %d", v)
		}
	})
	t.Run("normal is clamped to [Min, Max] and hits both", func(t *testing.T) {
		d := Dist{Kind: DistNormal, Mean: 100, Std: 1000, Min: 1, Max: 200}
		lo, hi := 0, 0
		for range n {
			v := d.Sample(rng)
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
		d := Dist{Kind: DistNormal, Mean: 1000, Std: 100, Min: 1, Max: 1_000_000}
		mean, std := sampleMoments(d, rng, n)
		assert.InEpsilon(t, 1000, mean, 0.005) // std err 100/√n ≈ 0.32 tokens
		assert.InEpsilon(t, 100, std, 0.02)
	})
	t.Run("lognormal has the configured mean and std", func(t *testing.T) {
		// σ² = ln(1 + 500²/1000²) = ln 1.25 ≈ 0.2231, μ = ln 1000 − 0.1116
		d := Dist{Kind: DistLognormal, Mean: 1000, Std: 500, Min: 1, Max: 1_000_000_000}
		mean, std := sampleMoments(d, rng, n)
		assert.InEpsilon(t, 1000, mean, 0.01) // std err 500/√n ≈ 1.6 tokens
		assert.InEpsilon(t, 500, std, 0.04)
	})
}

func sampleMoments(d Dist, rng *rand.Rand, n int) (mean, std float64) {
	var s, s2 float64
	for range n {
		v := float64(d.Sample(rng))
		s += v
		s2 += v * v
	}
	mean = s / float64(n)
	return mean, math.Sqrt(s2/float64(n) - mean*mean)
}

func synthAll(t *testing.T, spec SyntheticSpec, streams *Streams) []Request {
	t.Helper()
	src, err := NewSynthetic(spec, streams)
	require.NoError(t, err)
	reqs, err := drain(src)
	require.NoError(t, err)
	return reqs
}

func TestSynthetic_Deterministic(t *testing.T) {
	spec := SyntheticSpec{
		NumRequests: 200,
		ISL:         Dist{Kind: DistUniform, Min: 100, Max: 4000},
		OSL:         Dist{Kind: DistLognormal, Mean: 300, Std: 100, Min: 0, Max: 2000},
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
	// ISL fixed 1024, OSL fixed 0: three prefill-only requests of 1024 tokens.
	got := synthAll(t, SyntheticSpec{
		NumRequests: 3,
		ISL:         Dist{Kind: DistFixed, Value: 1024},
		OSL:         Dist{Kind: DistFixed, Value: 0},
	}, NewStreams(1))
	want := []Request{
		{ID: 0, InputTokens: 1024, SessionID: -1},
		{ID: 1, InputTokens: 1024, SessionID: -1},
		{ID: 2, InputTokens: 1024, SessionID: -1},
	}
	assert.Equal(t, want, got)
}

// W4: the ISL values depend only on the seed and the "isl" stream; changing
// the OSL distribution (and so the draws on "osl") never shifts them.
func TestSynthetic_OSLStreamDoesNotShiftISL(t *testing.T) {
	isl := Dist{Kind: DistNormal, Mean: 2000, Std: 500, Min: 1, Max: 8000}
	islOf := func(reqs []Request) []int {
		out := make([]int, len(reqs))
		for i, r := range reqs {
			out[i] = r.InputTokens
		}
		return out
	}
	fixedOSL := synthAll(t, SyntheticSpec{NumRequests: 100, ISL: isl, OSL: Dist{Kind: DistFixed, Value: 10}}, NewStreams(7))
	uniformOSL := synthAll(t, SyntheticSpec{NumRequests: 100, ISL: isl, OSL: Dist{Kind: DistUniform, Min: 0, Max: 500}}, NewStreams(7))
	// and one whose "osl" stream was advanced before the source was built
	pre := NewStreams(7)
	for range 17 {
		pre.Get(StreamOSL).Uint64()
	}
	advancedOSL := synthAll(t, SyntheticSpec{NumRequests: 100, ISL: isl, OSL: Dist{Kind: DistUniform, Min: 0, Max: 500}}, pre)

	assert.Equal(t, islOf(fixedOSL), islOf(uniformOSL))
	assert.Equal(t, islOf(fixedOSL), islOf(advancedOSL))
	assert.NotEqual(t, uniformOSL, advancedOSL, "the OSL values did change")
}

func TestSynthetic_EOFAndErrors(t *testing.T) {
	ok := Dist{Kind: DistFixed, Value: 1}
	src, err := NewSynthetic(SyntheticSpec{NumRequests: 0, ISL: ok, OSL: ok}, NewStreams(1))
	require.NoError(t, err)
	var r Request
	assert.ErrorIs(t, src.Next(&r), io.EOF)

	cases := []struct {
		name    string
		spec    SyntheticSpec
		streams *Streams
		want    string
	}{
		{"nil streams", SyntheticSpec{NumRequests: 1, ISL: ok, OSL: ok}, nil,
			"workload: synthetic: streams: missing (nil)"},
		{"negative count", SyntheticSpec{NumRequests: -1, ISL: ok, OSL: ok}, NewStreams(1),
			"workload: synthetic: num_requests: must be ≥ 0, got -1"},
		{"ISL value 0", SyntheticSpec{NumRequests: 1, ISL: Dist{Kind: DistFixed}, OSL: ok}, NewStreams(1),
			"workload: synthetic: isl.value: must be ≥ 1, got 0"},
		{"OSL uniform inverted", SyntheticSpec{NumRequests: 1, ISL: ok, OSL: Dist{Kind: DistUniform, Min: 3, Max: 2}}, NewStreams(1),
			"workload: synthetic: osl.max: must be ≥ min (3), got 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSynthetic(tc.spec, tc.streams)
			assert.EqualError(t, err, tc.want)
		})
	}
}

package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compute_random_lens (python/sglang/bench_serving.py) draws
// np.random.randint(max(int(L·r), 1), L + 1): uniform in [max(int(L·r), 1), L],
// int truncating the float product. Worked by hand (Python's arithmetic):
// 1024·0.8 = 819.2 → [819, 1024]; 100·0.29 = 28.999999999999996 → [28, 100]
// (not 29); r = 0 (the default) and r < 0 → [1, L]; 3·1.2 = 3.6 → [3, 3];
// 3·1.5 = 4.5 → low 4 ≥ high 4: numpy raises; L = 0 likewise.
func TestSGLangRandomLen(t *testing.T) {
	for _, c := range []struct {
		n      int
		r      float64
		lo, hi int
	}{{1024, 0.8, 819, 1024}, {100, 0.29, 28, 100}, {128, 0, 1, 128}, {128, -0.5, 1, 128}, {3, 1.2, 3, 3}, {1024, 1, 1024, 1024}} {
		lo, hi, err := SGLangRandomLen(c.n, c.r)
		require.NoError(t, err, "%d × %g", c.n, c.r)
		assert.Equal(t, [2]int{c.lo, c.hi}, [2]int{lo, hi}, "%d × %g", c.n, c.r)
	}
	for _, c := range []struct {
		n int
		r float64
	}{{3, 1.5}, {0, 0.5}} {
		_, _, err := SGLangRandomLen(c.n, c.r)
		assert.Error(t, err, "%d × %g", c.n, c.r)
	}
}

// GIVEN sglang.bench_serving's defaults (random_input_len = random_output_len =
// 1024, range ratio 0.0, 1000 prompts, rate inf, 1 warm-up), WHEN decoded,
// THEN both lengths are uniform in [1, 1024], every prompt goes at once (a
// client each), and the warm-up is one copy of the first prompt capped at 32
// output tokens.
func TestSGLangBenchServingDefaults(t *testing.T) {
	s := benchSpec(t, "", "{tool: sglang_bench_serving, dataset_name: random}")
	b := s.Traffic.Benchmark.Tool.(SGLangBenchServing)
	assert.Equal(t, SGLangBenchServing{DatasetName: "random", RandomInputLen: 1024, RandomOutputLen: 1024, NumPrompts: 1000, WarmupRequests: 1}, b)
	tr, _ := s.Traffic.Benchmark.Traffic()
	u := Length{Kind: UniformLength{Min: 1, Max: 1024}}
	assert.Equal(t, SyntheticSource{NumRequests: 1000, ISL: u, OSL: u}, tr.Source.Type)
	assert.Equal(t, ConcurrencyLoad{Concurrency: 1000, WarmupRequests: 1, WarmupPrompt: WarmupPromptFirst, WarmupMaxOutputTokens: 32}, tr.Load.Mode)
}

// A rate is Poisson (get_request's np.random.exponential(1 / rate)), its
// requests queued at the --max-concurrency semaphore; the warm-ups go at once
// (request_func, not limited_request_func): warmup_concurrency 0.
func TestSGLangBenchServingRate(t *testing.T) {
	s := benchSpec(t, "", "{tool: sglang_bench_serving, dataset_name: random-ids, random_input_len: 1000, random_output_len: 100, random_range_ratio: 1, num_prompts: 50, request_rate: 4, max_concurrency: 8, warmup_requests: 10}")
	tr, _ := s.Traffic.Benchmark.Traffic()
	assert.Equal(t, SyntheticSource{NumRequests: 50, ISL: Length{Kind: FixedLength{Value: 1000}}, OSL: Length{Kind: FixedLength{Value: 100}}}, tr.Source.Type)
	assert.Equal(t, RateLoad{RateRPS: 4, Arrival: ArrivalPoisson, WarmupRequests: 10, WarmupPrompt: WarmupPromptFirst,
		WarmupMaxOutputTokens: 32, MaxConcurrency: 8, CappedArrival: CappedQueue}, tr.Load.Mode)
	n, c, _ := tr.Load.Warmup()
	assert.Equal(t, [2]int{10, 10}, [2]int{n, c}, "every warm-up at once")
}

// What the simulation cannot honour is refused naming the field.
func TestSGLangBenchServingRefusals(t *testing.T) {
	for bench, field := range map[string]string{
		"{tool: sglang_bench_serving, dataset_name: sharegpt}":                                       "traffic.benchmark.dataset_name",
		"{tool: sglang_bench_serving, dataset_name: random, random_range_ratio: 1.5}":                "traffic.benchmark.random_range_ratio",
		"{tool: sglang_bench_serving, dataset_name: random, max_concurrency: 4, warmup_requests: 5}": "traffic.benchmark.warmup_requests",
		"{tool: sglang_bench_serving, dataset_name: random, request_rate: 0}":                        "traffic.benchmark.request_rate",
	} {
		assert.Equal(t, field, benchErr(t, bench).Field, bench)
	}
	// a warm-up cap belongs to warm-up copies of the first prompt
	_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm}\ntraffic: {source: {type: synthetic, num_requests: 2, isl: 8, osl: 8}, load: {mode: concurrency, concurrency: 1, warmup_requests: 1, warmup_max_output_tokens: 4}}\n"))
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "traffic.load.warmup_max_output_tokens", ce.Field)
}

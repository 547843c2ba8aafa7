package config

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func benchSpec(t *testing.T, engine, bench string) *Spec {
	t.Helper()
	s, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm" + engine + "}\ntraffic:\n  benchmark: " + bench + "\n"))
	require.NoError(t, err)
	return s
}

func benchErr(t *testing.T, bench string) *Error {
	t.Helper()
	_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm}\ntraffic:\n  benchmark: " + bench + "\n"))
	var ce *Error
	require.ErrorAs(t, err, &ce, bench)
	return ce
}

// The random dataset's length window by client: InferenceX's fork and vLLM
// before 0.8.4 draw in [⌊r·L⌋, L] (r = 0.8, L = 1024: [819, 1024]); vLLM from
// 0.8.4 in [⌊L(1−r)⌋, ⌈L(1+r)⌉] (r = 0.1, L = 1000: [900, 1100]; L = 5:
// [4, 6]: ⌊4.5⌋ and ⌈5.5⌉); r = 1 in the fork and r = 0 in vLLM are fixed.
func TestVLLMBenchServeLengths(t *testing.T) {
	for _, c := range []struct {
		bench    string
		isl, osl Length
	}{
		{"{tool: vllm_bench_serve, variant: inferencex, random_input_len: 1024, random_output_len: 1024, random_range_ratio: 0.8, ignore_eos: true}",
			Length{Kind: UniformLength{Min: 819, Max: 1024}}, Length{Kind: UniformLength{Min: 819, Max: 1024}}},
		{"{tool: vllm_bench_serve, version: 0.15.1, random_input_len: 1000, random_output_len: 5, random_range_ratio: 0.1, ignore_eos: true}",
			Length{Kind: UniformLength{Min: 900, Max: 1100}}, Length{Kind: UniformLength{Min: 4, Max: 6}}},
		{"{tool: vllm_bench_serve, version: 0.8.0, random_input_len: 101, random_output_len: 10, random_range_ratio: 0.5, ignore_eos: true}",
			Length{Kind: UniformLength{Min: 50, Max: 101}}, Length{Kind: UniformLength{Min: 5, Max: 10}}},
		{"{tool: vllm_bench_serve, variant: inferencex, random_input_len: 8192, random_output_len: 1024, ignore_eos: true}",
			Length{Kind: FixedLength{Value: 8192}}, Length{Kind: FixedLength{Value: 1024}}},
		{"{tool: vllm_bench_serve, ignore_eos: true}", // vLLM's defaults: 1024 / 128, r = 0
			Length{Kind: FixedLength{Value: 1024}}, Length{Kind: FixedLength{Value: 128}}},
		{"{tool: vllm_bench_serve, random_output_len: 1, random_range_ratio: 0.9, ignore_eos: true}", // ⌊102.4⌋; output at least 1: ⌊0.1⌋ → 1, ⌈1.9⌉
			Length{Kind: UniformLength{Min: 102, Max: 1946}}, Length{Kind: UniformLength{Min: 1, Max: 2}}},
	} {
		s := benchSpec(t, "", c.bench)
		src := s.Traffic.Benchmark.Tool.(VLLMBenchServe)
		isl, osl, err := src.Lengths()
		require.NoError(t, err, c.bench)
		assert.Equal(t, c.isl, isl, c.bench)
		assert.Equal(t, c.osl, osl, c.bench)
	}
}

// vLLM before 0.8.4 defaults --random-range-ratio to 1.0 (benchmark_serving.py,
// default=1.0; RandomDataset.DEFAULT_RANGE_RATIO), so a command without it
// sends every prompt at exactly L (int(L·1.0) .. L); from 0.8.4 the default is
// 0 and the window around L is L itself too. The version comes from the tool
// or from the engine's backend_version; a ratio given is kept.
func TestVLLMBenchServeRangeRatioDefaultByVersion(t *testing.T) {
	for _, c := range []struct {
		engine, bench string
		ratio         float64
		isl, osl      Length
	}{
		{"", "{tool: vllm_bench_serve, version: 0.8.0, random_input_len: 101, random_output_len: 10, ignore_eos: true}",
			1, Length{Kind: FixedLength{Value: 101}}, Length{Kind: FixedLength{Value: 10}}},
		{", backend_version: 0.8.3", "{tool: vllm_bench_serve, ignore_eos: true}",
			1, Length{Kind: FixedLength{Value: 1024}}, Length{Kind: FixedLength{Value: 128}}},
		{", backend_version: 0.8.4", "{tool: vllm_bench_serve, ignore_eos: true}",
			0, Length{Kind: FixedLength{Value: 1024}}, Length{Kind: FixedLength{Value: 128}}},
		{"", "{tool: vllm_bench_serve, version: 0.8.0, random_input_len: 101, random_output_len: 10, random_range_ratio: 0.5, ignore_eos: true}",
			0.5, Length{Kind: UniformLength{Min: 50, Max: 101}}, Length{Kind: UniformLength{Min: 5, Max: 10}}},
	} {
		s := benchSpec(t, c.engine, c.bench)
		src := s.Traffic.Benchmark.Tool.(VLLMBenchServe)
		assert.Equal(t, c.ratio, src.RandomRangeRatio, c.engine+" "+c.bench)
		isl, osl, err := src.Lengths()
		require.NoError(t, err, c.bench)
		assert.Equal(t, c.isl, isl, c.bench)
		assert.Equal(t, c.osl, osl, c.bench)
	}
}

// What each client sends before its measured prompts, and how it sends them.
func TestVLLMBenchServeTraffic(t *testing.T) {
	for _, c := range []struct {
		name, engine, bench string
		load                LoadMode
		version             string
	}{
		// InferenceX since 2026-01-21: 2·c copies of the first prompt, no test request
		{"inferencex", "", "{tool: vllm_bench_serve, variant: inferencex, num_prompts: 80, max_concurrency: 8, num_warmups: 16, random_range_ratio: 0.8, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 8, WarmupRequests: 16, WarmupPrompt: WarmupPromptFirst}, ""},
		// the cloned fork before it: its one test request
		{"inferencex 2025", "", "{tool: vllm_bench_serve, variant: inferencex, date: \"2025-11-02\", num_prompts: 80, max_concurrency: 8, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 8, WarmupRequests: 1, WarmupPrompt: WarmupPromptFirst}, ""},
		// vLLM: the ready check's test request and the warm-ups; the engine's release is the client's
		{"vllm", ", backend_version: 0.13.0", "{tool: vllm_bench_serve, num_prompts: 80, max_concurrency: 8, num_warmups: 2, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 8, WarmupRequests: 3, WarmupPrompt: WarmupPromptFirst}, "0.13.0"},
		// from 0.14.0 the ready check is off unless given (pull request 30975)
		{"vllm 0.15.1", ", backend_version: 0.15.1", "{tool: vllm_bench_serve, num_prompts: 80, max_concurrency: 8, num_warmups: 2, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 8, WarmupRequests: 2, WarmupPrompt: WarmupPromptFirst}, "0.15.1"},
		{"vllm 0.15.1 ready check", ", backend_version: 0.15.1", "{tool: vllm_bench_serve, num_prompts: 80, max_concurrency: 8, ready_check_timeout_sec: 60, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 8, WarmupRequests: 1, WarmupPrompt: WarmupPromptFirst}, "0.15.1"},
		{"vllm no ready check", "", "{tool: vllm_bench_serve, num_prompts: 80, max_concurrency: 8, ready_check_timeout_sec: 0, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 8}, NewestVLLMBenchRelease},
		// no concurrency limit, rate inf: every prompt at once
		{"all at once", "", "{tool: vllm_bench_serve, num_prompts: 50, ready_check_timeout_sec: 0, ignore_eos: true}",
			ConcurrencyLoad{Concurrency: 50}, NewestVLLMBenchRelease},
		// a rate: Poisson; burstiness 4 is gamma of shape 4, cv 1/2
		{"rate", "", "{tool: vllm_bench_serve, request_rate: 2, burstiness: 4, ready_check_timeout_sec: 0, ignore_eos: true}",
			RateLoad{RateRPS: 2, Arrival: ArrivalGamma, CV: 0.5, SpanS: 500}, NewestVLLMBenchRelease},
		// a rate behind max_concurrency: the arrivals queue at the client for a slot, the warm-ups 4 at once
		{"rate capped", "", "{tool: vllm_bench_serve, request_rate: 2, max_concurrency: 4, num_warmups: 8, ready_check_timeout_sec: 0, ignore_eos: true}",
			RateLoad{RateRPS: 2, Arrival: ArrivalPoisson, WarmupRequests: 8, WarmupPrompt: WarmupPromptFirst, WarmupConcurrency: 4,
				MaxConcurrency: 4, CappedArrival: CappedQueue, SpanS: 500}, NewestVLLMBenchRelease},
		// a rate after the test request and 4 warm-ups, all at once, then Poisson arrivals
		{"rate after warm-ups", "", "{tool: vllm_bench_serve, request_rate: 2, num_warmups: 4, ready_check_timeout_sec: 600, ignore_eos: true}",
			RateLoad{RateRPS: 2, Arrival: ArrivalPoisson, WarmupRequests: 5, WarmupPrompt: WarmupPromptFirst, SpanS: 500}, NewestVLLMBenchRelease},
		// before 0.10.0 the client sleeps each gap as drawn: no rescaling (1000 prompts at 2/s span 500 s from 0.10.0)
		{"rate 0.9.2", "", "{tool: vllm_bench_serve, version: 0.9.2, request_rate: 2, ready_check_timeout_sec: 0, ignore_eos: true}",
			RateLoad{RateRPS: 2, Arrival: ArrivalPoisson}, "0.9.2"},
		{"rate inferencex", "", "{tool: vllm_bench_serve, variant: inferencex, request_rate: 2, ignore_eos: true}",
			RateLoad{RateRPS: 2, Arrival: ArrivalPoisson, WarmupRequests: 0}, ""},
	} {
		s := benchSpec(t, c.engine, c.bench)
		b := s.Traffic.Benchmark
		assert.Equal(t, c.version, b.Tool.(VLLMBenchServe).Version, c.name)
		tr, _ := b.Traffic()
		assert.Equal(t, c.load, tr.Load.Mode, c.name)
		assert.Equal(t, Stop{}, tr.Stop, c.name)
		assert.Nil(t, tr.Source.Type.(SyntheticSource).Dataset, "%s: every prompt its own random ids", c.name)
	}
}

// AIPerf: its dataset of 100 entries (shuffled), the warm-up drawn from it,
// the request count measured, stddev 0 a fixed length.
func TestAIPerfTraffic(t *testing.T) {
	s := benchSpec(t, "", "{tool: aiperf, concurrency: 4, request_count: 40, warmup_request_count: 4, synthetic_input_tokens_mean: 1000, output_tokens_mean: 200, ignore_eos: true}")
	tr, notes := s.Traffic.Benchmark.Traffic()
	assert.Equal(t, SyntheticSource{NumRequests: 40, ISL: Length{Kind: FixedLength{Value: 1000}}, OSL: Length{Kind: FixedLength{Value: 200}},
		Dataset: &Dataset{Entries: 100, Sampling: SamplingShuffle}}, tr.Source.Type)
	assert.Equal(t, ConcurrencyLoad{Concurrency: 4, WarmupRequests: 4}, tr.Load.Mode)
	assert.Empty(t, notes)
	// defaults: concurrency 1, 10 requests, 550 tokens
	s = benchSpec(t, "", "{tool: aiperf, output_tokens_mean: 20, output_tokens_stddev: 2, ignore_eos: true}")
	tr, notes = s.Traffic.Benchmark.Traffic()
	assert.Equal(t, ConcurrencyLoad{Concurrency: 1}, tr.Load.Mode)
	src := tr.Source.Type.(SyntheticSource)
	assert.Equal(t, 10, src.NumRequests)
	assert.Equal(t, Length{Kind: FixedLength{Value: 550}}, src.ISL)
	assert.Equal(t, Length{Kind: NormalLength{Mean: 20.5, Std: 2, Min: 1, Max: 36}}, src.OSL, "ceil(x) ≈ round(x + 0.5)")
	assert.Len(t, notes, 1)
	// a rate: Poisson, a benchmark duration stops sending
	s = benchSpec(t, "", "{tool: aiperf, request_rate: 3, benchmark_duration: 60, output_tokens_mean: 20, ignore_eos: true}")
	tr, _ = s.Traffic.Benchmark.Traffic()
	assert.Equal(t, RateLoad{RateRPS: 3, Arrival: ArrivalPoisson}, tr.Load.Mode)
	grace := DefaultAIPerfGracePeriod // 30 s: AIPerf waits that long for the requests in flight
	assert.Equal(t, Stop{MaxDurationS: 60, GraceS: &grace}, tr.Stop)
	// a rate with a concurrency: the arrivals capped at 4 in flight
	capped := benchSpec(t, "", "{tool: aiperf, request_rate: 50, concurrency: 4, request_count: 20, output_tokens_mean: 20, ignore_eos: true}")
	tr2, _ := capped.Traffic.Benchmark.Traffic()
	assert.Equal(t, RateLoad{RateRPS: 50, Arrival: ArrivalPoisson, MaxConcurrency: 4}, tr2.Load.Mode)
	// a duration run sends until the duration ends: no count of 10 (AIPerf
	// takes --benchmark-duration without --request-count)
	assert.Equal(t, durationRunRequests, tr.Source.Type.(SyntheticSource).NumRequests)
	assert.Equal(t, 0, s.Traffic.Benchmark.Tool.(AIPerfBenchmark).RequestCount)
	again, err := Decode(s.JSON())
	require.NoError(t, err, "the canonical spec of a duration run decodes")
	assert.Equal(t, string(s.JSON()), string(again.JSON()))
}

// An option the simulation cannot honour is an error naming it.
func TestBenchmarkRefusals(t *testing.T) {
	for bench, field := range map[string]string{
		"{tool: vllm_bench_serve, version: 0.11.0}":                                                                          "traffic.benchmark.ignore_eos",
		"{tool: vllm_bench_serve, dataset_name: sharegpt, ignore_eos: true}":                                                 "traffic.benchmark.dataset_name",
		"{tool: vllm_bench_serve, random_prefix_len: 100, ignore_eos: true}":                                                 "traffic.benchmark.random_prefix_len",
		"{tool: vllm_bench_serve, random_range_ratio: 1, ignore_eos: true}":                                                  "traffic.benchmark.random_range_ratio",
		"{tool: vllm_bench_serve, variant: inferencex, random_range_ratio: 0, ignore_eos: true}":                             "traffic.benchmark.random_range_ratio",
		"{tool: vllm_bench_serve, request_rate: -5, ignore_eos: true}":                                                       "traffic.benchmark.request_rate",
		"{tool: vllm_bench_serve, request_rate: 0, ignore_eos: true}":                                                        "traffic.benchmark.request_rate",
		"{tool: vllm_bench_serve, num_prompts: 9223372036854775807, ignore_eos: true}":                                       "traffic.benchmark.num_prompts",
		"{tool: vllm_bench_serve, variant: inferencex, version: 0.15.1, ignore_eos: true}":                                   "traffic.benchmark.version",
		"{tool: vllm_bench_serve, variant: inferencex, date: \"2026-13-01\", ignore_eos: true}":                              "traffic.benchmark.date",
		"{tool: vllm_bench_serve, variant: inferencex, ready_check_timeout_sec: 5, ignore_eos: true}":                        "traffic.benchmark.ready_check_timeout_sec",
		"{tool: vllm_bench_serve, version: glm5-hopper, ignore_eos: true}":                                                   "traffic.benchmark.version",
		"{tool: aiperf, ignore_eos: true}":                                                                                   "traffic.benchmark.output_tokens_mean",
		"{tool: aiperf, output_tokens_mean: 10}":                                                                             "traffic.benchmark.ignore_eos",
		"{tool: aiperf, output_tokens_mean: 10, concurrency: 2, request_rate: 1, warmup_request_count: 2, ignore_eos: true}": "traffic.benchmark.warmup_request_count",
		"{tool: aiperf, output_tokens_mean: 10, request_rate: -1, ignore_eos: true}":                                         "traffic.benchmark.request_rate",
		"{tool: aiperf, output_tokens_mean: 10, request_count: 5, benchmark_duration: 60, ignore_eos: true}":                 "traffic.benchmark.request_count",
		"{tool: aiperf, output_tokens_mean: 10, request_rate: 1, warmup_request_count: 2, ignore_eos: true}":                 "traffic.benchmark.warmup_request_count",
		"{tool: inference_perf}":               "traffic.benchmark.api.streaming",
		"{tool: genai_perf, ignore_eos: true}": "traffic.benchmark.output_tokens_mean",
		"{tool: aiperf, random_input_len: 5}":  "traffic.benchmark.random_input_len",
	} {
		assert.Equal(t, field, benchErr(t, bench).Field, bench)
	}
	// the benchmark makes the source, load and stop: none of them beside it
	_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm}\ntraffic:\n  benchmark: {tool: aiperf, output_tokens_mean: 10, ignore_eos: true}\n  stop: {max_requests: 5}\n"))
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "traffic.stop", ce.Field)
}

// The canonical spec keeps the benchmark with its defaults filled, and
// decodes to itself.
func TestBenchmarkCanonical(t *testing.T) {
	s := benchSpec(t, ", backend_version: 0.16.0", "{tool: vllm_bench_serve, max_concurrency: 4, ignore_eos: true}")
	js := string(s.JSON())
	assert.Contains(t, js, `"traffic":{"benchmark":{"tool":"vllm_bench_serve","variant":"vllm","version":"0.16.0","dataset_name":"random","random_input_len":1024,"random_output_len":128,"random_range_ratio":0,"num_prompts":1000,"max_concurrency":4,"burstiness":1,"ready_check_timeout_sec":0,"ignore_eos":true}}`)
	again, err := Decode(s.JSON())
	require.NoError(t, err)
	assert.Equal(t, js, string(again.JSON()))
}

// genai-perf: 100 entries taken in sequence, the warm-up copies of the first
// measured requests (perf_analyzer restarts its data steps), a stddev's
// truncating draw as round(x − 0.5).
func TestGenAIPerfTraffic(t *testing.T) {
	s := benchSpec(t, "", "{tool: genai_perf, concurrency: 8, request_count: 80, warmup_request_count: 16, synthetic_input_tokens_mean: 1024, output_tokens_mean: 128, output_tokens_stddev: 4, ignore_eos: true}")
	tr, notes := s.Traffic.Benchmark.Traffic()
	assert.Equal(t, SyntheticSource{NumRequests: 80, ISL: Length{Kind: FixedLength{Value: 1024}},
		OSL:     Length{Kind: NormalLength{Mean: 127.5, Std: 4, Min: 1, Max: 160}},
		Dataset: &Dataset{Entries: 100, Sampling: SamplingSequential}}, tr.Source.Type)
	assert.Equal(t, ConcurrencyLoad{Concurrency: 8, WarmupRequests: 16, WarmupPrompt: WarmupPromptLeading}, tr.Load.Mode)
	assert.Len(t, notes, 2)
	s = benchSpec(t, "", "{tool: genai_perf, output_tokens_mean: 5, ignore_eos: true}")
	tr, _ = s.Traffic.Benchmark.Traffic()
	assert.Equal(t, ConcurrencyLoad{Concurrency: 1}, tr.Load.Mode, "defaults: concurrency 1, no warm-up")
	assert.Equal(t, 10, tr.Source.Type.(SyntheticSource).NumRequests)
}

// inference-perf's client holds at most num_workers × min(worker_max_concurrency,
// worker_max_tcp_connections) requests (100 and 2500 by default); without
// num_workers (the client's CPU count) only the per-worker limit is known.
func TestInferencePerfInFlightCap(t *testing.T) {
	base := "{tool: inference_perf, api: {type: completion, streaming: true}, data: {type: random, input_distribution: {min: 10, max: 10, mean: 10, std_dev: 0, total_count: 100}, output_distribution: {min: 2, max: 2, mean: 2, std_dev: 0, total_count: 100}}, ignore_eos: true, load: {type: constant, stages: [{rate: 1, duration: 10}]%s}}"
	for extra, want := range map[string][2]int{"": {100, 0}, ", num_workers: 4": {400, 1}, ", num_workers: 2, worker_max_concurrency: 3": {6, 1},
		", num_workers: 2, worker_max_concurrency: 5000": {5000, 1}, ", worker_max_concurrency: 7": {7, 0}} {
		ip := benchSpec(t, "", fmt.Sprintf(base, extra)).Traffic.Benchmark.Tool.(InferencePerfBenchmark)
		limit, known := ip.InFlightCap()
		assert.Equal(t, want[0], limit, extra)
		assert.Equal(t, want[1] == 1, known, extra)
	}
	// a concurrent stage of 6000 over 2 workers is 3000 connections a worker: above 2500
	ce := benchErr(t, "{tool: inference_perf, api: {type: completion, streaming: true}, data: {type: random, input_distribution: {min: 10, max: 10, mean: 10, std_dev: 0, total_count: 9000}, output_distribution: {min: 2, max: 2, mean: 2, std_dev: 0, total_count: 9000}}, ignore_eos: true, load: {type: concurrent, num_workers: 2, stages: [{num_requests: 6000, concurrency_level: 6000}]}}")
	assert.Equal(t, "traffic.benchmark.load.worker_max_tcp_connections", ce.Field)
}

// vLLM's client sends the random dataset with ignore_eos from 0.11.1 whether
// --ignore-eos is given or not (main_async, vllm/benchmarks/serve.py: 0.11.0's
// has no such line, 0.11.1's sets args.ignore_eos = True); 0.11.0 and
// InferenceX's fork (vLLM's older benchmark_serving.py) still need the flag.
func TestVLLMRandomIgnoresEOS(t *testing.T) {
	for bench, want := range map[string]bool{
		"{tool: vllm_bench_serve, version: 0.11.1}":                    true,
		"{tool: vllm_bench_serve, version: 0.11.1, ignore_eos: false}": true, // the client overrides the flag
		"{tool: vllm_bench_serve, version: 0.15.1}":                    true,
		"{tool: vllm_bench_serve}":                                     true, // the newest release known
		"{tool: vllm_bench_serve, version: 0.11.0, ignore_eos: true}":  true,
	} {
		assert.Equal(t, want, benchSpec(t, "", bench).Traffic.Benchmark.Tool.(VLLMBenchServe).IgnoreEOS, bench)
	}
	// the engine's release is the client's
	assert.True(t, benchSpec(t, ", backend_version: 0.11.1", "{tool: vllm_bench_serve}").Traffic.Benchmark.Tool.(VLLMBenchServe).IgnoreEOS)
	for _, bench := range []string{"{tool: vllm_bench_serve, version: 0.11.0}", "{tool: vllm_bench_serve, version: 0.8.4, ignore_eos: false}",
		"{tool: vllm_bench_serve, variant: inferencex}"} {
		e := benchErr(t, bench)
		assert.Equal(t, "traffic.benchmark.ignore_eos", e.Field, bench)
	}
	assert.Contains(t, benchErr(t, "{tool: vllm_bench_serve, version: 0.11.0}").Msg, "this is vLLM 0.11.0")
	_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, backend_version: 0.11.0}\ntraffic:\n  benchmark: {tool: vllm_bench_serve}\n"))
	require.Error(t, err)
}

// --num-conversations by AIPerf release: before 0.3.0 another name of
// --num-dataset-entries (10 requests by default, 7 entries); from 0.3.0 the
// measured count (7 requests, 100 entries), refused with --request-count;
// from 0.9.0 a session count beside --request-count (min(20, 7) = 7
// requests) and the entries' fallback (7), a lone --request-count 20 then
// making 20 entries. Unversioned is the oldest rule, as before the field.
func TestAIPerfConversationsByVersion(t *testing.T) {
	base := "{tool: aiperf, output_tokens_mean: 10, ignore_eos: true%s}"
	for _, c := range []struct {
		opts              string
		requests, entries int
	}{
		{", num_conversations: 7", 10, 7},
		{", version: 0.2.0, num_conversations: 7", 10, 7},
		{", version: 0.2.0, num_conversations: 7, num_dataset_entries: 7, request_count: 3", 3, 7},
		{", version: 0.3.0, num_conversations: 7", 7, 100},
		{", version: 0.8.0, num_conversations: 7, num_dataset_entries: 30", 7, 30},
		{", version: 0.9.0, num_conversations: 7", 7, 7},
		{", version: 0.9.0, num_conversations: 7, request_count: 20", 7, 7},
		{", version: 0.13.0, num_conversations: 30, request_count: 20", 20, 30},
		{", version: 0.13.0, request_count: 20", 20, 20},
		{", version: 0.13.0, request_count: 20, num_dataset_entries: 5", 20, 5},
		{", version: 0.13.0", 10, 100},
		{", version: 0.8.0, request_count: 20", 20, 100},
		{", request_count: 20", 20, 100},
	} {
		s := benchSpec(t, "", fmt.Sprintf(base, c.opts))
		tr, _ := s.Traffic.Benchmark.Traffic()
		src := tr.Source.Type.(SyntheticSource)
		assert.Equal(t, c.requests, src.NumRequests, "%s: requests", c.opts)
		assert.Equal(t, c.entries, src.Dataset.Entries, "%s: entries", c.opts)
		again, err := Decode(s.JSON())
		require.NoError(t, err, c.opts)
		assert.Equal(t, string(s.JSON()), string(again.JSON()), "%s: the canonical spec decodes to itself", c.opts)
	}
	for opts, field := range map[string]string{
		", num_conversations: 7, num_dataset_entries: 8":                  "traffic.benchmark.num_conversations",
		", version: 0.4.0, num_conversations: 7, request_count: 8":        "traffic.benchmark.request_count",
		", version: 0.13.0, num_conversations: 0":                         "traffic.benchmark.num_conversations",
		", version: 0.13.0, num_conversations: 5, benchmark_duration: 60": "traffic.benchmark.num_conversations",
		", version: latest": "traffic.benchmark.version",
	} {
		assert.Equal(t, field, benchErr(t, fmt.Sprintf(base, opts)).Field, opts)
	}
}

// A capped rate by AIPerf release: from 0.5.0 an arrival without a free slot
// passes unused (capped_arrival skip); before, and unversioned, it waits.
func TestAIPerfCappedRateByVersion(t *testing.T) {
	for version, want := range map[string]string{"": "", "version: 0.4.0, ": "", "version: 0.5.0, ": CappedSkip, "version: 0.13.0, ": CappedSkip} {
		s := benchSpec(t, "", "{tool: aiperf, "+version+"request_rate: 20, concurrency: 3, output_tokens_mean: 10, ignore_eos: true}")
		tr, _ := s.Traffic.Benchmark.Traffic()
		assert.Equal(t, RateLoad{RateRPS: 20, Arrival: ArrivalPoisson, MaxConcurrency: 3, CappedArrival: want}, tr.Load.Mode, version)
	}
}

// AIPerf's --request-rate-mode: constant gaps, or gamma (from 0.5.0) of
// shape arrival_smoothness: smoothness 4 is a coefficient of variation
// 1/√4 = 0.5; absent, 1 (the Poisson law as a gamma of shape 1).
func TestAIPerfRequestRateMode(t *testing.T) {
	for bench, want := range map[string]RateLoad{
		"{tool: aiperf, request_rate: 5, request_rate_mode: constant":                                     {RateRPS: 5, Arrival: ArrivalConstant},
		"{tool: aiperf, version: 0.5.0, request_rate: 5, request_rate_mode: gamma, arrival_smoothness: 4": {RateRPS: 5, Arrival: ArrivalGamma, CV: 0.5},
		"{tool: aiperf, version: 0.13.0, request_rate: 5, request_rate_mode: gamma":                       {RateRPS: 5, Arrival: ArrivalGamma, CV: 1},
		"{tool: aiperf, request_rate: 5, request_rate_mode: poisson":                                      {RateRPS: 5, Arrival: ArrivalPoisson},
	} {
		tr, _ := benchSpec(t, "", bench+", output_tokens_mean: 10, ignore_eos: true}").Traffic.Benchmark.Traffic()
		assert.Equal(t, want, tr.Load.Mode, bench)
	}
	for bench, field := range map[string]string{
		"{tool: aiperf, request_rate: 5, request_rate_mode: gamma":                                         "traffic.benchmark.request_rate_mode",
		"{tool: aiperf, request_rate_mode: constant":                                                       "traffic.benchmark.request_rate_mode",
		"{tool: aiperf, request_rate: 5, request_rate_mode: concurrency_burst":                             "traffic.benchmark.request_rate_mode",
		"{tool: aiperf, request_rate: 5, arrival_smoothness: 2":                                            "traffic.benchmark.arrival_smoothness",
		"{tool: aiperf, version: 0.5.0, request_rate: 5, request_rate_mode: gamma, arrival_smoothness: -1": "traffic.benchmark.arrival_smoothness",
	} {
		assert.Equal(t, field, benchErr(t, bench+", output_tokens_mean: 10, ignore_eos: true}").Field, bench)
	}
}

// --arrival-smoothness with a rate and no --arrival-pattern: gamma in AIPerf
// 0.5.0–0.8.x and from 0.12.0 (smoothness 4: CV 1/√4 = 0.5), refused by
// 0.9.0–0.11.x and without a version (before 0.5.0 there is no gamma).
func TestAIPerfSmoothnessAloneByVersion(t *testing.T) {
	for _, version := range []string{"0.5.0", "0.8.0", "0.12.0", "0.13.0"} {
		tr, _ := benchSpec(t, "", "{tool: aiperf, version: "+version+", request_rate: 5, arrival_smoothness: 4, output_tokens_mean: 10, ignore_eos: true}").Traffic.Benchmark.Traffic()
		assert.Equal(t, RateLoad{RateRPS: 5, Arrival: ArrivalGamma, CV: 0.5, CappedArrival: ""}, tr.Load.Mode, version)
	}
	for _, version := range []string{"", "version: 0.4.0, ", "version: 0.9.0, ", "version: 0.11.0, "} {
		e := benchErr(t, "{tool: aiperf, "+version+"request_rate: 5, arrival_smoothness: 4, output_tokens_mean: 10, ignore_eos: true}")
		assert.Equal(t, "traffic.benchmark.arrival_smoothness", e.Field, version)
	}
	// an explicit other pattern is refused in every release
	e := benchErr(t, "{tool: aiperf, version: 0.12.0, request_rate: 5, request_rate_mode: constant, arrival_smoothness: 4, output_tokens_mean: 10, ignore_eos: true}")
	assert.Equal(t, "traffic.benchmark.arrival_smoothness", e.Field)
}

// The warm-up's prompts: the dataset's own before 0.11.0 and from 0.13.0
// (--cache-bust none, the default); marked "warmup" at their start in
// 0.11.0 and 0.12.x, and in 0.13.0 under --cache-bust
// warmup_isolation_first_turn: WarmupPromptIsolated.
func TestAIPerfWarmupIsolationByVersion(t *testing.T) {
	for bench, want := range map[string]string{
		"":                                    "",
		"version: 0.10.0, ":                   "",
		"version: 0.11.0, ":                   WarmupPromptIsolated,
		"version: 0.12.0, ":                   WarmupPromptIsolated,
		"version: 0.12.0, cache_bust: none, ": WarmupPromptIsolated,
		"version: 0.13.0, ":                   "",
		"version: 0.13.0, cache_bust: none, ": "",
		"version: 0.13.0, cache_bust: warmup_isolation_first_turn, ": WarmupPromptIsolated,
	} {
		tr, notes := benchSpec(t, "", "{tool: aiperf, "+bench+"concurrency: 4, request_count: 40, warmup_request_count: 8, output_tokens_mean: 10, ignore_eos: true}").Traffic.Benchmark.Traffic()
		assert.Equal(t, ConcurrencyLoad{Concurrency: 4, WarmupRequests: 8, WarmupPrompt: want}, tr.Load.Mode, bench)
		assert.Equal(t, want != "", len(notes) > 0, bench)
	}
	// without a warm-up there is nothing to isolate
	tr, _ := benchSpec(t, "", "{tool: aiperf, version: 0.11.0, concurrency: 4, request_count: 40, output_tokens_mean: 10, ignore_eos: true}").Traffic.Benchmark.Traffic()
	assert.Equal(t, ConcurrencyLoad{Concurrency: 4}, tr.Load.Mode)
	for bench, why := range map[string]string{
		"version: 0.11.0, cache_bust: none":                        "0.12.0 and later",
		"cache_bust: none":                                         "0.12.0 and later",
		"version: 0.12.0, cache_bust: warmup_isolation_first_turn": "0.13.0 and later",
		"version: 0.13.0, cache_bust: warmup_isolation_system":     "shared system prompt",
		"version: 0.13.0, cache_bust: first_turn_prefix":           "not simulated",
		"version: 0.13.0, cache_bust: sometimes":                   "not a target",
	} {
		e := benchErr(t, "{tool: aiperf, "+bench+", concurrency: 4, output_tokens_mean: 10, ignore_eos: true}")
		assert.Equal(t, "traffic.benchmark.cache_bust", e.Field, bench)
		assert.Contains(t, e.Error(), why, bench)
	}
}

// vLLM's --probe-request-rate (0.27.0 and later): 0, its default, sends no
// probes and is taken; above 0 the probes are refused, and so is the option
// under an older client or the InferenceX fork. A benchmark naming no
// version and no engine release is the newest read client, 0.34.0.
func TestVLLMProbeRequestRate(t *testing.T) {
	s := benchSpec(t, "", "{tool: vllm_bench_serve, version: 0.27.0, probe_request_rate: 0, ignore_eos: true}")
	require.NotNil(t, s.Traffic.Benchmark.Tool.(VLLMBenchServe).ProbeRequestRate)
	for bench, why := range map[string]string{
		"version: 0.26.0, probe_request_rate: 0":     "vLLM 0.27.0 and later (this is vLLM 0.26.0)",
		"version: 0.34.0, probe_request_rate: 2":     "2 is not simulated",
		"version: 0.34.0, probe_request_rate: -1":    "≥ 0",
		"variant: inferencex, probe_request_rate: 0": "belongs to variant vllm",
	} {
		e := benchErr(t, "{tool: vllm_bench_serve, "+bench+", max_concurrency: 4, ignore_eos: true}")
		assert.Equal(t, "traffic.benchmark.probe_request_rate", e.Field, bench)
		assert.Contains(t, e.Error(), why, bench)
	}
	s = benchSpec(t, "", "{tool: vllm_bench_serve, ignore_eos: true}")
	assert.Equal(t, "0.34.0", s.Traffic.Benchmark.Tool.(VLLMBenchServe).Version)
}

// A duration run's grace period: 30 s unless given (--benchmark-grace-period),
// except AIPerf 0.9.0–0.11.x, which route no default and so cancel what is in
// flight when the duration ends (0); a grace period without a duration is
// refused, as AIPerf refuses it.
func TestAIPerfGracePeriodByVersion(t *testing.T) {
	for bench, want := range map[string]float64{
		"":                  30,
		"version: 0.8.0, ":  30,
		"version: 0.9.0, ":  0,
		"version: 0.11.0, ": 0,
		"version: 0.11.0, benchmark_grace_period: 5, ": 5,
		"version: 0.12.0, ":                            30,
		"version: 0.13.0, benchmark_grace_period: 0, ": 0,
	} {
		tr, notes := benchSpec(t, "", "{tool: aiperf, "+bench+"concurrency: 2, benchmark_duration: 60, output_tokens_mean: 20, ignore_eos: true}").Traffic.Benchmark.Traffic()
		require.NotNil(t, tr.Stop.GraceS, bench)
		assert.Equal(t, want, *tr.Stop.GraceS, bench)
		assert.Contains(t, notes[0], fmt.Sprintf("grace period (%g s)", want), bench)
	}
	tr, _ := benchSpec(t, "", "{tool: aiperf, concurrency: 2, request_count: 5, output_tokens_mean: 20, ignore_eos: true}").Traffic.Benchmark.Traffic()
	assert.Nil(t, tr.Stop.GraceS, "a count run has no grace period")
	e := benchErr(t, "{tool: aiperf, concurrency: 2, benchmark_grace_period: 5, output_tokens_mean: 20, ignore_eos: true}")
	assert.Equal(t, "traffic.benchmark.benchmark_grace_period", e.Field)
	assert.Contains(t, e.Error(), "needs benchmark_duration")
}

// AIPerf 0.13.0's --random-range-ratio: vllm style [⌊L(1−r)⌋, ⌈L(1+r)⌉]
// (r = 0.1, L = 1000: [900, 1100]; O = 5: [⌊4.5⌋, ⌈5.5⌉] = [4, 6]); sglang
// style [max(1, ⌊L·r⌋), L] (r = 0.25: [250, 1000]; O = 10: [⌊2.5⌋, 10] =
// [2, 10]); r = 0 (vllm) and r = 1 (sglang) are fixed lengths.
func TestAIPerfRandomRangeRatio(t *testing.T) {
	u := func(lo, hi int) Length { return Length{Kind: UniformLength{Min: lo, Max: hi}} }
	f := func(n int) Length { return Length{Kind: FixedLength{Value: n}} }
	for bench, want := range map[string][2]Length{
		"synthetic_input_tokens_mean: 1000, output_tokens_mean: 5, random_range_ratio: 0.1":                                    {u(900, 1100), u(4, 6)},
		"synthetic_input_tokens_mean: 1000, output_tokens_mean: 5, random_range_ratio: 0.1, synthetic_input_tokens_stddev: 50": {u(900, 1100), u(4, 6)},
		"synthetic_input_tokens_mean: 1000, output_tokens_mean: 10, random_range_ratio: 0.25, random_corpus_style: sglang":     {u(250, 1000), u(2, 10)},
		"synthetic_input_tokens_mean: 1000, output_tokens_mean: 10, random_range_ratio: 0":                                     {f(1000), f(10)},
		"synthetic_input_tokens_mean: 1000, output_tokens_mean: 10, random_range_ratio: 1, random_corpus_style: sglang":        {f(1000), f(10)},
	} {
		tr, notes := benchSpec(t, "", "{tool: aiperf, version: 0.13.0, "+bench+", ignore_eos: true}").Traffic.Benchmark.Traffic()
		src := tr.Source.Type.(SyntheticSource)
		assert.Equal(t, want[0], src.ISL, bench)
		assert.Equal(t, want[1], src.OSL, bench)
		require.NotEmpty(t, notes, bench)
		assert.Contains(t, notes[0], "one draw per dataset entry", bench)
	}
	for bench, field := range map[string]string{
		"version: 0.12.0, random_range_ratio: 0.1":                                 "traffic.benchmark.random_range_ratio",
		"version: 0.12.0, random_corpus_style: vllm":                               "traffic.benchmark.random_corpus_style",
		"version: 0.13.0, random_range_ratio: 1":                                   "traffic.benchmark.random_range_ratio",
		"version: 0.13.0, random_range_ratio: 1.5, random_corpus_style: sglang":    "traffic.benchmark.random_range_ratio",
		"version: 0.13.0, random_corpus_style: sharegpt":                           "traffic.benchmark.random_corpus_style",
		"version: 0.13.0, synthetic_input_tokens_mean: 1, random_range_ratio: 0.5": "traffic.benchmark.random_range_ratio",
	} {
		assert.Equal(t, field, benchErr(t, "{tool: aiperf, "+bench+", output_tokens_mean: 10, ignore_eos: true}").Field, bench)
	}
}

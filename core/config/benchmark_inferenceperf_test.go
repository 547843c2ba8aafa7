package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inference-perf's config as traffic: two constant stages (int(rate ×
// duration) = 25 and 12 requests, each spread over its duration, sent from
// 1 s after the stage begins, polled once a second, 2 s apart) of the random
// generator's normal lengths.
func TestInferencePerfStagesAndRandom(t *testing.T) {
	s := benchSpec(t, "", `{tool: inference_perf, version: 0.4.0, api: {type: completion, streaming: true},
    data: {type: random, input_distribution: {min: 10, max: 2000, mean: 500, std_dev: 100, total_count: 100},
           output_distribution: {mean: 200, std_dev: 0, min: 200, max: 200, total_count: 100}},
    load: {type: constant, interval: 2, stages: [{rate: 2.5, duration: 10}, {rate: 1.25, duration: 10}]}}`)
	tool := s.Traffic.Benchmark.Tool.(InferencePerfBenchmark)
	assert.False(t, tool.TokenTimes(), "0.4.0 times SSE messages")
	tr, notes := s.Traffic.Benchmark.Traffic()
	assert.Equal(t, StagedLoad{IntervalS: 2, LeadS: 1, PollS: 1, Stages: []LoadStage{
		{Requests: 25, RateRPS: 2.5, DurationS: 10, Arrival: StageSpread},
		{Requests: 12, RateRPS: 1.25, DurationS: 10, Arrival: StageSpread}}}, tr.Load.Mode)
	assert.Equal(t, SyntheticSource{NumRequests: 37, ISL: Length{Kind: NormalLength{Mean: 500, Std: 100, Min: 10, Max: 2000}},
		OSL: Length{Kind: FixedLength{Value: 200}}}, tr.Source.Type)
	assert.Contains(t, notes[0], "inference-perf 0.4.0: 2 stage(s) of [25 12] requests")
	// the expanded spec validates as a replay
	s.ExpandBenchmark()
	require.NoError(t, s.Validate())
}

// The shared-prefix generator: num_groups × num_prompts_per_group entries
// whose prompts start with their group's system prompt; poisson stages; the
// defaults of inference-perf's SharedPrefix (10 × 10, 100 + 50 tokens, 50 out).
func TestInferencePerfSharedPrefix(t *testing.T) {
	s := benchSpec(t, "", `{tool: inference_perf, api: {streaming: true}, data: {type: shared_prefix, shared_prefix: {num_groups: 4, question_len: 64}},
    load: {type: poisson, stages: [{rate: 3, duration: 20}]}}`)
	tool := s.Traffic.Benchmark.Tool.(InferencePerfBenchmark)
	assert.True(t, tool.TokenTimes(), "the newest release times tokens")
	assert.Equal(t, "completion", tool.API.Type)
	tr, _ := s.Traffic.Benchmark.Traffic()
	assert.Equal(t, StagedLoad{IntervalS: 1, LeadS: 1, PollS: 1, Stages: []LoadStage{{Requests: 60, RateRPS: 3, Arrival: StagePerSecondPoisson}}}, tr.Load.Mode)
	assert.Equal(t, SyntheticSource{NumRequests: 60, ISL: Length{Kind: FixedLength{Value: 64}}, OSL: Length{Kind: FixedLength{Value: 50}},
		Dataset: &Dataset{Entries: 40, Sampling: SamplingShuffle, Prefix: &DatasetPrefix{Groups: 4, Tokens: 100}}}, tr.Source.Type)
	// a concurrent stage is a closed loop of concurrency_level clients
	s = benchSpec(t, "", `{tool: inference_perf, version: 0.3.0, api: {streaming: true}, data: {type: shared_prefix, shared_prefix: {system_prompt_len: 0}},
    load: {type: concurrent, stages: [{num_requests: 30, concurrency_level: 8}]}}`)
	tr, _ = s.Traffic.Benchmark.Traffic()
	assert.Equal(t, []LoadStage{{Requests: 30, Concurrency: 8}}, tr.Load.Mode.(StagedLoad).Stages)
	assert.Nil(t, tr.Source.Type.(SyntheticSource).Dataset.Prefix, "no system prompt: no shared prefix")
}

// What the simulation cannot honour is an error naming the option.
func TestInferencePerfRefused(t *testing.T) {
	const data = `data: {type: random, input_distribution: {mean: 100, std_dev: 10, total_count: 50}, output_distribution: {mean: 20, std_dev: 0, total_count: 50}}`
	for _, c := range []struct{ bench, field, msg string }{
		{`{tool: inference_perf, api: {streaming: false}, ` + data + `, load: {stages: [{rate: 1, duration: 10}]}}`, "traffic.benchmark.api.streaming", "must be true"},
		{`{tool: inference_perf, api: {streaming: true}, ` + data + `, load: {type: trace_replay, stages: [{rate: 1, duration: 10}]}}`, "traffic.benchmark.load.type", `"trace_replay" is not simulated`},
		{`{tool: inference_perf, api: {streaming: true}, ` + data + `, load: {stages: []}}`, "traffic.benchmark.load.stages", "a sweep"},
		{`{tool: inference_perf, api: {streaming: true}, ` + data + `, load: {stages: [{rate: 1, duration: 60}]}}`, "traffic.benchmark.load.stages[0]", "total_count = 50"},
		{`{tool: inference_perf, api: {streaming: true}, data: {type: shareGPT}, load: {stages: [{rate: 1, duration: 10}]}}`, "traffic.benchmark.data.type", `"shareGPT" is not simulated`},
		{`{tool: inference_perf, version: 0.2.0, api: {streaming: true}, ` + data + `, load: {type: concurrent, stages: [{num_requests: 5, concurrency_level: 2}]}}`, "traffic.benchmark.load.type", "concurrent came with inference-perf 0.3.0"},
		{`{tool: inference_perf, version: 0.4.0, api: {streaming: true}, data: {type: random, input_distribution: {type: uniform, total_count: 9}, output_distribution: {total_count: 9}}, load: {stages: [{rate: 1, duration: 5}]}}`, "traffic.benchmark.data.input_distribution.type", "came with inference-perf 0.5.0"},
		{`{tool: inference_perf, api: {streaming: true}, data: {type: random, input_distribution: {type: lognormal, total_count: 9}, output_distribution: {total_count: 9}}, load: {stages: [{rate: 1, duration: 5}]}}`, "traffic.benchmark.data.input_distribution.type", `"lognormal" is not simulated`},
		{`{tool: inference_perf, api: {streaming: true}, ignore_eos: false, ` + data + `, load: {stages: [{rate: 1, duration: 10}]}}`, "traffic.benchmark.ignore_eos", "must be true"},
		{`{tool: inference_perf, version: x.1, api: {streaming: true}, ` + data + `, load: {stages: [{rate: 1, duration: 10}]}}`, "traffic.benchmark.version", "not an inference-perf release"},
	} {
		e := benchErr(t, c.bench)
		assert.Equal(t, c.field, e.Field, c.bench)
		assert.Contains(t, e.Msg, c.msg, c.bench)
	}
}

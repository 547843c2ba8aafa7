package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// vLLM's speculative decoding through the replay: one DeepSeek-R1 request of
// 100 prompt and 12 output tokens, 3 MTP drafts a step, on the linear engine
// (a prefill pass 2.0 + 100 · 0.01 = 3.0 ms, a decode step 2.0 + 0.1 = 2.1
// ms: the linear model prices neither the drafts verified nor the draft's
// passes). After the prefill's token 11 are left:
//   - acceptance_rates [0.75, 0.5, 0.5]: 0.75 + 0.375 + 0.1875 = 1.3125
//     drafts a step, carried in fractions (1.3125, 2.625 − 1, …): steps of 2,
//     2, 2, 3, 2 tokens, 5 steps, the end at 3.0 + 5 · 2.1 = 13.5 ms;
//   - left out, AIConfigurator's 0.85, 0.3, 0: 1.105 a step, 2 tokens a
//     step: 6 steps, 3.0 + 6 · 2.1 = 15.6 ms;
//   - acceptance_rate 0.85 for every draft: ≈ 2.19 a step, steps of 3, 3, 3
//     and the last 2: 4 steps, 3.0 + 4 · 2.1 = 11.4 ms;
//   - eagle3, acceptance_rates [0]: no draft accepted, 11 steps, 3.0 + 11 · 2.1 = 26.1 ms.
func TestVLLMSpecDecodeTimeline(t *testing.T) {
	needSharedConfigs(t)
	for _, tc := range []struct {
		spec   string
		passes int64
		endMs  float64
	}{
		{`method: mtp, num_speculative_tokens: 3, acceptance_rates: [0.75, 0.5, 0.5]`, 6, 13.5},
		{`method: mtp, num_speculative_tokens: 3`, 7, 15.6},
		{`method: mtp, num_speculative_tokens: 3, acceptance_rate: 0.85`, 5, 11.4},
		{`method: eagle3, model: some/eagle3-head, num_speculative_tokens: 3, acceptance_rates: [0]`, 12, 26.1},
	} {
		rep := runYAML(t, fmt.Sprintf(`
engine:
  model: deepseek-ai/DeepSeek-R1
  model_config_dir: %s
  system: h200_sxm
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  workers: {aggregated: {count: 1, tp: 8}}
  scheduler: {max_num_seqs: 8, speculative_config: {%s}}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 100, osl: 12}
  load: {mode: concurrency, concurrency: 1}
`, sharedModelConfigs, tc.spec))
		assertSpecTimeline(t, rep, tc.spec, tc.passes, tc.endMs)
	}
}

// assertSpecTimeline checks the speculative-decoding replays of one request
// of 100 prompt and 12 output tokens on the linear engine (its first token
// at 3.0 ms): its tokens, its end at endMs and the worker's passes.
func assertSpecTimeline(t *testing.T, rep *report.Report, label string, passes int64, endMs float64) {
	t.Helper()
	require.Len(t, rep.Records, 1, label)
	assert.Equal(t, 12, rep.Records[0].OutputTokens, label)
	assert.InDelta(t, 3.0, msOf(rep.Records[0].FirstTokenNs), 1e-9, label)
	assert.InDelta(t, endMs, msOf(rep.Records[0].EndNs), 1e-9, label)
	assert.Equal(t, passes, rep.Metadata.Pools[0].WorkerPasses[0], label)
}

// speculative_config's refusals name the field: a method not modelled
// (ngram's drafts are matched on the CPU), num_speculative_tokens left out,
// acceptance rates beyond the drafts or out of [0, 1], both acceptance
// fields, mtp on a model without MTP layers (Qwen3-32B), and with another
// backend engine.scheduler's speculative_config itself.
func TestVLLMSpecDecodeRefusals(t *testing.T) {
	needSharedConfigs(t)
	spec := func(model, backend, sc string) string {
		return fmt.Sprintf(`
engine:
  model: %s
  model_config_dir: %s
  system: h200_sxm
  backend: %s
  perf: {source: roofline}
  workers: {aggregated: {count: 1, tp: 8}}
  scheduler: {speculative_config: {%s}}
traffic:
  source: {type: synthetic, num_requests: 2, isl: 100, osl: 5}
  load: {mode: concurrency, concurrency: 1}
`, model, sharedModelConfigs, backend, sc)
	}
	const r1 = "deepseek-ai/DeepSeek-R1"
	for _, tc := range []struct{ model, backend, sc, field, msg string }{
		{r1, "vllm", `method: ngram, num_speculative_tokens: 3`, "engine.scheduler.speculative_config.method", `"ngram" is not modelled`},
		{r1, "vllm", `method: medusa, num_speculative_tokens: 3`, "engine.scheduler.speculative_config.method", `"medusa" is not modelled`},
		{r1, "vllm", `method: mtp`, "engine.scheduler.speculative_config.num_speculative_tokens", "is required"},
		{r1, "vllm", `method: mtp, num_speculative_tokens: 2, acceptance_rates: [0.5, 0.5, 0.5]`,
			"engine.scheduler.speculative_config.acceptance_rates", "more than the 2 drafts of num_speculative_tokens"},
		{r1, "vllm", `method: mtp, num_speculative_tokens: 2, acceptance_rates: [0.5, 1.5]`,
			"engine.scheduler.speculative_config.acceptance_rates[1]", ""},
		{r1, "vllm", `method: mtp, num_speculative_tokens: 2, acceptance_rates: [0.5], acceptance_rate: 0.5`,
			"engine.scheduler.speculative_config.acceptance_rates", "not both"},
		{"Qwen/Qwen3-32B", "vllm", `method: mtp, num_speculative_tokens: 1`, "engine.scheduler.speculative_config.method", "has none"},
		{r1, "trtllm", `method: mtp, num_speculative_tokens: 1`, "engine.scheduler.speculative_config", "engine.trtllm (speculative_config)"},
	} {
		_, err := runYAMLErr(spec(tc.model, tc.backend, tc.sc))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, tc.sc)
		assert.Equal(t, tc.field, ce.Field, tc.sc)
		assert.Contains(t, ce.Msg, tc.msg, tc.sc)
	}
	rep := runYAML(t, spec(r1, "vllm", `method: mtp, num_speculative_tokens: 2`))
	assert.Equal(t, 2, rep.Summary.Completed)
}

// vLLM 0.12.0 captures CUDA graphs up to 2 × max_num_seqs tokens whatever
// the drafts, and with max_num_seqs 1 and 2 drafts no size rounds to a
// multiple of 3 within 2: CompilationConfig.adjust_cudagraph_sizes_for_spec_decode
// raises "No valid cudagraph sizes after rounding", and so is the spec
// refused; 0.13.0's limit, 1 × 3 × 2 = 6, holds 3 and 6.
func TestVLLMSpecDecodeNoCUDAGraphSize(t *testing.T) {
	needSharedConfigs(t)
	const spec = `
engine:
  model: deepseek-ai/DeepSeek-R1
  model_config_dir: %s
  system: h200_sxm
  backend_version: %s
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  workers: {aggregated: {count: 1, tp: 8}}
  scheduler: {max_num_seqs: 1, speculative_config: {method: mtp, num_speculative_tokens: 2}}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 100, osl: 12}
  load: {mode: concurrency, concurrency: 1}
`
	s, err := config.DecodeYAML([]byte(fmt.Sprintf(spec, sharedModelConfigs, "0.12.0")))
	require.NoError(t, err)
	_, err = Run(s)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "engine.scheduler.speculative_config.num_speculative_tokens", ce.Field)
	assert.Contains(t, ce.Msg, "refuses to start")
	runYAML(t, fmt.Sprintf(spec, sharedModelConfigs, "0.13.0"))
}

package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An engine's launch flag written in the block where a user carries it over
// from `vllm serve` / `python -m sglang.launch_server` / trtllm-serve's
// extra_llm_api_options is an unknown field whose error names the field that
// sets it here; a key that is a known one spelt with dashes is named in its
// field spelling. A key that is no option of any engine keeps the plain error.
func TestUnknownFieldNamesWhereTheOptionGoes(t *testing.T) {
	const traffic = "\ntraffic: {source: {type: synthetic, num_requests: 10, isl: 8, osl: 8}, load: {mode: concurrency, concurrency: 1}}\n"
	cases := []struct{ name, engine, field, hint string }{
		{"vLLM's tensor_parallel_size in engine.scheduler",
			`{model: m, system: h100_sxm, scheduler: {tensor_parallel_size: 2}}`,
			"engine.scheduler.tensor_parallel_size", "engine.workers.aggregated.tp"},
		{"vLLM's kv_cache_dtype in engine.scheduler",
			`{model: m, system: h100_sxm, scheduler: {kv_cache_dtype: fp8}}`,
			"engine.scheduler.kv_cache_dtype", "engine.quantization.kv_cache"},
		{"vLLM's quantization in engine.scheduler",
			`{model: m, system: h100_sxm, scheduler: {quantization: fp8}}`,
			"engine.scheduler.quantization", "engine.quantization.weights"},
		{"vLLM's enable_chunked_prefill",
			`{model: m, system: h100_sxm, scheduler: {enable_chunked_prefill: false}}`,
			"engine.scheduler.enable_chunked_prefill", "always chunks"},
		{"vLLM's data_parallel_size in engine.scheduler",
			`{model: m, system: h100_sxm, scheduler: {data_parallel_size: 2}}`,
			"engine.scheduler.data_parallel_size", "engine.workers.aggregated.data_parallel_size"},
		{"pipeline parallelism",
			`{model: m, system: h100_sxm, scheduler: {pipeline_parallel_size: 2}}`,
			"engine.scheduler.pipeline_parallel_size", "pipeline parallelism is not simulated"},
		{"a flag's dashes",
			`{model: m, system: h100_sxm, scheduler: {max-num-seqs: 8}}`,
			"engine.scheduler.max-num-seqs", "write it max_num_seqs"},
		{"a flag's dashes, of an option that goes elsewhere",
			`{model: m, system: h100_sxm, scheduler: {--tensor-parallel-size: 2}}`,
			"engine.scheduler.--tensor-parallel-size", "engine.workers.aggregated.tp"},
		{"vLLM's arguments in engine itself",
			`{model: m, system: h100_sxm, max_num_seqs: 8}`,
			"engine.max_num_seqs", "engine.scheduler.max_num_seqs"},
		{"the pool's tp under vLLM's name",
			`{model: m, system: h100_sxm, workers: {aggregated: {count: 1, tensor_parallel_size: 2}}}`,
			"engine.workers.aggregated.tensor_parallel_size", "write it tp"},
		{"SGLang's --enable-dp-attention on a pool",
			`{model: m, system: h100_sxm, workers: {aggregated: {count: 1, tp: 2, enable_dp_attention: true}}}`,
			"engine.workers.aggregated.enable_dp_attention", "write it data_parallel_size"},
		{"SGLang's tp_size in engine.sglang",
			`{model: m, system: h100_sxm, backend: sglang, sglang: {tp_size: 4}}`,
			"engine.sglang.tp_size", "engine.workers.aggregated.tp"},
		{"SGLang's enable_dp_attention in engine.sglang",
			`{model: m, system: h100_sxm, backend: sglang, sglang: {enable_dp_attention: true}}`,
			"engine.sglang.enable_dp_attention", "engine.workers.aggregated.data_parallel_size"},
		{"TensorRT-LLM's tensor_parallel_size in engine.trtllm",
			`{model: m, system: h100_sxm, backend: trtllm, trtllm: {tensor_parallel_size: 2}}`,
			"engine.trtllm.tensor_parallel_size", "engine.workers.aggregated.tp"},
		{"TensorRT-LLM's kv_cache_config.dtype",
			`{model: m, system: h100_sxm, backend: trtllm, trtllm: {kv_cache_config: {dtype: fp8}}}`,
			"engine.trtllm.kv_cache_config.dtype", "engine.quantization.kv_cache"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeYAML([]byte("engine: " + c.engine + traffic))
			var ce *Error
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, c.field, ce.Field)
			assert.Contains(t, ce.Msg, "unknown field: ")
			assert.Contains(t, ce.Msg, c.hint)
			assert.Contains(t, ce.Msg, "(known: ", "the block's fields are still listed")
		})
	}
	t.Run("a key of no engine keeps the plain error", func(t *testing.T) {
		_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, scheduler: {bogus: 1}}" + traffic))
		var ce *Error
		require.True(t, errors.As(err, &ce), "got %v", err)
		assert.Equal(t, "engine.scheduler.bogus", ce.Field)
		assert.Regexp(t, `^unknown field \(known: max_num_seqs, `, ce.Msg)
	})
	t.Run("a union block's key spelt with dashes", func(t *testing.T) {
		_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm}\ntraffic: {source: {type: synthetic, num_requests: 10, isl: 8, osl: 8}, load: {mode: rate, rate-rps: 4}}\n"))
		var ce *Error
		require.True(t, errors.As(err, &ce), "got %v", err)
		assert.Equal(t, "traffic.load.rate-rps", ce.Field)
		assert.Contains(t, ce.Msg, "write it rate_rps")
	})
}

// A load generator's option names written in traffic's blocks name the field.
func TestUnknownLoadFieldsNameTheField(t *testing.T) {
	cases := []struct{ traffic, field, hint string }{
		{"{source: {type: synthetic, num_prompts: 10, isl: 8, osl: 8}, load: {mode: concurrency, concurrency: 1}}",
			"traffic.source.num_prompts", "write it num_requests"},
		{"{source: {type: synthetic, num_requests: 10, random_input_len: 8, osl: 8}, load: {mode: concurrency, concurrency: 1}}",
			"traffic.source.random_input_len", "write it isl"},
		{"{source: {type: synthetic, num_requests: 10, isl: 8, osl: 8}, load: {mode: rate, request_rate: 4}}",
			"traffic.load.request_rate", "write it rate_rps"},
		{"{source: {type: synthetic, num_requests: 10, isl: 8, osl: 8}, load: {mode: rate, rate_rps: 4, burstiness: 0.5}}",
			"traffic.load.burstiness", "vLLM's --burstiness is a gamma arrival's shape: give arrival: gamma with cv = 1/√burstiness"},
	}
	for _, c := range cases {
		_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm}\ntraffic: " + c.traffic + "\n"))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%s: got %v", c.traffic, err)
		assert.Equal(t, c.field, ce.Field)
		assert.Contains(t, ce.Msg, "unknown field: "+c.hint)
	}
}

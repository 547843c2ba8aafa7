package config

import (
	"reflect"
	"strings"
)

// Where this config takes an engine option that a user carries over from the
// engine's launch flags into the wrong block. A deployment's parallelism is
// the worker pools' (engine.workers.<pool>: tp, data_parallel_size,
// enable_expert_parallel), and the weight and KV cache formats are
// engine.quantization's, while engine.scheduler, engine.sglang and
// engine.trtllm hold each engine's remaining options under the engine's own
// names. An unknown field that is such an option gets the field that sets it
// in its error (unknownFieldHint), beside the block's known fields.
//
// The option names are the engines' own: vLLM's EngineArgs
// (vllm/engine/arg_utils.py: tensor_parallel_size, data_parallel_size,
// pipeline_parallel_size, enable_expert_parallel, kv_cache_dtype,
// quantization, enable_chunked_prefill), SGLang's ServerArgs
// (python/sglang/srt/server_args.py: tp_size, dp_size, enable_dp_attention,
// kv_cache_dtype, quantization) and TensorRT-LLM's LLM API arguments
// (tensorrt_llm/llmapi/llm_args.py: tensor_parallel_size,
// pipeline_parallel_size, kv_cache_config.dtype).

const (
	hintTP = "the tensor-parallel size is a worker pool's tp here " +
		"(engine.workers.aggregated.tp, or engine.workers.disaggregated.prefill.tp / .decode.tp)"
	hintDP = "data parallelism is a worker pool's data_parallel_size here " +
		"(engine.workers.aggregated.data_parallel_size, or a P/D pool's; with engine.backend sglang " +
		"it is DP attention, --dp-size with --enable-dp-attention)"
	hintEP = "expert parallelism is a worker pool's enable_expert_parallel here " +
		"(engine.workers.aggregated.enable_expert_parallel, or a P/D pool's)"
	hintPP = "pipeline parallelism is not simulated: a worker is tp × data_parallel_size GPUs " +
		"(engine.workers.aggregated)"
	hintKV = "the KV cache format is engine.quantization.kv_cache here " +
		"(vLLM's --kv-cache-dtype names: auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2)"
	hintQuant = "the weight format is engine.quantization.weights here " +
		"(bfloat16, fp8, fp8_block, nvfp4; absent: the checkpoint's)"
	hintChunked = "not a setting here: vLLM's V1 scheduler, the one modelled, always chunks a " +
		"prompt longer than max_num_batched_tokens (core/config/vllm_startup.go); leave it out"
	hintCount = "the number of servers is a worker pool's count here (engine.workers.aggregated.count)"
)

// parallelHints are the names of the launch flags of parallelism and formats,
// as vLLM, SGLang and TensorRT-LLM spell them, which every engine block and
// the pools share.
var parallelHints = map[string]string{
	"tensor_parallel_size":     hintTP,
	"tp_size":                  hintTP,
	"data_parallel_size":       hintDP,
	"dp_size":                  hintDP,
	"enable_dp_attention":      hintDP,
	"pipeline_parallel_size":   hintPP,
	"pp_size":                  hintPP,
	"enable_expert_parallel":   hintEP,
	"kv_cache_dtype":           hintKV,
	"quantization":             hintQuant,
	"enable_chunked_prefill":   hintChunked,
	"num_replicas":             hintCount,
	"replicas":                 hintCount,
	"moe_expert_parallel_size": "expert parallelism is a worker pool's enable_expert_parallel here, or engine.trtllm.moe_expert_parallel_size with engine.backend trtllm",
}

// unknownFieldHint is the sentence that says where key, unknown in block
// type t, is set in this config, or "" when there is none to say: an
// engine's launch flag given in another block (parallelHints), vLLM's
// arguments given in engine instead of engine.scheduler, a key that is a
// known one spelt with dashes, as a command line spells it (--max-num-seqs
// for max_num_seqs), and TensorRT-LLM's kv_cache_config.dtype.
func unknownFieldHint(t reflect.Type, key string, known []string) string {
	if u := strings.ReplaceAll(strings.TrimLeft(key, "-"), "-", "_"); u != key {
		for _, k := range known {
			if k == u {
				return "write it " + u + " (the flag --" + strings.ReplaceAll(u, "_", "-") + " as a field)"
			}
		}
		key = u // a flag spelling of a name below: the same hint
	}
	switch t {
	case reflect.TypeOf(Pool{}):
		switch key {
		case "tensor_parallel_size", "tp_size":
			return "write it tp (the tensor-parallel size of one worker)"
		case "dp_size", "enable_dp_attention":
			return "write it data_parallel_size (with engine.backend sglang it is DP attention, --dp-size with --enable-dp-attention)"
		case "num_replicas", "replicas", "num_workers", "workers":
			return "write it count (the number of servers in the pool)"
		}
	case reflect.TypeOf(Load{}):
		switch key {
		case "request_rate":
			return "write it rate_rps (mode rate), the load generator's --request-rate"
		case "burstiness":
			return "vLLM's --burstiness is a gamma arrival's shape: give arrival: gamma with cv = 1/√burstiness " +
				"(vllm/benchmarks/serve.py draws gaps of shape burstiness)"
		}
	case reflect.TypeOf(Source{}):
		switch key {
		case "num_prompts", "request_count":
			return "write it num_requests (a synthetic source's), the load generator's --num-prompts / --request-count"
		case "input_len", "random_input_len", "input_length", "synthetic_input_tokens_mean":
			return "write it isl (a synthetic source's input length, a number or a distribution)"
		case "output_len", "random_output_len", "output_length", "output_tokens_mean":
			return "write it osl (a synthetic source's output length, a number or a distribution)"
		}
	case reflect.TypeOf(TRTLLMKVCacheConfig{}):
		if key == "dtype" {
			return hintKV
		}
	case reflect.TypeOf(Engine{}):
		if sched, _ := fieldsOf(reflect.TypeOf(Scheduler{})); hasKey(sched, key) {
			return "vLLM's engine arguments go in engine.scheduler (engine.scheduler." + key +
				"; with engine.backend sglang or trtllm, that engine's own block: engine.sglang, engine.trtllm)"
		}
	}
	switch t {
	case reflect.TypeOf(Engine{}), reflect.TypeOf(Scheduler{}), reflect.TypeOf(SGLang{}),
		reflect.TypeOf(TRTLLM{}), reflect.TypeOf(Pool{}), reflect.TypeOf(PoolScheduler{}):
		return parallelHints[key]
	}
	return ""
}

// unknownField is the error of key, unknown at path in a block of type t
// whose keys are known: "unknown field", the hint when there is one, and the
// known keys.
func unknownField(t reflect.Type, path, key string, known []string) *Error {
	if h := unknownFieldHint(t, key, known); h != "" {
		return errorf(join(path, clip(key)), "unknown field: %s (known: %s)", h, strings.Join(known, ", "))
	}
	return errorf(join(path, clip(key)), "unknown field (known: %s)", strings.Join(known, ", "))
}

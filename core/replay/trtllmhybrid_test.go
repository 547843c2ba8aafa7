package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// trtllmHybridSpec is a hybrid model on one h200_sxm served by TensorRT-LLM
// (roofline) at release version, max_batch_size 64, max_num_tokens 8192,
// free_gpu_memory_fraction 0.9, with kv_cache_config extra.
func trtllmHybridSpec(t *testing.T, name, version, kvExtra string) string {
	needSharedConfigs(t)
	return fmt.Sprintf(`
engine:
  model: %s
  model_config_dir: %s
  system: h200_sxm
  backend: trtllm
  backend_version: %s
  perf: {source: roofline}
  workers: {aggregated: {count: 1, tp: 1}}
  trtllm:
    max_batch_size: 64
    max_num_tokens: 8192
    kv_cache_config: {free_gpu_memory_fraction: 0.9%s}
traffic:
  source: {type: synthetic, num_requests: 8, isl: 1000, osl: 20}
  load: {mode: concurrency, concurrency: 4}
`, name, sharedModelConfigs, version, kvExtra)
}

// TensorRT-LLM's MambaHybridCacheManager for Qwen3.5-35B-A3B on one H200
// (docs/trtllm.md, "Hybrid models"). From its config.json: 40 layers, 30
// linear_attention (linear_num_key_heads 16, linear_key_head_dim 128,
// linear_num_value_heads 32, linear_value_head_dim 128,
// linear_conv_kernel_dim 4), 10 full_attention (2 KV heads of head_dim
// 256). Per state layer and slot: conv_dim = 32·128 + 2·16·128 = 8,192
// channels of 3 bf16 taps, 49,152 bytes, and the SSM state 32·128·128 at
// mamba_ssm_cache_dtype auto = the model's bf16 (not config.json's
// mamba_ssm_dtype float32, which vLLM follows), 1,048,576 bytes: 1,097,728
// a layer, 32,931,840 a request. 64 slots (max_batch_size) take
// 2,107,637,760 bytes before the KV cache is sized: its blocks are
// ⌊0.9 · (budget − 2,107,637,760) / (20,480 · 32)⌋, 20,480 the bytes of a
// token in the 10 attention layers (2·256·2·2 each), 32 tokens_per_block.
func TestTRTLLMHybridMemorySplit(t *testing.T) {
	rep := runYAML(t, trtllmHybridSpec(t, "Qwen/Qwen3.5-35B-A3B", "1.3.0rc18", ", enable_block_reuse: false"))
	assert.Equal(t, 8, rep.Summary.Completed)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, 64, args["mamba_cache_slots"])
	assert.Equal(t, int64(30*(3*8192*2+32*128*128*2)), args["state_bytes_per_slot"])
	assert.Equal(t, int64(32_931_840), args["state_bytes_per_slot"])
	assert.Equal(t, int64(64*32_931_840), args["state_bytes"])
	assert.Equal(t, 32, rep.Metadata.BlockSize, "tokens_per_block: no vLLM-style attention block")

	arch, err := model.Load("Qwen/Qwen3.5-35B-A3B", sharedModelConfigs)
	require.NoError(t, err)
	require.Equal(t, int64(20_480), arch.KVBytesPerToken(1, 2))
	sys, _ := hardware.Builtin("h200_sxm")
	plan, err := perf.PlanMemoryParallel(arch, sys, model.Parallel{TP: 1, DP: 1}, model.BF16, 8192, 64, 1, 32)
	require.NoError(t, err)
	want := int(0.9 * float64(plan.KVBudgetBytes-2_107_637_760) / float64(20_480*32))
	assert.Equal(t, want, *rep.Metadata.NumGPUBlocks)
	without := int(0.9 * float64(plan.KVBudgetBytes) / float64(20_480*32))
	assert.Equal(t, 2_107_637_760*9/10/(20_480*32), without-want, "the states' 0.9 share, in blocks (±1 of rounding)")
}

// Nemotron-3-Nano's 23 Mamba-2 layers (mamba_num_heads 64 of head_dim 64,
// n_groups 8 of ssm_state_size 128, conv_kernel 4): conv (4096 + 2·1024)
// channels · 3 · 2 = 36,864 bytes and the SSM state 64·64·128 · 2 (bf16,
// mamba_ssm_cache_dtype auto; vLLM keeps config.json's float32) = 1,048,576
// a layer, 24,965,120 a request. Nano has no latent experts, so the default
// release (1.2.0rc6.post1) serves it.
func TestTRTLLMHybridNemotronState(t *testing.T) {
	rep := runYAML(t, trtllmHybridSpec(t, "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "1.2.0rc6.post1", ", enable_block_reuse: false"))
	assert.Equal(t, 8, rep.Summary.Completed)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, int64(23*(3*(4096+2*1024)*2+64*64*128*2)), args["state_bytes_per_slot"])
	assert.Equal(t, int64(24_965_120), args["state_bytes_per_slot"])
}

// What TensorRT-LLM refuses: a release before the architecture's support
// (Qwen3.5 from 1.3.0, v1.3.0rc9's notes; Nemotron-H's latent experts from
// 1.2.0), and block reuse on (MambaHybridCacheManager asserts it off).
func TestTRTLLMHybridRefusals(t *testing.T) {
	_, err := runYAMLErr(trtllmHybridSpec(t, "Qwen/Qwen3.5-35B-A3B", "1.2.0rc6", ", enable_block_reuse: false"))
	assert.ErrorContains(t, err, "engine.backend_version: TensorRT-LLM 1.2.0 does not serve")
	assert.ErrorContains(t, err, "supports it from 1.3.0")
	_, err = runYAMLErr(trtllmHybridSpec(t, "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "1.1.0", ", enable_block_reuse: false"))
	assert.ErrorContains(t, err, "latent experts")
	_, err = runYAMLErr(trtllmHybridSpec(t, "Qwen/Qwen3.5-35B-A3B", "1.3.0rc18", ""))
	assert.ErrorContains(t, err, "engine.trtllm.kv_cache_config.enable_block_reuse")
	assert.ErrorContains(t, err, "requires block reuse to be disabled")
}

// P/D of a hybrid model on TensorRT-LLM moves the state its mamba cache
// manager holds, with the SSM state at bf16: Qwen3.5-35B-A3B's 1,000-token
// prompt at 100,000 KV bytes a token and 50 GB/s, 2,000,000 ns of KV, plus
// 32,931,840 bytes of state (TestTRTLLMHybridMemorySplit) in 658,637 ns,
// plus 0.1 ms: 2,758,637 ns (vLLM's fp32 state would take 1,287,782 ns).
func TestTRTLLMHybridPDMovesTheState(t *testing.T) {
	yml := replaceOnce(trtllmHybridSpec(t, "Qwen/Qwen3.5-35B-A3B", "1.3.0rc18", ", enable_block_reuse: false"),
		"workers: {aggregated: {count: 1, tp: 1}}",
		"workers: {disaggregated: {prefill: {count: 1, tp: 1}, decode: {count: 1, tp: 1}, kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.1, kv_bytes_per_token: 100000}}}")
	rep := runYAML(t, yml)
	require.Equal(t, 8, rep.Summary.Completed)
	for _, r := range rep.Records {
		assert.InDelta(t, 2_758_637, r.TransferNs, 1)
	}
}

// TensorRT-LLM's default max_batch_size (2048) of Qwen3.5-35B-A3B's states,
// 2048 · 32,931,840 bytes = 62.81 GiB, leave one H100 no KV block (the
// weights and activations leave 11.25 GiB: −51.56 after the states), where
// 64 slots leave blocks: the error names max_batch_size and the states.
func TestTRTLLMHybridStatesTakeTheMemory(t *testing.T) {
	yml := replaceOnce(trtllmHybridSpec(t, "Qwen/Qwen3.5-35B-A3B", "1.3.0rc18", ", enable_block_reuse: false"),
		"system: h200_sxm", "system: h100_sxm")
	runYAML(t, yml)
	_, err := runYAMLErr(replaceOnce(yml, "max_batch_size: 64", "max_batch_size: 2048"))
	assert.ErrorContains(t, err, "engine.trtllm.max_batch_size")
	assert.ErrorContains(t, err, "2048 recurrent-state slots")
	assert.ErrorContains(t, err, "62.81 GiB")
	assert.ErrorContains(t, err, "of -51.56 GiB")
}

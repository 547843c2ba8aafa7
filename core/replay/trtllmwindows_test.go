package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// gptOSSTRTLLMSpec is gpt-oss-120b at TP 1 on one h200_sxm served by
// TensorRT-LLM release version (roofline), max_batch_size 64,
// free_gpu_memory_fraction 0.9, with kv_cache_config extra.
func gptOSSTRTLLMSpec(t *testing.T, version, kvExtra string) string {
	needSharedConfigs(t)
	return fmt.Sprintf(`
engine:
  model: openai/gpt-oss-120b
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
  source: {type: synthetic, num_requests: 4, isl: 1000, osl: 20}
  load: {mode: concurrency, concurrency: 2}
`, sharedModelConfigs, version, kvExtra)
}

// gpt-oss-120b's KV cache under TensorRT-LLM at TP 1 (trtllmWindows). Its
// config.json: 36 layers (18 sliding_attention of a 128-token window, 18
// full_attention), 8 KV heads of head_dim 64, bf16 KV: one layer's K and V
// of a token is 8·64·2·2 = 2,048 bytes, every layer 73,728, the 18
// full-attention layers 36,864. The budget is the profiling run's
// (PlanMemoryParallel at utilization 1, no sliding-window reserve), of which
// the cache takes 0.9, in blocks of 32 tokens:
//
//	max_attention_window absent: ⌊0.9 · budget / (73,728 · 32)⌋, every layer full-length
//	[128, 131072] (1.2): two pools of 18 layers, each 1/2 of the memory:
//	                     ⌊0.9 · budget / (2 · 36,864 · 32)⌋, the same blocks
//	[128, 128, 131072]:  layer i's window is w[i mod 3]: 24 sliding layers,
//	                     12 full (24,576 bytes a token): ⌊0.9 · budget / (2 · 24,576 · 32)⌋
//
// where vLLM's plan (the simulation's before) ran 36,864 bytes a token after
// reserving 64 sequences' windows.
func TestTRTLLMWindowsGPTOSS(t *testing.T) {
	arch, err := model.Load("openai/gpt-oss-120b", sharedModelConfigs)
	require.NoError(t, err)
	require.Equal(t, 36, arch.Layers)
	require.Equal(t, 18, arch.SlidingLayers())
	require.Equal(t, int64(36_864), arch.KVBytesPerToken(1, 2), "the full-attention layers alone")
	sys, _ := hardware.Builtin("h200_sxm")
	plan, err := perf.PlanMemoryParallel(arch, sys, model.Parallel{TP: 1, DP: 1}, model.BF16, 8192, 0, 1, 32)
	require.NoError(t, err)
	require.Zero(t, plan.SlidingBytes)
	budget := 0.9 * float64(plan.KVBudgetBytes)

	whole := int(budget / float64(73_728*32))
	t.Run("unset: every layer full-length", func(t *testing.T) {
		rep := runYAML(t, gptOSSTRTLLMSpec(t, "1.2.0rc6.post1", ""))
		assert.Equal(t, 4, rep.Summary.Completed)
		assert.Equal(t, whole, *rep.Metadata.NumGPUBlocks)
		assert.Equal(t, int64(73_728), *rep.Metadata.KVBytesPerToken)
		vllmPlan, err := perf.PlanMemoryParallel(arch, sys, model.Parallel{TP: 1, DP: 1}, model.BF16, 8192, 64, 1, 32)
		require.NoError(t, err)
		before := int(0.9 * float64(vllmPlan.KVBudgetBytes) / float64(36_864*32))
		assert.InDelta(t, 2, float64(before)/float64(whole), 0.01, "about half the tokens vLLM's sliding-window plan held")
	})
	t.Run("one size: the same", func(t *testing.T) {
		rep := runYAML(t, gptOSSTRTLLMSpec(t, "1.2.0rc6.post1", ", max_attention_window: [4096]"))
		assert.Equal(t, whole, *rep.Metadata.NumGPUBlocks)
	})
	t.Run("two sizes at 1.2: equal shares", func(t *testing.T) {
		rep := runYAML(t, gptOSSTRTLLMSpec(t, "1.2.0rc6.post1", ", max_attention_window: [128, 131072]"))
		assert.Equal(t, int(budget/float64(2*36_864*32)), *rep.Metadata.NumGPUBlocks)
		assert.Equal(t, int64(36_864), *rep.Metadata.KVBytesPerToken, "the full-attention pool's token")
	})
	t.Run("two sizes, 24 sliding layers", func(t *testing.T) {
		rep := runYAML(t, gptOSSTRTLLMSpec(t, "1.2.1", ", max_attention_window: [128, 128, 131072]"))
		assert.Equal(t, int(budget/float64(2*24_576*32)), *rep.Metadata.NumGPUBlocks)
	})
	t.Run("max_tokens: a cap on the memory of every layer's tokens", func(t *testing.T) {
		// one pool: ⌊100,000 / 32⌋ = 3,125; two pools: 100,000 · 73,728
		// bytes split in two, 100,000 tokens of 36,864 each, 3,125 blocks
		for _, w := range []string{"", ", max_attention_window: [128, 131072]"} {
			rep := runYAML(t, gptOSSTRTLLMSpec(t, "1.2.0rc6.post1", ", max_tokens: 100000"+w))
			assert.Equal(t, 3_125, *rep.Metadata.NumGPUBlocks, w)
		}
	})
	t.Run("P/D: a prompt token moves every layer", func(t *testing.T) {
		// one window: the context server's pool holds all 36 layers,
		// 73,728 bytes a token (the transfer at 50 GB/s); two windows: the
		// full-attention layers' 36,864, as before
		for w, want := range map[string]int64{"": 73_728, ", max_attention_window: [128, 131072]": 36_864} {
			yml := strings.Replace(gptOSSTRTLLMSpec(t, "1.2.0rc6.post1", w), "workers: {aggregated: {count: 1, tp: 1}}",
				"workers: {disaggregated: {prefill: {count: 1, tp: 1}, decode: {count: 1, tp: 1}, kv_transfer: {bandwidth_gb_per_s: 50}}}", 1)
			rep := runYAML(t, yml)
			assert.Equal(t, want, *rep.Metadata.KVTransferBytesPerToken, w)
		}
	})
	t.Run("two sizes before 1.2: refused", func(t *testing.T) {
		s, err := config.DecodeYAML([]byte(gptOSSTRTLLMSpec(t, "1.1.0", ", max_attention_window: [128, 131072]")))
		require.NoError(t, err)
		_, err = Run(s)
		var ce *config.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "engine.trtllm.kv_cache_config.max_attention_window", ce.Field)
		assert.Contains(t, ce.Msg, "calculateWindowSizeToShare")
	})
}

package replay

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// hybridSpec is Qwen3.5-27B (Gated DeltaNet and full attention) on one
// h200_sxm, roofline, with scheduler settings extra and backend lines.
func hybridSpec(t *testing.T, engineExtra, scheduler string) string {
	needSharedConfigs(t)
	return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3.5-27B
  model_config_dir: %s
  system: h200_sxm
  perf: {source: roofline}
  workers: {aggregated: {count: 1, tp: 1}}%s
%s
traffic:
  source: {type: synthetic, num_requests: 8, isl: 1000, osl: 20}
  load: {mode: concurrency, concurrency: 4}
`, sharedModelConfigs, engineExtra, scheduler)
}

// A vLLM worker of a hybrid model runs vLLM's hybrid KV cache manager: the
// attention block that holds a state (784 tokens for Qwen3.5-27B on one
// H200), its pool of ⌊budget / (page · 16 layers)⌋ blocks, three state
// blocks a request, and prefix caching off unless mamba_cache_mode align.
func TestHybridVLLMWorker(t *testing.T) {
	rep := runYAML(t, hybridSpec(t, "", "  scheduler: {max_num_seqs: 64, max_num_batched_tokens: 8192, max_model_len: 8192}"))
	assert.Equal(t, 8, rep.Summary.Completed)
	assert.Equal(t, 784, rep.Metadata.BlockSize)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, "none", args["mamba_cache_mode"])
	assert.Equal(t, false, args["enable_prefix_caching"])
	assert.Equal(t, 3, args["state_blocks_per_request"])
	assert.Contains(t, args["note"], "turns prefix caching off by default for hybrid models")

	arch, err := model.Load("Qwen/Qwen3.5-27B", sharedModelConfigs)
	require.NoError(t, err)
	sys, _ := hardware.Builtin("h200_sxm")
	plan, err := perf.PlanMemoryParallel(arch, sys, model.Parallel{TP: 1, DP: 1}, model.BF16, 8192, 64, config.DefaultGPUMemoryUtilization, 16)
	require.NoError(t, err)
	assert.Equal(t, plan.Blocks, *rep.Metadata.NumGPUBlocks)

	// align mode: a 1,000-token prompt prefills in two passes (784, then 216)
	al := runYAML(t, hybridSpec(t, "", "  scheduler: {max_num_seqs: 64, max_num_batched_tokens: 8192, max_model_len: 8192, mamba_cache_mode: align}"))
	assert.Equal(t, "align", al.Metadata.Pools[0].EngineArgs["mamba_cache_mode"])
	assert.Greater(t, al.Summary.TTFT.Mean, rep.Summary.TTFT.Mean)

	// the start-up check counts the state blocks: a cache of 10 blocks holds
	// a request of (10 − 3) · 784 tokens at most
	_, err = runYAMLErr(hybridSpec(t, "", "  scheduler: {num_gpu_blocks: 10, max_model_len: 8192}"))
	assert.ErrorContains(t, err, "the largest max_model_len that fits is 5488")
}

// P/D of a hybrid model: the request's recurrent state moves with its KV. A
// 1,000-token prompt of Qwen3.5-27B at 100,000 KV bytes a token and 50 GB/s:
// 1e8 / 50 = 2,000,000 ns of KV, plus its 48 Gated DeltaNet states of
// 3,207,168 bytes (fp32, TP 1: TestHybridSGLangMambaPool's figure),
// 153,944,064 / 50 = 3,078,881 ns, plus 0.1 ms: 5,178,881 ns. Over the
// system's network at TP 2 on both sides, each of the 2 links carries half
// the state at the NIC's bandwidth.
func TestHybridPDMovesTheState(t *testing.T) {
	pd := func(tp int, transfer string) string {
		return replaceOnce(hybridSpec(t, "", ""), "workers: {aggregated: {count: 1, tp: 1}}", fmt.Sprintf(
			"workers: {disaggregated: {prefill: {count: 1, tp: %d}, decode: {count: 1, tp: %d}, kv_transfer: {%s}}}", tp, tp, transfer))
	}
	rep := runYAML(t, pd(1, "bandwidth_gb_per_s: 50, latency_ms: 0.1, kv_bytes_per_token: 100000"))
	require.Equal(t, 8, rep.Summary.Completed)
	for _, r := range rep.Records {
		assert.Equal(t, int64(5_178_881), r.TransferNs)
	}
	net := runYAML(t, pd(2, ""))
	require.Equal(t, 8, net.Summary.Completed)
	sys, _ := hardware.Builtin("h200_sxm")
	arch, err := model.Load("Qwen/Qwen3.5-27B", sharedModelConfigs)
	require.NoError(t, err)
	half := int64(48 * 3_207_168 / 2)
	require.Equal(t, half, arch.StateBytesPerSequence(2))
	// the KV of 1,000 tokens over the 2 links at the NIC's bandwidth (TP 2: half the KV a link), then the state
	nic := sys.InterNodeBW / 1e9
	kv := float64(1000*arch.KVBytesPerToken(2, 2)) / nic
	assert.InDelta(t, kv+float64(half)/nic, float64(net.Records[0].TransferNs), 2)
}

// An SGLang server of a hybrid model sizes its mamba pool first
// (ModelRunner._handle_max_mamba_cache): with disable_radix_cache and
// max_running_requests, one state per running request; the KV pool gets the
// rest. --mamba-ssm-dtype bfloat16 halves the recurrent state.
func TestHybridSGLangMambaPool(t *testing.T) {
	spec := func(sg string) string {
		return replaceOnce(hybridSpec(t, "\n  backend: sglang\n  sglang: {"+sg+"}", ""), "perf: {source: roofline}", "perf: {source: roofline}")
	}
	rep := runYAML(t, spec("disable_radix_cache: true, max_running_requests: 32"))
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, 32, args["max_mamba_cache_size"])
	assert.Equal(t, "float32", args["mamba_ssm_dtype"])
	assert.Equal(t, int64(48*3_207_168), args["mamba_state_bytes_per_request"])
	bf := runYAML(t, spec("disable_radix_cache: true, max_running_requests: 32, mamba_ssm_dtype: bfloat16")).Metadata.Pools[0].EngineArgs
	assert.Equal(t, int64(48*(3*10240*2+48*128*128*2)), bf["mamba_state_bytes_per_request"])
	// the KV pool of the bf16 state is larger by 32 · (the bytes saved) / the KV bytes of a token
	saved := 32 * 48 * 48 * 128 * 128 * 2
	tokens := args["max_total_num_tokens"].(int)
	assert.InDelta(t, tokens+saved/65536, bf["max_total_num_tokens"].(int), 1)
	// the ratio rule: the mamba pool takes 0.9/1.9 of what the weights leave
	ratio := runYAML(t, spec("max_running_requests: 32")).Metadata.Pools[0].EngineArgs
	assert.Greater(t, ratio["max_mamba_cache_size"].(int), 32)
	assert.Equal(t, 32, ratio["max_running_requests"])
}

// Nemotron-3-Nano (Mamba-2 mixers beside attention and MoE layers) runs on
// vLLM and SGLang as the Gated DeltaNet models do: its 23 Mamba-2 states
// of (K−1)·(H·P + 2·G·N)·2 + H·P·N·4 bytes a layer (2,134,016 at TP 1)
// beside the KV cache of its 6 attention layers; with aic its Mamba-2
// kernels are a counted roofline stand-in (no table times them for vLLM).
func TestNemotronHReplay(t *testing.T) {
	needSharedConfigs(t)
	spec := func(backend, perf string) string {
		return fmt.Sprintf(`
engine:
  model: nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16
  model_config_dir: %s
  system: h200_sxm
  backend: %s
  perf: %s
  workers: {aggregated: {count: 1, tp: 1}}
traffic:
  source: {type: synthetic, num_requests: 8, isl: 1000, osl: 20}
  load: {mode: concurrency, concurrency: 4}
`, sharedModelConfigs, backend, perf)
	}
	v := runYAML(t, spec("vllm", "{source: roofline}")+"\n")
	assert.Equal(t, 8, v.Summary.Completed)
	// KV cache groups of 6 layers (the attention layers'): the 23 Mamba-2
	// layers make 4 state groups, a block each a request
	assert.Equal(t, 4, v.Metadata.Pools[0].EngineArgs["state_blocks_per_request"])
	s := runYAML(t, spec("sglang", "{source: roofline}"))
	assert.Equal(t, 8, s.Summary.Completed)
	assert.Equal(t, int64(23*2_134_016), s.Metadata.Pools[0].EngineArgs["mamba_state_bytes_per_request"])
	a := runYAML(t, spec("vllm", fmt.Sprintf("{source: aic, database: %s}", filepath.Join(sharedAIC(t), "systems"))))
	assert.Equal(t, 8, a.Summary.Completed)
	assert.Equal(t, 2*23, a.Metadata.PerfMetadata["fallbacks"].(map[string]int)["linear_attention"])
}

// An SGLang server whose passes are smaller than its CUDA graphs (a mamba
// pool of 16 states under cuda_graph_max_bs 512, a 64-token chunk): the
// graphs past the largest pass are never replayed, so aic prices with the
// graphs up to 64 tokens instead of refusing the server; the server's
// cuda_graph_max_bs stays as given.
func TestSGLangGraphsPastTheLargestPass(t *testing.T) {
	db := filepath.Join(sharedAIC(t), "systems")
	spec := replaceOnce(hybridSpec(t, "\n  backend: sglang\n  sglang: {max_mamba_cache_size: 16, cuda_graph_max_bs: 512, chunked_prefill_size: 64}", ""),
		"perf: {source: roofline}", fmt.Sprintf("perf: {source: aic, database: %s}", db))
	rep := runYAML(t, spec)
	assert.Equal(t, 8, rep.Summary.Completed)
	args := rep.Metadata.Pools[0].EngineArgs
	assert.Equal(t, 512, args["cuda_graph_max_bs"])
	assert.Equal(t, 16, args["max_running_requests"])
}

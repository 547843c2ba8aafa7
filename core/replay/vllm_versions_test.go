package replay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// The largest CUDA graph by release and GPU, the last of the sizes vLLM's
// _set_cudagraph_sizes (vllm/config/vllm.py of each release) captures: the
// 8- and 16-token strides up to min(2 × max_num_seqs, ceiling,
// max_num_batched_tokens), the ceiling 1024 on compute capability 10.x from
// 0.28.0 else 512; max_num_batched_tokens itself from 0.21.0 when it is the
// limit; from 0.34.0 on 10.x the prefill grid up to min(8192,
// max_num_batched_tokens) (_split_cudagraph_capture_sizes). An unset version
// keeps the limit itself, min(2 × max_num_seqs, 512, max_num_batched_tokens).
func TestVLLMCUDAGraphTopByRelease(t *testing.T) {
	for _, c := range []struct {
		version                   string
		sm, seqs, tokens, wantTop int
	}{
		{"", 100, 1024, 16384, 512},
		{"", 100, 300, 16384, 512}, // min(600, 512)
		{"", 100, 150, 16384, 300}, // the limit 300, off the stride, kept
		{"0.24.0", 100, 1024, 8192, 512},
		{"0.27.1", 100, 1024, 16384, 512},
		{"0.28.0", 100, 1024, 16384, 1024},
		{"0.30.0", 103, 1024, 16384, 1024}, // B300: family 10
		{"0.30.0", 100, 300, 16384, 592},   // 2 × 300 = 600: the stride's last, 256 + 21 × 16
		{"0.31.0", 100, 300, 16384, 592},   // max_num_seqs 300 captured too, below it
		{"0.30.0", 100, 1024, 768, 768},    // the token budget, on the stride
		{"0.20.0", 100, 300, 310, 304},     // the budget 310 is the limit: 304 the last of the stride
		{"0.21.0", 100, 300, 310, 310},     // and captured from 0.21.0
		{"0.30.0", 90, 1024, 8192, 512},    // Hopper
		{"0.34.0", 120, 1024, 8192, 512},   // RTX PRO 6000: family 12
		{"0.34.0", 100, 1024, 16384, 8192}, // B200: the prefill grid to 8192
		{"0.34.0", 100, 1024, 4000, 4000},  // … to the token budget
		{"nightly", 100, 1024, 16384, 8192},
	} {
		top, graphs := vllmCUDAGraphs(&config.Engine{BackendVersion: c.version}, c.sm, c.seqs, c.tokens)
		assert.Equal(t, c.wantTop, top, "%q sm %d", c.version, c.sm)
		assert.Equal(t, c.version == "", graphs.IsZero(), c.version)
	}
	// speculative_config's k drafts: from 0.13.0 the limit is max_num_seqs ×
	// (1 + k) × 2, and the V1 runner rounds the sizes to multiples of 1 + k
	// (perf.TestVLLMGraphSizesSpecV1): 4 sequences, k = 2 → 24 (0.18.0), 6 (0.12.0)
	spec := func(v string) *config.Engine {
		return &config.Engine{BackendVersion: v, Scheduler: config.Scheduler{
			SpeculativeConfig: &config.VLLMSpeculativeConfig{Method: config.VLLMSpecMTP, NumSpeculativeTokens: 2}}}
	}
	top, graphs := vllmCUDAGraphs(spec("0.18.0"), 90, 4, 8192)
	assert.Equal(t, 24, top)
	assert.Equal(t, 3, graphs.QueryLen)
	top, _ = vllmCUDAGraphs(spec("0.12.0"), 90, 4, 8192)
	assert.Equal(t, 6, top)
	top, _ = vllmCUDAGraphs(spec(""), 90, 4, 8192)
	assert.Equal(t, 24, top, "no version: min(2 × 4 × 3, 512, 8192), the limit of every release from 0.13.0")
}

// On b200_sxm (180 GiB) `vllm serve` defaults max_num_batched_tokens to
// 16,384 from 0.28.0 (get_batch_defaults, vllm/engine/arg_utils.py) and to
// 8,192 before it and without a version; the report's spec and metadata
// say which release applied, and a release after the newest known is noted.
func TestBackendVersionBatchDefaultsOnB200(t *testing.T) {
	const spec = `
engine:
  model: Qwen/Qwen3-32B
  system: b200_sxm%s
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  scheduler: {num_gpu_blocks: 4096, max_model_len: 4096}
traffic:
  source: {type: synthetic, num_requests: 2, isl: 128, osl: 4}
  load: {mode: concurrency, concurrency: 2}
`
	for _, c := range []struct {
		version      string
		tokens, seqs int
		later        bool
	}{{"", 8192, 1024, false}, {"0.24.0", 8192, 1024, false}, {"0.27.1", 8192, 1024, false},
		{"0.28.0", 16384, 1024, false}, {"0.33.0", 16384, 1024, false}, {"0.34.0", 16384, 1024, false}, {"0.35.0", 16384, 1024, true}} {
		v := ""
		if c.version != "" {
			v = "\n  backend_version: " + c.version
		}
		rep := runYAML(t, fmt.Sprintf(spec, v))
		var got struct {
			Engine struct {
				Scheduler struct {
					MaxNumSeqs          int `json:"max_num_seqs"`
					MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
				} `json:"scheduler"`
			} `json:"engine"`
		}
		require.NoError(t, json.Unmarshal(rep.Metadata.Spec, &got), c.version)
		assert.Equal(t, c.tokens, got.Engine.Scheduler.MaxNumBatchedTokens, c.version)
		assert.Equal(t, c.seqs, got.Engine.Scheduler.MaxNumSeqs, c.version)
		if c.version == "" {
			assert.Nil(t, rep.Metadata.BackendVersion)
			continue
		}
		require.NotNil(t, rep.Metadata.BackendVersion, c.version)
		assert.Equal(t, c.version, rep.Metadata.BackendVersion.Release)
		later := false
		for _, n := range rep.Metadata.BackendVersion.Notes {
			later = later || assert.ObjectsAreEqual(n, "vLLM 0.35.0 is newer than the newest release known here (0.34.0): that release's rules stand in")
		}
		assert.Equal(t, c.later, later, "%s: %v", c.version, rep.Metadata.BackendVersion.Notes)
	}
}

// A hybrid model (Qwen3.5-27B) keeps prefix caching on by default from vLLM
// 0.28.0, in align mode (EngineArgs' default_prefix_caching is
// is_prefix_caching_supported, and MambaModelConfig.verify_and_update_config
// turns mamba_cache_mode "none" into "align"); 0.27.1 and an unset version
// run it without; an explicit "none" or enable_prefix_caching false still
// turn it off.
func TestBackendVersionHybridPrefixCaching(t *testing.T) {
	const sched = "  scheduler: {max_num_seqs: 64, max_num_batched_tokens: 8192, max_model_len: 8192%s}"
	for _, c := range []struct {
		version, extra string
		mode           string
		prefix, note   bool
	}{
		{"", "", "none", false, true},
		{"0.27.1", "", "none", false, true},
		{"0.28.0", "", "align", true, false},
		{"0.34.0", "", "align", true, false},
		{"0.28.0", ", mamba_cache_mode: none", "none", false, false},
		{"0.28.0", ", enable_prefix_caching: false", "none", false, false},
	} {
		v := ""
		if c.version != "" {
			v = "\n  backend_version: " + c.version
		}
		rep := runYAML(t, hybridSpec(t, v, fmt.Sprintf(sched, c.extra)))
		args := rep.Metadata.Pools[0].EngineArgs
		assert.Equal(t, c.mode, args["mamba_cache_mode"], "%q%s", c.version, c.extra)
		assert.Equal(t, c.prefix, args["enable_prefix_caching"], "%q%s", c.version, c.extra)
		_, noted := args["note"]
		assert.Equal(t, c.note, noted, "%q%s", c.version, c.extra)
	}
}

// vLLM 0.34.0 sizes the KV cache with the extensible KV cache (its default
// on CUDA: gpu_memory_utilization resolves to 1.0, the margin kept free,
// perf.PlanMemoryExtensible) in blocks of 64 tokens
// (CacheConfig.DEFAULT_BLOCK_SIZE); 0.33.0 at 0.92 in blocks of 16; a
// given gpu_memory_utilization and block_size stay as given.
func TestBackendVersionKVCacheSizing034(t *testing.T) {
	const spec = `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  backend_version: %s
  workers: {aggregated: {tp: 2}}
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  scheduler: {max_num_seqs: 64, max_num_batched_tokens: 8192%s}
traffic:
  source: {type: synthetic, num_requests: 2, isl: 128, osl: 4}
  load: {mode: concurrency, concurrency: 2}
`
	arch, ok := model.Builtin("Qwen/Qwen3-32B")
	require.True(t, ok)
	sys, ok := hardware.Builtin("h100_sxm")
	require.True(t, ok)
	par := model.Parallel{TP: 2, DP: 1}
	ext, err := perf.PlanMemoryExtensible(arch, sys, par, model.BF16, 8192, 64, 1, 64)
	require.NoError(t, err)
	old, err := perf.PlanMemoryParallel(arch, sys, par, model.BF16, 8192, 64, 0.92, 16)
	require.NoError(t, err)
	given, err := perf.PlanMemoryExtensible(arch, sys, par, model.BF16, 8192, 64, 0.9, 16)
	require.NoError(t, err)
	for _, c := range []struct {
		version, extra string
		block, blocks  int
	}{
		{"0.34.0", "", 64, ext.Blocks},
		{"0.33.0", "", 16, old.Blocks},
		{"0.34.0", ", block_size: 16, gpu_memory_utilization: 0.9", 16, given.Blocks},
	} {
		rep := runYAML(t, fmt.Sprintf(spec, c.version, c.extra))
		assert.Equal(t, c.block, rep.Metadata.BlockSize, c.version+c.extra)
		require.NotNil(t, rep.Metadata.NumGPUBlocks)
		assert.Equal(t, c.blocks, *rep.Metadata.NumGPUBlocks, c.version+c.extra)
	}
	// the margin is the 1 GiB floor here (0.75 × the activation estimate is less)
	assert.Equal(t, int64(1<<30), ext.MarginBytes)
	assert.Greater(t, ext.Tokens(), old.Tokens(), "1.0 less 1 GiB holds more than 0.92 of 80 GiB")
}

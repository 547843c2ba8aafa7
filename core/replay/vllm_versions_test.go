package replay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// The largest CUDA-graph capture size by release and GPU, as vLLM 0.28.0's
// _set_cudagraph_sizes (vllm/config/vllm.py) computes it: min(2 ×
// max_num_seqs, 1024 on compute capability 10.x else 512,
// max_num_batched_tokens); 0.27.1 and an unset version cap it at 512.
func TestVLLMCUDAGraphTopByRelease(t *testing.T) {
	for _, c := range []struct {
		version                   string
		sm, seqs, tokens, wantTop int
	}{
		{"", 100, 1024, 16384, 512},
		{"0.24.0", 100, 1024, 8192, 512},
		{"0.27.1", 100, 1024, 16384, 512},
		{"0.28.0", 100, 1024, 16384, 1024},
		{"0.30.0", 103, 1024, 16384, 1024}, // B300: family 10
		{"0.30.0", 100, 300, 16384, 600},   // 2 × 300
		{"0.30.0", 100, 1024, 768, 768},    // the token budget
		{"0.30.0", 90, 1024, 8192, 512},    // Hopper
		{"0.34.0", 120, 1024, 8192, 512},   // RTX PRO 6000: family 12
		{"nightly", 100, 1024, 16384, 1024},
	} {
		assert.Equal(t, c.wantTop, vllmCUDAGraphTop(&config.Engine{BackendVersion: c.version}, c.sm, c.seqs, c.tokens), "%q sm %d", c.version, c.sm)
	}
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
		{"0.28.0", 16384, 1024, false}, {"0.33.0", 16384, 1024, false}, {"0.34.0", 16384, 1024, true}} {
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
			later = later || assert.ObjectsAreEqual(n, "vLLM 0.34.0 is newer than the newest release known here (0.33.0): that release's rules stand in")
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

package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// GLM-5-FP8 (DSA: its config has index_topk) on eight H200s under SGLang:
// from 0.5.9 (the default release) the server takes pages of 64 tokens
// whatever --page-size says (config.SGLangDSAPageSize), so the token pool is
// a multiple of 64; 0.5.8's rule leaves GLM-5 at 1 (its branch names only
// DeepSeek's architectures).
func TestSGLangDSAModelsTakePagesOf64(t *testing.T) {
	needSharedConfigs(t)
	args := func(version string) map[string]any {
		return runYAML(t, fmt.Sprintf(`
engine:
  model: zai-org/GLM-5-FP8
  model_config_dir: %s
  system: h200_sxm
  backend: sglang%s
  perf: {source: roofline}
  sglang: {page_size: 16}
  workers: {aggregated: {count: 1, tp: 8}}
traffic:
  source: {type: synthetic, num_requests: 4, isl: 1000, osl: 20}
  load: {mode: concurrency, concurrency: 2}
`, sharedModelConfigs, version)).Metadata.Pools[0].EngineArgs
	}
	a := args("")
	assert.Equal(t, 64, a["page_size"])
	assert.Contains(t, a, "page_size_rule")
	assert.Zero(t, a["max_total_num_tokens"].(int)%64, "%v", a["max_total_num_tokens"])
	assert.Equal(t, 16, args("\n  backend_version: 0.5.8")["page_size"])
}

// From 0.5.14 a given max_running_requests is capped at half the token pool,
// not at the request-pool estimate (_resolve_max_num_reqs): Qwen3-32B on
// four H100s, max_total_tokens 65,536, max_running_requests 4,000; the
// estimate is max(min(65,536 / 40,960 · 512, 4,096), 2,048) = 2,048, so
// 0.5.13 runs 2,048 and 0.5.14 min(4,000, 32,768) = 4,000.
func TestSGLangGivenMaxRunningRequestsFrom0514(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 2}})
	v := func(rel string) map[string]any {
		y := strings.Replace(sglangLinear(trace, ", max_running_requests: 4000"), "max_total_tokens: 4096", "max_total_tokens: 65536", 1)
		y = strings.Replace(y, "backend: sglang", "backend: sglang\n  backend_version: "+rel+"\n  workers: {aggregated: {count: 1, tp: 4}}", 1)
		return runYAML(t, y).Metadata.Pools[0].EngineArgs
	}
	assert.Equal(t, 2048, v("0.5.13")["max_running_requests"])
	assert.Equal(t, 4000, v("0.5.14")["max_running_requests"])
}

// EAGLE with mixed chunks from 0.5.19, which keeps them (its mixed pass
// decodes the running requests without drafts), is refused as not modelled;
// 0.5.18 turns the mixed chunks off, as before.
func TestSGLangEAGLEMixedChunkFrom0519(t *testing.T) {
	trace := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 2}})
	y := func(rel string) string {
		return strings.Replace(sglangLinear(trace, ", speculative_algorithm: EAGLE, speculative_num_steps: 2, enable_mixed_chunk: true, chunked_prefill_size: 1024"),
			"backend: sglang", "backend: sglang\n  backend_version: "+rel, 1)
	}
	assert.Equal(t, false, runYAML(t, y("0.5.18")).Metadata.Pools[0].EngineArgs["enable_mixed_chunk"])
	s, err := config.DecodeYAML([]byte(y("0.5.19")))
	require.NoError(t, err)
	_, err = Run(s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "engine.sglang.enable_mixed_chunk")
}

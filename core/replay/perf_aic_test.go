package replay

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf/aic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildAICDeployment wires engine.perf source aic and
// engine.quantization: the perf model is aic with its table provenance in
// the metadata, and the KV capacity follows the chosen KV dtype (fp8 holds
// twice the tokens of bf16 in the same budget, ± one block of rounding).
func TestBuildAICDeployment(t *testing.T) {
	shared := sharedAIC(t)
	build := func(kv string) *deployment {
		s, err := config.DecodeYAML([]byte(specYAML(shared, kv)))
		require.NoError(t, err)
		d, err := buildDeployment(s, nil)
		require.NoError(t, err)
		return d
	}
	bf, f8 := build("bf16"), build("fp8")
	m, ok := f8.pools[0].perf.(*aic.Model)
	require.True(t, ok)
	assert.Equal(t, "0.14.0", m.Sources()[0].Version, "0.12.0 is not measured: nearest")
	assert.InDelta(t, 2*bf.pools[0].cfg.NumBlocks, f8.pools[0].cfg.NumBlocks, 1)
	assert.Equal(t, "fp8", string(f8.arch.WeightDtype))

	s, err := config.DecodeYAML([]byte(strings.Replace(specYAML(shared, "fp8"), "num_requests: 1", "num_requests: 2", 1)))
	require.NoError(t, err)
	rep, err := Run(s)
	require.NoError(t, err)
	assert.Equal(t, "fp8", rep.Metadata.KVCacheDtype)
	assert.Equal(t, "aic-v1", rep.Metadata.PerfModel)
	// the overheads in effect are reported: the engine step's defaults
	params := rep.Metadata.PerfMetadata["params"]
	assert.Equal(t, map[string]float64{"pass_overhead_us": 1000, "per_sequence_overhead_us": 40}, params)
}

// TestRooflineParamsInMetadata: the report names the roofline parameters in
// effect, defaults and overrides alike, under the engine.perf field names.
func TestRooflineParamsInMetadata(t *testing.T) {
	s, err := config.DecodeYAML([]byte(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: roofline, memory_efficiency: 0.75, layer_latency_us: 30}
  workers: {aggregated: {tp: 2}}
  scheduler: {num_gpu_blocks: 4000}
traffic:
  source: {type: synthetic, num_requests: 2, isl: 64, osl: 4}
  load: {mode: concurrency, concurrency: 1}
`))
	require.NoError(t, err)
	rep, err := Run(s)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"compute_efficiency": 0.7, "memory_efficiency": 0.75,
		"pass_overhead_us": 1000, "per_sequence_overhead_us": 40, "allreduce_latency_us": 5, "layer_latency_us": 30},
		rep.Metadata.PerfMetadata["params"])
}

func specYAML(shared, kv string) string {
	return `engine:
  model: Qwen/Qwen3-32B
  model_config_dir: ` + filepath.Join(shared, "model_configs") + `
  system: h100_sxm
  perf: {source: aic, database: ` + filepath.Join(shared, "systems") + `, backend_version: "0.12.0"}
  quantization: {weights: fp8, kv_cache: ` + kv + `}
  workers: {aggregated: {tp: 2}}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 10, osl: 2}
  load: {mode: concurrency, concurrency: 1}
`
}

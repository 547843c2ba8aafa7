package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engine.quantization takes vLLM's --kv-cache-dtype names (and bfloat16 for
// the weights), the old spelling bf16 kept as an alias; the metadata names
// the format in effect with a value the config accepts. Llama-3.1-8B's KV
// cache is 2 · 32 layers · 8 heads · 128 · 2 bytes = 128 KiB a token in
// bfloat16, half that in fp8: the same budget holds twice the fp8 blocks
// (2B or 2B + 1, the floor of twice the budget over the block size).
func TestQuantizationTakesVLLMNames(t *testing.T) {
	run := func(weights, kv string) (string, string, int) {
		t.Helper()
		rep := runYAML(t, `engine:
  model: meta-llama/Llama-3.1-8B-Instruct
  system: h100_sxm
  quantization: {weights: `+weights+`, kv_cache: `+kv+`}
  workers: {aggregated: {count: 1, tp: 1}}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 16, osl: 2}
  load: {mode: concurrency, concurrency: 1}
`)
		require.NotNil(t, rep.Metadata.NumGPUBlocks)
		return rep.Metadata.WeightDtype, rep.Metadata.KVCacheDtype, *rep.Metadata.NumGPUBlocks
	}
	w, kv, bf16Blocks := run("bf16", "bf16")
	assert.Equal(t, []string{"bfloat16", "bfloat16"}, []string{w, kv})
	for _, name := range []string{"bfloat16", "auto"} {
		w, kv, blocks := run("bfloat16", name)
		assert.Equal(t, []string{"bfloat16", "bfloat16"}, []string{w, kv}, name)
		assert.Equal(t, bf16Blocks, blocks, name)
	}
	for _, name := range []string{"fp8", "fp8_e4m3", "fp8_e5m2"} {
		_, kv, blocks := run("bfloat16", name)
		assert.Equal(t, "fp8", kv, name)
		assert.Contains(t, []int{2 * bf16Blocks, 2*bf16Blocks + 1}, blocks, name)
	}
}

package aic

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dsv4FlashModel is DeepSeek-V4-Flash-NVFP4 on b200_sxm at TP 8 (8 heads per
// GPU) with an fp8 KV cache, priced from the vLLM 0.24.0 tables: the module
// tables measured Flash's shape (sgl-project/DeepSeek-V4-Flash-FP8) there.
func dsv4FlashModel(t *testing.T) *Model {
	m, err := New(sharedModel(t, "nvidia--DeepSeek-V4-Flash-NVFP4"), builtinSystem(t, "b200_sxm"), Options{MaxTokens: 2048,
		Database: sharedDB(t), Backend: "vllm", Version: "0.24.0", TP: 8, KVDtype: model.FP8,
		PassOverheadUs: config.DefaultPassOverheadUs})
	require.NoError(t, err)
	return m
}

// TestDSV4OnTableRows: a pass on a measured point costs that row. The CSA
// generation table's row of Flash at 8 heads, batch 64, step 1,024 (a KV
// length of 1,025 with the decoded token) is 0.0931 ms: 64 decodes of 1,024
// cached tokens each cost it in every CSA layer. The CSA context row of one
// sequence of 2,048 new tokens (step 0) is 0.3897 ms. The mHC rows of
// hidden 4,096 at 256 tokens: pre 0.0230 + post 0.0086 = 0.0316 ms a layer.
func TestDSV4OnTableRows(t *testing.T) {
	m := dsv4FlashModel(t)
	dec := perf.Batch{Decodes: 64, DecodeKVSum: 64 * 1024, Samplers: 64}
	assert.InDelta(t, 0.0931e-3, generationOn(&dec, m.hy.dsv4.gen[model.AttnCSA]), 1e-12)
	pre := perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2048}}, Samplers: 1}
	assert.InDelta(t, 0.3897e-3, m.dsv4ContextSeconds(&pre, model.AttnCSA), 1e-12)
	assert.InDelta(t, (0.0230+0.0086)*1e-3, m.hy.dsv4.mhc.Seconds(256), 1e-12)
	// the two window-only layers read the HCA tables: a fallback of each
	assert.Equal(t, 2, m.Fallbacks()[OpGenerationAttention])
	assert.Equal(t, 2, m.Fallbacks()[OpContextAttention])
	// the whole pass: every layer's attention from its kind's grid
	bd := m.Breakdown(&dec)
	want := 21*generationOn(&dec, m.hy.dsv4.gen[model.AttnCSA]) + 22*generationOn(&dec, m.hy.dsv4.gen[model.AttnHCA])
	assert.InDelta(t, want*1e9, bd.GenerationAttentionNs, 1e-3)
}

// TestDSV4PrefixOnTheRoofline: a chunk after a cached prefix costs the
// step-0 row plus what the prefix adds at the core's roofline
// (dsv4ContextSeconds).
func TestDSV4PrefixOnTheRoofline(t *testing.T) {
	m := dsv4FlashModel(t)
	b := perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2048, PrefixTokens: 4096}}, Samplers: 1}
	c := m.hy.dsv4.peak[model.AttnCSA]
	want := 0.3897e-3 + c.ContextSeconds(2048, 4096) - c.ContextSeconds(2048, 0)
	assert.InDelta(t, want, m.dsv4ContextSeconds(&b, model.AttnCSA), 1e-12)
	assert.Greater(t, want, 0.3897e-3)
}

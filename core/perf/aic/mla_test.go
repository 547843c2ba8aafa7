package aic

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// kimiTP8 is Kimi-K2.5 (INT4 experts) on h200_sxm at TP 8, vLLM 0.16.0's
// tables (the dev rows' version: the MLA modules of 0.19.0 stand in).
func kimiTP8(t testing.TB) *Model {
	t.Helper()
	m, err := New(sharedModel(t, "moonshotai/Kimi-K2.5"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.16.0", TP: 8})
	require.NoError(t, err)
	return m
}

// TestMLADecodeOnATableRow: Kimi-K2.5 has DeepSeek-V3's attention widths, so
// at TP 8 (8 heads per GPU) its MLA layer is the module the table measured:
// a decode of 4 requests at KV 2,047 (2,048 keys with their own) costs the
// row of batch 4, step 2,048, 8 heads, bf16 cache and GEMMs — the core the
// grid holds plus the projections priced on the same bf16 GEMM grid at 4
// tokens (Kimi's attention is bf16). No fallback.
func TestMLADecodeOnATableRow(t *testing.T) {
	m := kimiTP8(t)
	assert.Empty(t, m.Fallbacks())
	rows, err := loadMLA(filepath.Join(sharedDB(t), "data", "h200_sxm", "mla", "vllm", "0.19.0", "mla_generation_module_perf.parquet"))
	require.NoError(t, err)
	var row float64
	for _, r := range rows {
		if r.Heads == 8 && r.Batch == 4 && r.Step == 2048 && r.KVDtype == "bfloat16" && r.GemmType == "bfloat16" {
			row = r.Latency * 1e-3
			break
		}
	}
	require.Positive(t, row)
	b := &perf.Batch{Samplers: 4}
	for range 4 {
		b.AddDecode(2047)
	}
	var proj float64
	for _, p := range sharedModel(t, "moonshotai/Kimi-K2.5").MLAProjections(8) {
		proj += m.gemmA.Seconds(4, float64(p.N), float64(p.K))
	}
	assert.InEpsilon(t, row, generationOn(b, m.hy.mla.gen)+proj, 1e-12)
	assert.Same(t, m.gemmBF16, m.gemmA)
	// every layer's decode attention is that core: 61 MLA layers
	assert.InEpsilon(t, 61*generationOn(b, m.hy.mla.gen)*1e9, m.Breakdown(b).GenerationAttentionNs, 1e-12)
	var tables []string
	for _, s := range m.Sources() {
		tables = append(tables, s.Table+"@"+s.ReadFrom)
	}
	assert.Contains(t, tables, "mla_generation_module_perf@0.19.0")
	assert.Contains(t, tables, "moe_perf (int4_wo)@0.14.0")
}

// TestMLAPrefixUpProjection: a prefill chunk after a cached prefix pays the
// core's share of the new pairs, (S² − p²)/S², plus kv_b_proj over the
// cached tokens (N = 8·256, K = 512 on the bf16 grid), which the module
// rows (no prefix) do not hold.
func TestMLAPrefixUpProjection(t *testing.T) {
	m := kimiTP8(t)
	b := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1024, PrefixTokens: 3072}}, Samplers: 1}
	core := m.hy.mla.ctx.Seconds(1, 4096) * (4096.0*4096 - 3072.0*3072) / (4096.0 * 4096)
	assert.InEpsilon(t, core+m.gemmBF16.Seconds(3072, 2048, 512), m.mlaContextSeconds(b), 1e-12)
}

// TestMLAShapeStandIn: a dense-MLA model whose widths no table measured
// (DeepSeek-V3 with v_head_dim 192) reads DeepSeek-V3's module, scaled by
// the ratio of the two cores' rooflines, as a fallback of both phases in
// all 61 layers; DSA models read the DSA tables' own model (GLM-5: exact).
func TestMLAShapeStandIn(t *testing.T) {
	a := sharedModel(t, "deepseek-ai/DeepSeek-V3")
	a.MLA.VDim = 192
	m, err := New(a, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 8})
	require.NoError(t, err)
	assert.Equal(t, 61, m.Fallbacks()[OpGenerationAttention])
	assert.Equal(t, 61, m.Fallbacks()[OpContextAttention])
	glm, err := New(sharedModel(t, "zai-org/GLM-5-FP8"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 8, KVDtype: model.FP8})
	require.NoError(t, err)
	assert.Zero(t, glm.Fallbacks()[OpGenerationAttention])
	assert.Zero(t, glm.Fallbacks()[OpContextAttention])
	var tables []string
	for _, s := range glm.Sources() {
		tables = append(tables, s.Table)
	}
	assert.Contains(t, tables, TableDSAGenerationModule)
}

// TestSharedExpertsOverlap: from vLLM 0.11.1 a MoE layer's shared experts
// run on their own CUDA stream beside the routed experts in passes of at
// most 256 tokens, so the shorter of the two is hidden: Kimi-K2.5 at TP 8
// decoding 4 requests hides each of its 60 MoE layers' shared expert (bf16
// gate_up N = 2·256, K = 7168 and down N = 7168, K = 256, shorter than the
// routed experts), priced as before by vLLM 0.11.0; a 300-token pass hides
// nothing.
func TestSharedExpertsOverlap(t *testing.T) {
	opt := Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.11.0", TP: 8}
	a, sys := sharedModel(t, "moonshotai/Kimi-K2.5"), builtinSystem(t, "h200_sxm")
	before, err := New(a, sys, opt)
	require.NoError(t, err)
	opt.Version = "0.11.1"
	after, err := New(a, sys, opt)
	require.NoError(t, err)
	require.Nil(t, before.hy.sharedNs)
	b := &perf.Batch{Samplers: 4}
	for range 4 {
		b.AddDecode(1000)
	}
	shared := (after.gemmW.Seconds(4, 512, 7168) + after.gemmW.Seconds(4, 7168, 256)) * 1e9
	bd0, bd1 := before.Breakdown(b), after.Breakdown(b)
	require.Less(t, shared, bd1.ExpertsNs/60)
	assert.Equal(t, bd0.ExpertsNs, bd1.ExpertsNs)
	assert.InEpsilon(t, 60*shared, bd0.GEMMNs-bd1.GEMMNs, 1e-9)
	big := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 300}}, Samplers: 1}
	assert.Equal(t, before.Breakdown(big).GEMMNs, after.Breakdown(big).GEMMNs)
}

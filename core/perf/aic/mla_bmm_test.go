package aic

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSGLangMLADecodeBMM: SGLang's DeepSeek decode runs q_nope · w_kc and
// attn · w_vc beside the attention backend (deepseek_v2.py
// forward_absorb_prepare / forward_absorb_core), which the 0.5.9 kernel
// table generation_mla_perf does not time (collect_mla.py calls the backend
// alone), so each MLA layer of a decode pass adds the mla_bmm_perf rows at
// its heads per GPU. DeepSeek-V3's block-fp8 kv_b_proj is dequantized to
// bf16 at load (deepseek_weight_loader.py), so the bf16 rows: at TP 8 (16
// heads) and 4 decodes mla_gen_pre 0.0040384 ms and mla_gen_post 0.0041568
// ms (the table's rows), 8.1952 µs a layer, 61 layers 499.907 µs; at 6
// decodes halfway to the 8-token rows (0.0039808, 0.0041760): 8.1760 µs.
func TestSGLangMLADecodeBMM(t *testing.T) {
	a := sharedModel(t, "deepseek-ai/DeepSeek-V3")
	require.Equal(t, 61, a.FullKVLayers())
	sys := builtinSystem(t, "h200_sxm")
	opt := Options{MaxTokens: 8192, Database: sharedDB(t), Backend: "sglang", Version: "0.5.9", TP: 8,
		WeightDtype: model.FP8Block, KVDtype: model.BF16, CUDAGraphMaxTokens: 256}
	m, err := New(a, sys, opt)
	require.NoError(t, err)
	require.NotNil(t, m.hy.mla.bmm)
	assert.InEpsilon(t, 8.1952e-6, m.hy.mla.bmm.seconds(4), 1e-5)
	assert.InEpsilon(t, 8.1760e-6, m.hy.mla.bmm.seconds(6), 1e-5)

	without, err := New(a, sys, opt)
	require.NoError(t, err)
	without.hy.mla.bmm = nil
	b := &perf.Batch{Decodes: 4, DecodeKVSum: 4000, Samplers: 4}
	assert.InEpsilon(t, 61*8.1952e3, m.Breakdown(b).GenerationAttentionNs-without.Breakdown(b).GenerationAttentionNs, 1e-5)
	// a verify pass (EAGLE/NEXTN target_verify) runs the BMMs over every query
	// token: 4 decodes with 4 draft tokens are the 8-token rows, 3.9808 +
	// 4.1760 = 8.1568 µs a layer
	v4 := &perf.Batch{Decodes: 4, SpecTokens: 4, DecodeKVSum: 4000, Samplers: 8}
	assert.InEpsilon(t, 61*8.1568e3, m.Breakdown(v4).GenerationAttentionNs-without.Breakdown(v4).GenerationAttentionNs, 1e-5)
	// a prefill without a cached prefix runs the MHA path (no BMMs)
	p := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1024}}, Samplers: 1}
	assert.Equal(t, without.Breakdown(p).TotalNs(), m.Breakdown(p).TotalNs())

	// vLLM's kernel tables time the BMMs with the attention; GLM-5's DSA
	// module rows hold its whole attention
	opt.Backend, opt.Version = "vllm", "0.14.0"
	v, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.Nil(t, v.hy.mla.bmm)
	g, err := New(sharedModel(t, "zai-org/GLM-5-FP8"), sys, Options{MaxTokens: 8192, Database: sharedDB(t), Backend: "sglang",
		Version: "0.5.9", TP: 8, KVDtype: model.BF16, CUDAGraphMaxTokens: 256})
	require.NoError(t, err)
	assert.Nil(t, g.hy.mla.bmm)

	assert.Equal(t, "fp8", sglangBMMDtype(model.FP8))
	assert.Equal(t, "bfloat16", sglangBMMDtype(model.FP8Block))
	assert.Equal(t, "bfloat16", sglangBMMDtype(model.BF16))
}

package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/model"
)

// kimiMLA is Kimi-K2.5's attention (DeepSeek-V3's widths, 64 heads).
var kimiMLA = &model.MLA{QLoraRank: 1536, KVLoraRank: 512, NopeDim: 128, RopeDim: 64, VDim: 128}

// TestMLACoreHandCount: Kimi-K2.5 at TP 8 (8 heads on the GPU), a bf16
// cache (576 · 2 = 1,152 bytes a token), rates of 1e15 FLOP/s and 4e12
// B/s. Decode of one request at KV 999 (1,000 keys with its own):
//
//	W_UK  F = 2·8·128·512 = 1,048,576     B = 2·8·128·512 + 2·8·640 = 1,058,816   → 264.704 ns
//	MQA   F = 2·1000·8·1088 = 17,408,000  B = 1000·1152 + 2·8·1088 = 1,169,408    → 292.352 ns
//	W_UV  as W_UK                                                                → 264.704 ns
//
// 821.76 ns. A 1,000-token prefill without prefix: kv_b_proj at m = 1,000
// (N = 8·256 = 2,048, K = 512, bf16: F = 2.097152e9, B = 2·(2048·512 +
// 1000·512 + 1000·2048) = 7,217,152) takes 2,097.152 ns; attention over
// 500,500 causal pairs of 8 heads of 128 + 64 + 128 (F = 2·500500·8·320 =
// 2.56256e9, B = 4·1000·8·320 = 10,240,000) 2,562.56 ns: 4,659.712 ns.
func TestMLACoreHandCount(t *testing.T) {
	c := NewMLACore(kimiMLA, 8, 2, model.BF16, MLARates{WeightFlops: 1e15, BF16Flops: 1e15, FP8Flops: 2e15, MemBW: 4e12})
	assert.InEpsilon(t, 821.76e-9, c.GenerationSeconds(1, 999, 0), 1e-12)
	assert.InEpsilon(t, 4659.712e-9, c.ContextSeconds(1000, 0), 1e-12)
	assert.False(t, c.Sparse())
}

// TestMLADSAKeptKeys: with DSA a decode reads the latent of its TopK kept
// keys only, and the indexer scores all of them: GLM-5-like widths with a
// top-64 indexer of 2 heads × 8, one request at KV 999, the latent in bf16
// (576 · 2 bytes), the indexer's 8 + 4 bytes a key. The absorbed path is
// the dense one at 64 keys; the indexer F = 2·2·8·1000 = 32,000 (fp8, 2e15:
// 0.016 ns), B = 1000·12 + 8·1000 = 20,000 (5 ns): 5 ns.
func TestMLADSAKeptKeys(t *testing.T) {
	sparse := *kimiMLA
	sparse.Indexer = &model.MLAIndexer{Heads: 2, HeadDim: 8, TopK: 64}
	rt := MLARates{WeightFlops: 1e15, BF16Flops: 1e15, FP8Flops: 2e15, MemBW: 4e12}
	dense := NewMLACore(kimiMLA, 8, 2, model.BF16, rt)
	dsa := NewMLACore(&sparse, 8, 2, model.BF16, rt)
	require.True(t, dsa.Sparse())
	assert.Equal(t, 12, sparse.IndexerBytes())
	assert.InEpsilon(t, dense.GenerationSeconds(1, 63, 0)+5e-9, dsa.GenerationSeconds(1, 999, 64), 1e-12)
}

// TestRooflineKimiSharedOverlap: the roofline prices Kimi-K2.5 at TP 8 with
// its MLA layers, and hides the shared expert under the routed experts in a
// pass of at most 256 tokens (its own CUDA stream, SharedExpertsStreamTokens):
// at 4 decodes its GEMMs are those of the model without shared experts
// (the shared expert is shorter than the routed ones there); at 300 prompt
// tokens they add up.
func TestRooflineKimiSharedOverlap(t *testing.T) {
	a, err := model.Load("moonshotai/Kimi-K2.5", sharedConfigs)
	require.NoError(t, err)
	noShared := *a
	moe := *a.MoE
	moe.SharedIntermediate = 0
	noShared.MoE = &moe
	sys := builtinSystem(t, "h200_sxm")
	prm := specDefaults()
	prm.MoELatencyUs = 35
	opt := RooflineOptions{TP: 8, Params: prm}
	with, err := NewRoofline(a, sys, opt)
	require.NoError(t, err)
	without, err := NewRoofline(&noShared, sys, opt)
	require.NoError(t, err)
	b := &Batch{Samplers: 4}
	for range 4 {
		b.AddDecode(1000)
	}
	assert.InEpsilon(t, without.Breakdown(b).GEMMNs, with.Breakdown(b).GEMMNs, 1e-12)
	assert.Greater(t, with.Breakdown(b).GenerationAttentionNs, 0.0)
	big := &Batch{Prefill: []Chunk{{NewTokens: 300}}, Samplers: 1}
	assert.Greater(t, with.Breakdown(big).GEMMNs, without.Breakdown(big).GEMMNs)
}

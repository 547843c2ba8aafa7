package perf

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadModel(t *testing.T, name string) *model.Arch {
	t.Helper()
	a, err := model.Load(name, sharedConfigs)
	if err != nil {
		t.Skipf("shared config of %s: %v", name, err)
	}
	return a
}

// TestVLLMHybridKVQwen35 hand-checks vLLM's layout of Qwen3.5-27B on one
// GPU: a 4,096-byte attention token, a 3,207,168-byte state per layer, so
// 16·⌈3,207,168 / 65,536⌉ = 784-token blocks (the block size vLLM logs for
// it on one H200), 32-token alignment on B200 (head_dim 256 on sm100);
// 16 full-attention and 48 linear layers: groups of 16, one attention
// group and three state groups.
func TestVLLMHybridKVQwen35(t *testing.T) {
	a := loadModel(t, "Qwen/Qwen3.5-27B")
	h200, _ := hardware.Builtin("h200_sxm")
	b200, _ := hardware.Builtin("b200_sxm")
	h, ok, err := VLLMHybridKV(a, h200, 1, model.BF16, 16)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, HybridKV{BlockSize: 784, PageBytes: 784 * 4096, StateBytesPerLayer: 3_207_168, GroupSize: 16, AttnGroups: 1, StateGroups: 3}, h)
	assert.Equal(t, int64(784*4096*16), h.BlockBytes())
	hb, _, _ := VLLMHybridKV(a, b200, 1, model.BF16, 16)
	assert.Equal(t, 32*25, hb.BlockSize) // ⌈3,207,168 / 131,072⌉ = 25
	big, _, _ := VLLMHybridKV(a, h200, 1, model.BF16, 1024)
	assert.Equal(t, 1024, big.BlockSize) // the spec's block size when larger
	// fp8 KV: a 2,048-byte token, ⌈3,207,168 / 32,768⌉ = 98 → 1,568 tokens
	f8, _, _ := VLLMHybridKV(a, h200, 1, model.FP8, 16)
	assert.Equal(t, 1568, f8.BlockSize)

	q := loadModel(t, "Qwen/Qwen3.5-397B-A17B") // 15 full, 45 linear at TP 8
	hq, _, _ := VLLMHybridKV(q, h200, 8, model.BF16, 16)
	// token 1·256·2·2 = 1,024 bytes; state 533,504: 16·⌈533,504/16,384⌉ = 528
	assert.Equal(t, HybridKV{BlockSize: 528, PageBytes: 528 * 1024, StateBytesPerLayer: 533_504, GroupSize: 15, AttnGroups: 1, StateGroups: 3}, hq)

	dense := loadModel(t, "Qwen/Qwen3-32B-FP8")
	_, ok, err = VLLMHybridKV(dense, h200, 1, model.BF16, 16)
	assert.False(t, ok)
	assert.NoError(t, err)
}

// TestHybridGroupSize: vLLM makes groups of the smaller kind's layer count,
// or of the larger's when it is under 1.25 times the smaller
// (_get_kv_cache_groups_uniform_page_size).
func TestHybridGroupSize(t *testing.T) {
	lin := &model.LinearAttention{KeyHeads: 2, KeyDim: 8, ValueHeads: 2, ValueDim: 8, ConvKernel: 4, StateBytes: 4}
	arch := func(full, linear int) *model.Arch {
		a := &model.Arch{Name: "toy", Hidden: 64, Heads: 4, KVHeads: 4, HeadDim: 16, Intermediate: 64, Vocab: 100, Linear: lin}
		for i := 0; i < full; i++ {
			a.LayerKinds = append(a.LayerKinds, model.LayerKind{Attn: model.AttnFull})
		}
		for i := 0; i < linear; i++ {
			a.LayerKinds = append(a.LayerKinds, model.LayerKind{Attn: model.AttnLinear})
		}
		a.Layers = full + linear
		return a
	}
	for _, c := range []struct{ full, linear, group, attn, state int }{
		{10, 11, 11, 1, 1}, // 11 < 12.5: one group of each
		{10, 30, 10, 1, 3},
		{8, 3, 3, 3, 1},
		{6, 23, 6, 1, 4},
	} {
		h, _, err := VLLMHybridKV(arch(c.full, c.linear), nil, 1, model.BF16, 16)
		require.NoError(t, err)
		assert.Equal(t, [3]int{c.group, c.attn, c.state}, [3]int{h.GroupSize, h.AttnGroups, h.StateGroups}, "%d full, %d linear", c.full, c.linear)
	}
}

// TestPlanMemoryHybrid: the pool has ⌊budget / (page · group size)⌋ blocks
// of vLLM's block size, and each request holds one per state group.
func TestPlanMemoryHybrid(t *testing.T) {
	a := loadModel(t, "Qwen/Qwen3.5-27B")
	h200, _ := hardware.Builtin("h200_sxm")
	p, err := PlanMemoryParallel(a, h200, model.Parallel{TP: 1, DP: 1}, model.BF16, 8192, 256, 0.9, 16)
	require.NoError(t, err)
	require.NotNil(t, p.Hybrid)
	assert.Equal(t, 784, p.BlockSize)
	assert.Equal(t, 3, p.StateBlocks)
	assert.Equal(t, int(p.KVBudgetBytes/(784*4096*16)), p.Blocks)
	assert.Equal(t, int64(4*256*16*2*2), p.KVBytesPerToken)
}

// TestGDNCoreHandCount checks the Gated DeltaNet roofline of Qwen3.5-27B at
// TP 1 (16 key and 48 value heads of 128, conv 4, fp32 state) at unit rates
// (1 FLOP/s, 1 B/s): the max of FLOPs and bytes.
func TestGDNCoreHandCount(t *testing.T) {
	l := &model.LinearAttention{KeyHeads: 16, KeyDim: 128, ValueHeads: 48, ValueDim: 128, ConvKernel: 4, StateBytes: 4}
	g := NewGDNCore(l, 1, 1, 1)
	c := float64(2*16*128 + 48*128) // 10,240 channels
	// conv of 4 decodes: F = 2·4·C·4, B = 4·C·4 + 4·3·C·4 → bytes win
	assert.Equal(t, 4*c*4+4*3*c*4, g.ConvSeconds(4, 4))
	// decode rule: F = 4·48·6·128·128 = 18,874,368; B = 2·4·(2·16·128 + 2·48·128) + 2·4·48·128·128·4
	assert.Equal(t, float64(2*4*(2*16*128+2*48*128)+2*4*48*128*128*4), g.RuleSeconds(4, 4, false))
	// prefill of 1,000 tokens, one chunk: F = 1000·48·(6·128·128 + 2·64·256) wins over the bytes
	assert.Equal(t, float64(1000*48*(6*128*128+2*64*256)), g.RuleSeconds(1000, 1, true))
	assert.Equal(t, g.ConvSeconds(1000, 1)+g.RuleSeconds(1000, 1, true), g.ContextSeconds(1000, 1))
	assert.Equal(t, 0.0, g.ContextSeconds(0, 0))
}

// TestChunkedLocalAttention: a query at position i (1-based) of chunks of
// c tokens attends to its chunk's keys up to itself, (i−1) mod c + 1 of them.
func TestChunkedLocalAttention(t *testing.T) {
	// c 4, queries 1..10: 1 2 3 4 1 2 3 4 1 2
	assert.Equal(t, 23.0, ChunkPairs(10, 0, 4))
	assert.Equal(t, 2.0+3+4, ChunkPairs(3, 5, 4)) // queries 6, 7, 8
	assert.Equal(t, WindowPairs(7, 0, 0), ChunkPairs(7, 0, 8192))
	assert.Equal(t, 8192, WindowKeys(8191, -8192))
	assert.Equal(t, 1, WindowKeys(8192, -8192))
	assert.Equal(t, 129, WindowKeys(8320, -8192))
	assert.Equal(t, 128, WindowKeys(8320, 128)) // a sliding window
	assert.True(t, ChunkedWindows([]int{128, -8192}))
	assert.False(t, ChunkedWindows([]int{128}))
}

// TestVLLMHybridKVKimiK3: an MLA page holds one 576-byte latent a token
// (fp8) aligned to 64 tokens; a KDA layer's state at TP 8 is 814,080 bytes
// (model.LinearAttention.StateBytesPerLayer), so blocks of
// 64·⌈814,080 / (64·576)⌉ = 64·23 = 1,472 tokens, pages of 1,472·576 =
// 847,872 bytes; 24 MLA and 69 KDA layers (69 ≥ 1.25·24): groups of 24, one
// attention group, ⌈69 / 24⌉ = 3 state groups.
func TestVLLMHybridKVKimiK3(t *testing.T) {
	a := loadModel(t, "moonshotai/Kimi-K3")
	b300, _ := hardware.Builtin("b300_sxm")
	h, ok, err := VLLMHybridKV(a, b300, 8, model.FP8, 16)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, HybridKV{BlockSize: 1472, PageBytes: 847_872, StateBytesPerLayer: 814_080, GroupSize: 24, AttnGroups: 1, StateGroups: 3}, h)
}

// TestKDACoreRoofline: Kimi-K3's KDA layer at TP 8 (12 heads of 128, 4,608
// conv channels, fp32 state) priced at 1 PFLOP/s and 1 TB/s (memory-bound):
//
//	decode of 1, rule  B = 2·(2·12·128 + 2·12·128) + 2·12·128·128·4 + 4·12·128
//	                     = 12,288 + 1,572,864 + 6,144 = 1,591,296 bytes
//	             conv  B = 4·4,608 + 4·3·4,608 = 73,728 bytes
//	prefill of 1,024 tokens, one sequence, rule
//	             F = 1,024·12·(6·128·128 + 2·64·256) = 1,610,612,736
//	             B = 2·1,024·6,144 + 1,572,864 + 4·1,024·1,536 = 20,447,232
func TestKDACoreRoofline(t *testing.T) {
	a := loadModel(t, "moonshotai/Kimi-K3")
	c := NewGDNCore(a.Linear, 8, 1e15, 1e12)
	assert.InDelta(t, 1_591_296e-12, c.RuleSeconds(1, 1, false), 1e-18)
	assert.InDelta(t, 73_728e-12, c.ConvSeconds(1, 1), 1e-18)
	assert.InDelta(t, (1_591_296+73_728)*1e-12, c.GenerationSeconds(1), 1e-18)
	assert.InDelta(t, max(1_610_612_736e-15, 20_447_232e-12), c.RuleSeconds(1024, 1, true), 1e-18)
	// Gated DeltaNet's rule reads no per-key gate
	g := *a.Linear
	g.KDA = false
	assert.InDelta(t, (1_591_296-6_144)*1e-12, NewGDNCore(&g, 8, 1e15, 1e12).RuleSeconds(1, 1, false), 1e-18)
}

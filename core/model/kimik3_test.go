package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKimiK3Layout: linear_attn_config's 1-based lists put layers 1–3, 5–7,
// … (69 of them) on Kimi Delta Attention and 4, 8, …, 92, 93 (24) on MLA;
// first_k_dense_replace 1 leaves layer 0 (a KDA layer) with the dense FFN.
// The experts are latent (routed_expert_hidden_size 3584 < 7168), two
// shared experts of 3072, MXFP4 (compressed-tensors mxfp4-pack-quantized,
// group 32) with attention, shared experts and the dense FFN bf16 (the
// ignore list).
func TestKimiK3Layout(t *testing.T) {
	a, err := Load("moonshotai/Kimi-K3", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, []LayerGroup{{LayerKind{Attn: AttnMLA, MoE: true}, 24}, {LayerKind{Attn: AttnLinear}, 1},
		{LayerKind{Attn: AttnLinear, MoE: true}, 68}}, a.Groups())
	assert.Equal(t, LayerKind{Attn: AttnLinear}, a.LayerKinds[0])
	assert.Equal(t, LayerKind{Attn: AttnMLA, MoE: true}, a.LayerKinds[3])
	assert.Equal(t, LayerKind{Attn: AttnMLA, MoE: true}, a.LayerKinds[92])
	assert.Equal(t, MoE{Experts: 896, TopK: 16, Intermediate: 3072, SharedIntermediate: 2 * 3072, Dtype: MXFP4, Latent: 3584}, *a.MoE)
	assert.Equal(t, MLA{QLoraRank: 1536, KVLoraRank: 512, NopeDim: 128, RopeDim: 64, VDim: 128, OutputGate: true}, *a.MLA)
	assert.Equal(t, LinearAttention{KeyHeads: 96, KeyDim: 128, ValueHeads: 96, ValueDim: 128, ConvKernel: 4, StateBytes: 4,
		KDA: true, FullRankGate: true}, *a.Linear)
	assert.Equal(t, BF16, a.WeightDtype)
	assert.Equal(t, BF16, a.AttentionDtype())
	assert.Equal(t, MXFP4, a.ExpertDtype())
	assert.Equal(t, 192, a.HeadDim) // the MLA prefill heads' P + R (7168 / 96 is no integer)
	assert.NoError(t, a.ValidateParallel(Parallel{TP: 8, DP: 1}))
}

// TestKimiK3Params: 2.78 T parameters, 105 B active, by hand from the
// config (norms, convolution taps, gates' biases and the attention
// residuals' few hidden_size vectors left out):
//
//	KDA layer  7168·4·12288 (q, k, v, g_proj) + 7168·128 (f_a) + 128·12288 (f_b)
//	           + 7168·96 (b) + 12288·7168 (o_proj)                    = 443,580,416
//	MLA layer  7168·(1536 + 512 + 64) + 1536·96·192 + 512·96·256 + 96·128·7168
//	           + 7168·96·128 (g_proj, the output gate)                = 232,194,048
//	dense FFN  3·7168·33792                                           = 726,663,168
//	MoE layer  896·3·3584·3072 + 896·7168 (router) + 3·7168·6144 (shared)
//	           + 2·7168·3584 (latent projections)                     = 29,784,932,352
//	embedding and lm_head  2·163840·7168                              = 2,348,810,240
//
// 69 KDA, 24 MLA, 1 dense and 92 MoE layers: 2,779,468,955,648. Active:
// 16 of the 896 experts, 2,779,468,955,648 − 92·880·3·3584·3072 =
// 105,348,497,408.
func TestKimiK3Params(t *testing.T) {
	a, err := Load("moonshotai/Kimi-K3", sharedConfigs)
	require.NoError(t, err)
	kda := int64(7168*4*12288 + 7168*128 + 128*12288 + 7168*96 + 12288*7168)
	assert.Equal(t, int64(443_580_416), kda)
	mla := int64(7168*(1536+512+64) + 1536*96*192 + 512*96*256 + 96*128*7168 + 7168*96*128)
	assert.Equal(t, int64(232_194_048), mla)
	moe := int64(896*3*3584*3072 + 896*7168 + 3*7168*6144 + 2*7168*3584)
	assert.Equal(t, int64(29_784_932_352), moe)
	want := 69*kda + 24*mla + 3*7168*33792 + 92*moe + 2*163840*7168
	assert.Equal(t, int64(2_779_468_955_648), want)
	assert.Equal(t, want, a.Params())
	assert.Equal(t, want-92*880*3*3584*3072, a.ActiveParams())
	assert.Equal(t, int64(105_348_497_408), a.ActiveParams())
}

// TestKimiK3CacheBytes: the 24 MLA layers cache one latent of 512 + 64
// elements a token, on every GPU: 24·576 = 13,824 bytes in fp8, 27,648 in
// bf16. Each of the 69 KDA layers holds per request (vLLM kda_state_shape,
// kda_state_dtype) three convolution states of (4 − 1) × 96·128/t bf16 and
// a recurrent state of 96/t heads × 128 × 128 fp32: at TP 8
// 3·3·1536·2 + 12·128·128·4 = 27,648 + 786,432 = 814,080 bytes a layer,
// 69·814,080 = 56,171,520 a request; at TP 1 69·(3·3·12288·2 +
// 96·128·128·4) = 69·6,512,640 = 449,372,160.
func TestKimiK3CacheBytes(t *testing.T) {
	a, err := Load("moonshotai/Kimi-K3", sharedConfigs)
	require.NoError(t, err)
	for _, tp := range []int{1, 8} {
		assert.Equal(t, int64(24*576), a.KVBytesPerToken(tp, 1))
		assert.Equal(t, int64(24*576*2), a.KVBytesPerToken(tp, 2))
	}
	assert.Equal(t, int64(814_080), a.Linear.StateBytesPerLayer(8))
	assert.Equal(t, int64(3*3*1536*2+12*128*128*4), a.Linear.StateBytesPerLayer(8))
	assert.Equal(t, int64(56_171_520), a.StateBytesPerSequence(8))
	assert.Equal(t, int64(69*(3*3*12288*2+96*128*128*4)), a.StateBytesPerSequence(1))
	assert.Equal(t, int64(449_372_160), a.StateBytesPerSequence(1))
}

// TestKimiK3ConfigErrors: a missing or inconsistent field is named.
func TestKimiK3ConfigErrors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedConfigs, "moonshotai--Kimi-K3_config.json"))
	require.NoError(t, err)
	for _, c := range []struct {
		edit func(tc map[string]any)
		want string
	}{
		{func(tc map[string]any) { delete(tc, "linear_attn_config") }, "text_config.linear_attn_config is missing"},
		{func(tc map[string]any) { delete(tc["linear_attn_config"].(map[string]any), "num_heads") }, "linear_attn_config.num_heads is missing"},
		{func(tc map[string]any) { tc["linear_attn_config"].(map[string]any)["kda_layers"] = []int{1, 2} },
			"layer 3 (1-based) is in neither kda_layers nor full_attn_layers"},
		{func(tc map[string]any) { tc["linear_attn_config"].(map[string]any)["full_attn_layers"] = []int{4, 94} },
			"linear_attn_config.full_attn_layers[1] = 94, outside 1..num_hidden_layers = 93"},
		{func(tc map[string]any) { tc["linear_attn_config"].(map[string]any)["full_attn_layers"] = []int{3} },
			"linear_attn_config.full_attn_layers[0] = 3: layer 3 is listed twice"},
		{func(tc map[string]any) { delete(tc, "num_experts_per_token") }, "text_config.num_experts_per_token is missing"},
		{func(tc map[string]any) { tc["routed_expert_hidden_size"] = 8192 }, "routed_expert_hidden_size = 8192 is wider than hidden_size = 7168"},
		{func(tc map[string]any) { tc["hidden_act"] = "gelu" }, `hidden_act is "gelu", want "situ"`},
		{func(tc map[string]any) { delete(tc, "kv_lora_rank") }, "kv_lora_rank is missing"},
	} {
		var cfg map[string]any
		require.NoError(t, json.Unmarshal(data, &cfg))
		c.edit(cfg["text_config"].(map[string]any))
		edited, err := json.Marshal(cfg)
		require.NoError(t, err)
		_, err = Parse(edited, "moonshotai/Kimi-K3")
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestKimiK3Projections: the GEMMs of one layer on one GPU at TP 8
// (P = 96·128 = 12,288, P/8 = 1,536): a KDA layer's q, k, v and full-rank
// output gate fused (4·1,536 = 6,144 from 7,168), the decay gate's rank-128
// pair (f_a replicated, f_b column parallel), one beta a head (96/8 = 12),
// o_proj; without use_full_rank_gate the output gate is the rank-128 pair
// g_a, g_b. An MLA layer ends with the output gate g_proj, (96/8)·128 =
// 1,536 from 7,168.
func TestKimiK3Projections(t *testing.T) {
	a, err := Load("moonshotai/Kimi-K3", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, []GEMMShape{{"qkvg", 6144, 7168}, {"f_a", 128, 7168}, {"f_b", 1536, 128}, {"b", 12, 7168}, {"o_proj", 7168, 1536}},
		a.LinearProjections(8))
	l := *a.Linear
	l.FullRankGate = false
	lowRank := *a
	lowRank.Linear = &l
	assert.Equal(t, []GEMMShape{{"qkv", 4608, 7168}, {"g_a", 128, 7168}, {"g_b", 1536, 128}, {"f_a", 128, 7168}, {"f_b", 1536, 128},
		{"b", 12, 7168}, {"o_proj", 7168, 1536}}, lowRank.LinearProjections(8))
	assert.Equal(t, []GEMMShape{{"fused_qkv_a", 2112, 7168}, {"q_b", 12 * 192, 1536}, {"o_proj", 7168, 1536}, {"g_proj", 1536, 7168}},
		a.MLAProjections(8))
}

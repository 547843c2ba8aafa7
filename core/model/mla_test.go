package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMLAKVBytesPerToken: DeepSeek-V3 caches one latent of kv_lora_rank +
// qk_rope_head_dim = 512 + 64 elements per token in each of its 61 layers,
// the same on every GPU (one KV head): 61 · 576 · 2 = 70,272 bytes in bf16,
// 35,136 in fp8, at any TP. GLM-5 (DSA, 78 layers) adds the indexer's 128
// fp8 elements and one fp32 scale (132 bytes) a layer, and with an fp8 cache
// stores DeepSeek's fp8_ds_mla latent (512 fp8 + 4 fp32 scales + 64 bf16 =
// 656 bytes): 78 · (1,152 + 132) = 100,152 and 78 · (656 + 132) = 61,464.
func TestMLAKVBytesPerToken(t *testing.T) {
	v3, err := Load("deepseek-ai/DeepSeek-V3", sharedConfigs)
	require.NoError(t, err)
	for _, tp := range []int{1, 8} {
		assert.Equal(t, int64(61*(512+64)*2), v3.KVBytesPerToken(tp, 2))
		assert.Equal(t, int64(61*(512+64)), v3.KVBytesPerToken(tp, 1))
	}
	glm, err := Load("zai-org/GLM-5", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, int64(78*(576*2+132)), glm.KVBytesPerToken(8, 2))
	assert.Equal(t, int64(78*(656+132)), glm.KVBytesPerToken(8, 1))
}

// TestDeepSeekV3Layout: the config's layers (first_k_dense_replace 3, then
// MoE every layer), MLA widths, grouped routing and fp8 block weights.
func TestDeepSeekV3Layout(t *testing.T) {
	a, err := Load("deepseek-ai/DeepSeek-V3", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, &MLA{QLoraRank: 1536, KVLoraRank: 512, NopeDim: 128, RopeDim: 64, VDim: 128}, a.MLA)
	assert.Equal(t, []LayerGroup{{LayerKind{Attn: AttnMLA}, 3}, {LayerKind{Attn: AttnMLA, MoE: true}, 58}}, a.Groups())
	assert.Equal(t, MoE{Experts: 256, TopK: 8, Intermediate: 2048, SharedIntermediate: 2048, Groups: 8, TopKGroups: 4}, *a.MoE)
	assert.Equal(t, FP8Block, a.WeightDtype)
	assert.Equal(t, FP8Block, a.AttentionDtype())
	assert.Equal(t, 192, a.HeadDim) // the prefill heads' query/key width, P + R
}

// TestDeepSeekV3Params: 671 B parameters, 37 B active, counted by hand from
// the config (norms left out):
//
//	attention  61 · (7168·(1536 + 576) + 1536·128·192 + 512·128·256 + 128·128·7168) = 61 · 187,105,280
//	dense FFN   3 · 3·7168·18432
//	MoE        58 · (256·3·7168·2048 + 256·7168 + 3·7168·2048)   (routed, router, shared)
//	embedding and lm_head  2 · 129280·7168
//
// = 671,025,397,760; active: the MoE layers hold 8 of the 256 routed experts,
// 671,025,397,760 − 58 · 248·3·7168·2048 = 37,551,276,032.
func TestDeepSeekV3Params(t *testing.T) {
	a, err := Load("deepseek-ai/DeepSeek-V3", sharedConfigs)
	require.NoError(t, err)
	attn := int64(7168*(1536+576) + 1536*128*192 + 512*128*256 + 128*128*7168)
	assert.Equal(t, int64(187_105_280), attn)
	moe := int64(256*3*7168*2048 + 256*7168 + 3*7168*2048)
	want := 61*attn + 3*3*7168*18432 + 58*moe + 2*129280*7168
	assert.Equal(t, int64(671_025_397_760), want)
	assert.Equal(t, want, a.Params())
	assert.Equal(t, want-58*248*3*7168*2048, a.ActiveParams())
	assert.Equal(t, int64(37_551_276_032), a.ActiveParams())
}

// TestKimiK25INT4Experts: Kimi-K2.5's compressed-tensors checkpoint stores
// int4 routed experts (group 32, bf16 scales: 4.5 bits) and leaves attention,
// the shared expert and the first dense layer in bf16 (its ignore list). One
// expert is 3·7168·2048 weights, 24,772,608 bytes at 0.5625; at TP 8 each GPU
// holds every expert's 2048/8 = 256 columns, so the experts of one layer
// weigh 384 · 3·7168·256 · 0.5625 = 1,189,085,184 bytes per GPU.
func TestKimiK25INT4Experts(t *testing.T) {
	a, err := Load("moonshotai/Kimi-K2.5", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, INT4, a.ExpertDtype())
	assert.Equal(t, BF16, a.WeightDtype)
	assert.Equal(t, BF16, a.AttentionDtype())
	assert.Equal(t, 24_772_608.0, 3*7168*2048*a.ExpertDtype().Bytes())
	par := Parallel{TP: 8, DP: 1}
	withExperts := a.WeightBytesPerGPUParallel(par)
	b := *a
	moe := *a.MoE
	moe.Experts = 0 // the same model without its routed experts' weights (the router goes too: 384·7168·2 bytes a layer)
	b.MoE = &moe
	assert.Equal(t, int64(60*(1_189_085_184+384*7168*2)), withExperts-b.WeightBytesPerGPUParallel(par))
}

// TestMLAQuantExclusions: ModelOpt NVFP4 releases keep attention in bf16 by
// excluding its modules; GLM-5 excludes o_proj too, DeepSeek-V3.1 does not,
// so most of its attention weights (o_proj: 117 M of 187 M a layer) are
// NVFP4 and the rest is said in Approximations.
func TestMLAQuantExclusions(t *testing.T) {
	glm, err := Load("nvidia/GLM-5-NVFP4", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, BF16, glm.AttentionDtype())
	assert.Equal(t, NVFP4, glm.WeightDtype)
	assert.Equal(t, NVFP4, glm.ExpertDtype())
	assert.Equal(t, FP8, glm.KVDtype)
	v31, err := Load("nvidia/DeepSeek-V3.1-NVFP4", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, NVFP4, v31.AttentionDtype())
	assert.Contains(t, v31.Approximations, "attention: 63 % of the weights are nvfp4 and 37 % bf16 (excluded from quantization); all priced as nvfp4")
	k26, err := Load("nvidia/Kimi-K2.6-NVFP4", sharedConfigs)
	require.NoError(t, err)
	// shared experts and the dense layer 0 excluded too: only the experts are NVFP4
	assert.Equal(t, BF16, k26.WeightDtype)
	assert.Equal(t, NVFP4, k26.ExpertDtype())
}

func TestExcludedPatterns(t *testing.T) {
	for _, c := range []struct {
		p, name string
		want    bool
	}{
		{"re:.*self_attn.*", "model.layers.3.self_attn.q_a_proj", true},
		{`re:.*mlp\.(gate|up|gate_up|down)_proj.*`, "model.layers.0.mlp.gate_proj", true},
		{`re:.*mlp\.(gate|up|gate_up|down)_proj.*`, "model.layers.5.mlp.experts.0.gate_proj", false},
		{"re:self_attn", "model.layers.3.self_attn.q_a_proj", false}, // re.match is anchored at the start
		{"model.layers.0.self_attn.indexer*", "model.layers.0.self_attn.indexer.wk", true},
		{"language_model.model.layers.0*", "language_model.model.layers.0.mlp.down_proj", true},
		{"model.layers.1", "model.layers.1.mlp.gate_proj", true},
		{"model.layers.1", "model.layers.10.mlp.gate_proj", false},
	} {
		assert.Equal(t, c.want, excluded(c.p, c.name), "%s on %s", c.p, c.name)
	}
}

func TestMLAConfigErrors(t *testing.T) {
	base := `"architectures":["DeepseekV3ForCausalLM"],"num_hidden_layers":4,"hidden_size":64,"num_attention_heads":4,
		"intermediate_size":128,"vocab_size":100,"max_position_embeddings":512,"n_routed_experts":8,"num_experts_per_tok":2,
		"moe_intermediate_size":32,"n_shared_experts":1,"first_k_dense_replace":1,"q_lora_rank":null,"kv_lora_rank":16,
		"qk_nope_head_dim":8,"qk_rope_head_dim":4`
	_, err := Parse([]byte(`{`+base+`,"v_head_dim":8}`), "m")
	require.NoError(t, err)
	for _, c := range []struct{ extra, want string }{
		{``, "config.json field v_head_dim is missing"},
		{`,"v_head_dim":0`, "v_head_dim = 0, want > 0"},
		{`,"v_head_dim":8,"moe_layer_freq":[1,1,1,1]`, "moe_layer_freq must be an integer for DeepseekV3ForCausalLM"},
		{`,"v_head_dim":8,"moe_layer_freq":"x"`, "moe_layer_freq must be an integer or an array of 0/1 flags"},
		{`,"v_head_dim":8,"num_nextn_predict_layers":-1`, "num_nextn_predict_layers = -1, want ≥ 0"},
		{`,"v_head_dim":8,"n_group":3`, "n_group = 3, topk_group = 0: n_group must divide n_routed_experts = 8"},
		{`,"v_head_dim":8,"index_topk":64`, "index_n_heads is missing"},
		{`,"v_head_dim":8,"quantization_config":{"quant_method":"compressed-tensors","config_groups":{"g":{"targets":["Linear"],"weights":{"num_bits":3,"type":"int"}}}}`,
			"weights of 3-bit int (group_size 0) with 0-bit activations not supported"},
	} {
		_, err := Parse([]byte(`{`+base+c.extra+`}`), "m")
		assert.ErrorContains(t, err, c.want, c.extra)
	}
}

// The checkpoint's multi-token-prediction layers (MTP's draft layers, not in
// the model's pass): DeepSeek-V3's num_nextn_predict_layers 1, Kimi-K2's 0,
// Qwen3.5's mtp_num_hidden_layers 1 (in text_config), Qwen3-32B none.
func TestMTPLayers(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int
	}{{"deepseek-ai/DeepSeek-V3", 1}, {"moonshotai/Kimi-K2-Instruct", 0}, {"Qwen/Qwen3.5-27B", 1}, {"Qwen/Qwen3-32B", 0},
		{"XiaomiMiMo/MiMo-7B-Base", 1}} {
		a, err := Load(c.model, sharedConfigs)
		require.NoError(t, err, c.model)
		assert.Equal(t, c.want, a.MTPLayers, c.model)
	}
}

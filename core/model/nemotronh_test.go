package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNemotronHNanoLayout: Nemotron-3-Nano-30B-A3B's 52 layers
// (hybrid_override_pattern: 23 Mamba-2, 6 attention, 23 MoE) are priced as
// 29 mixers, the 23 MoE layers beside the Mamba-2 ones; its parameters are
// the card's 31.6 B by hand count: a Mamba-2 layer's in_proj h·(2·H·P +
// 2·G·N + H) and out_proj H·P·h, an attention layer's GQA projections, a
// MoE layer's 128 relu² experts of 1856 (2·h·I each, priced as SwiGLU of
// 1237), the router and a shared expert of 3712 (2475).
func TestNemotronHNanoLayout(t *testing.T) {
	a := loadShared(t, "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
	assert.Equal(t, &LinearAttention{KeyHeads: 8, KeyDim: 128, ValueHeads: 64, ValueDim: 64, ConvKernel: 4, StateBytes: 4, Mamba2: true, Chunk: 128}, a.Linear)
	assert.Equal(t, &MoE{Experts: 128, TopK: 6, Intermediate: 1237, SharedIntermediate: 2475}, a.MoE)
	assert.Equal(t, 128, a.HeadDim)
	assert.Equal(t, 29, a.Layers)
	assert.Equal(t, []LayerGroup{{Kind: LayerKind{Attn: AttnFull, NoFFN: true}, Count: 6}, {Kind: LayerKind{Attn: AttnLinear, MoE: true}, Count: 23}}, a.Groups())
	h := int64(2688)
	mamba := h*(2*64*64+2*8*128+64) + 64*64*h
	attn := h*32*128*2 + 2*h*2*128
	moe := 128*3*h*1237 + 128*h + 3*h*2475
	assert.Equal(t, 23*mamba+6*attn+23*moe+2*131072*h, a.Params())
	assert.InDelta(t, 31.6e9, float64(a.Params()), 0.005*31.6e9)
	// the state: (K−1)·(H·P + 2·G·N)·2 of convolution plus H·P·N·4 (fp32)
	// a layer, 23 layers; KV in the 6 attention layers only
	assert.Equal(t, int64(23*(3*(4096+2048)*2+64*64*128*4)), a.StateBytesPerSequence(1))
	assert.Equal(t, int64(6*2*128*2*2), a.KVBytesPerToken(1, 2))
	assert.Equal(t, []GEMMShape{{"in_proj", (8192 + 2048 + 64) / 4, 2688}, {"out_proj", 2688, 1024}}, a.LinearProjections(4))
	require.NoError(t, a.Validate(8))
	assert.ErrorContains(t, a.Validate(16), "does not divide n_groups = 8")
}

// TestNemotronHDense: Nemotron-H-56B (118 layers: 54 Mamba-2, 10
// attention, 54 MLP of 32768 relu², no MoE; attention_head_dim 128) and
// Nemotron-3.5-Lightning (layers_block_type). Super and Ultra's latent
// experts are refused by name.
func TestNemotronHDense(t *testing.T) {
	// its config.json has "time_step_limit": [0.0, Infinity] (Python's
	// json), a field the model is not read from: served as it is
	data, err := os.ReadFile(filepath.Join(sharedConfigs, "nvidia--Nemotron-H-56B-Base-8K_config.json"))
	if err != nil {
		t.Skip("shared model_configs absent")
	}
	require.Contains(t, string(data), "Infinity")
	a, err := Parse(data, "nvidia/Nemotron-H-56B-Base-8K")
	require.NoError(t, err)
	assert.Nil(t, a.MoE)
	assert.Equal(t, 128, a.HeadDim)
	assert.Equal(t, 21845, a.Intermediate)
	assert.Equal(t, []LayerGroup{{Kind: LayerKind{Attn: AttnFull, NoFFN: true}, Count: 10}, {Kind: LayerKind{Attn: AttnLinear}, Count: 54}}, a.Groups())
	assert.Equal(t, 2.0, a.Linear.StateBytes) // no mamba_ssm_cache_dtype: bf16
	assert.InDelta(t, 56e9, float64(a.Params()), 0.03*56e9)

	l := loadShared(t, "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4")
	assert.Equal(t, 23, l.MoELayers())
	assert.Equal(t, NVFP4, l.ExpertDtype())
}

// TestNemotronSuperLatentExperts: Nemotron-3 Super-120B-A12B (88 layers:
// 40 Mamba-2, 8 attention, 40 latent MoE) by hand from its config.json. A
// Mamba-2 layer: in_proj h·(2·H·P + 2·G·N + H) = 4096·(16384 + 2048 + 128)
// and out_proj H·P·h; an attention layer: q and o 4096·32·128 each, k and v
// 4096·2·128 each; a MoE layer: 512 relu² experts of 2688 on the 1024-wide
// latent (2·1024·2688 each, priced as SwiGLU of 1792: 3·1024·1792), the
// router 512·h, a shared expert of 5376 on h (3·h·3584) and the latent
// projections 2·h·1024. Total 120,665,931,776 (the card's 120 B), active
// 12,767,461,376 (A12B). KV: 8 attention layers × K and V × 2 KV heads ×
// 128 = 4096 elements a token.
func TestNemotronSuperLatentExperts(t *testing.T) {
	a := loadShared(t, "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8")
	assert.Equal(t, &MoE{Experts: 512, TopK: 22, Intermediate: 1792, SharedIntermediate: 3584, Latent: 1024}, a.MoE)
	assert.Equal(t, 1024, a.ExpertHidden())
	assert.Equal(t, []GEMMShape{{"fc1_latent_proj", 1024, 4096}, {"fc2_latent_proj", 4096, 1024}}, a.LatentProjections())
	h := int64(4096)
	mamba := h*(2*128*64+2*8*128+128) + 128*64*h
	attn := h*32*128*2 + 2*h*2*128
	moe := 512*3*1024*1792 + 512*h + 3*h*3584 + 2*h*1024
	assert.Equal(t, int64(120_665_931_776), 40*mamba+8*attn+40*moe+2*131072*h)
	assert.Equal(t, int64(120_665_931_776), a.Params())
	assert.Equal(t, int64(12_767_461_376), a.ActiveParams())
	assert.Equal(t, int64(8*2*2*128*1), a.KVBytesPerToken(1, 1))
	// FP8 (every linear, hf_quant_config.json excludes none): at TP 1 the
	// weights are the parameters at 1 byte, the bf16 router and embeddings
	// at 2
	bf16 := 40*512*h + 2*131072*h
	b := a.WeightDtype.Bytes()
	assert.Equal(t, int64(float64(a.Params()-bf16)*b)+2*bf16, a.WeightBytesPerGPUParallel(Parallel{TP: 1, DP: 1}))
	require.NoError(t, a.Validate(8))
}

// TestNemotronLatentTooWide: a latent wider than the hidden state is an
// error naming both fields.
func TestNemotronLatentTooWide(t *testing.T) {
	bad := []byte(`{"architectures": ["NemotronHForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 1, "head_dim": 16, "vocab_size": 10, "max_position_embeddings": 64, "hybrid_override_pattern": "*E", "n_routed_experts": 4,
		"num_experts_per_tok": 2, "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 0, "moe_latent_size": 128,
		"mamba_num_heads": 4, "mamba_head_dim": 16, "n_groups": 1, "ssm_state_size": 16, "conv_kernel": 4, "chunk_size": 8}`)
	_, err := Parse(bad, "bad")
	assert.ErrorContains(t, err, "moe_latent_size = 128 is wider than hidden_size = 64")
}

// TestNemotronHNVFP4Roles: nvidia's Nano NVFP4 keeps some Mamba-2 and every
// attention layer bf16 (hf_quant_config.json exclude_modules, named
// backbone.layers.<i>.mixer.…): the experts NVFP4, the mixers priced as
// the format most of their weights have, with a note.
func TestNemotronHNVFP4Roles(t *testing.T) {
	a := loadShared(t, "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4")
	assert.Equal(t, NVFP4, a.ExpertDtype())
	assert.Equal(t, FP8, a.KVDtype)
	assert.Contains(t, a.Approximations[len(a.Approximations)-1], "attention:")
}

// TestNemotronUltraLayerCount: Nemotron-3 Ultra-550B-A55B's config.json has
// no num_hidden_layers; its 108 layers come from layers_block_type (48
// Mamba-2, 12 attention, 48 latent MoE), as transformers' NemotronHConfig
// derives the count. By hand (h = 8192): a Mamba-2 layer in_proj
// h·(2·256·64 + 2·8·128 + 256) plus out_proj 256·64·h = 421,527,552; an
// attention layer q and o 8192·64·128 each, k and v 8192·2·128 each =
// 138,412,032; a MoE layer 512 relu² experts of 5120 on the 2048-wide latent
// (priced as SwiGLU of 3413: 3·2048·3413 each), the router 512·h, a shared
// expert of 10240 (3·h·6827) and the latent projections 2·h·2048 =
// 10,941,898,752; embeddings and head 2·131072·h. Total 549,252,890,624 (the
// card's 550 B); active (22 experts a token) 56,050,909,184 (A55B). KV: 12
// layers × K and V × 2 heads × 128 = 6,144 elements a token.
func TestNemotronUltraLayerCount(t *testing.T) {
	a := loadShared(t, "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16")
	assert.Equal(t, &MoE{Experts: 512, TopK: 22, Intermediate: 3413, SharedIntermediate: 6827, Latent: 2048}, a.MoE)
	assert.Equal(t, 60, a.Layers) // 48 Mamba-2 mixers with the MoE layers beside, 12 attention
	h := int64(8192)
	mamba := h*(2*256*64+2*8*128+256) + 256*64*h
	attn := h*64*128*2 + 2*h*2*128
	moe := 512*3*2048*3413 + 512*h + 3*h*6827 + 2*h*2048
	assert.Equal(t, int64(549_252_890_624), 48*mamba+12*attn+48*moe+2*131072*h)
	assert.Equal(t, int64(549_252_890_624), a.Params())
	assert.Equal(t, int64(56_050_909_184), a.ActiveParams())
	assert.Equal(t, int64(12*2*2*128), a.KVBytesPerToken(1, 1))

	// a count that disagrees with the list is still an error
	bad := []byte(`{"architectures": ["NemotronHForCausalLM"], "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
		"num_key_value_heads": 1, "head_dim": 16, "vocab_size": 10, "max_position_embeddings": 64, "layers_block_type": ["attention", "mamba"],
		"mamba_num_heads": 4, "mamba_head_dim": 16, "n_groups": 1, "ssm_state_size": 16, "conv_kernel": 4, "chunk_size": 8}`)
	_, err := Parse(bad, "bad")
	assert.ErrorContains(t, err, "2 layers, want num_hidden_layers = 3")
}

package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQwen35Layout reads Qwen3.5-397B-A17B's text_config as vLLM's
// qwen3_5.py builds it: layer_types (every fourth layer full attention),
// Gated DeltaNet dimensions, the gated full attention and the MoE block.
func TestQwen35Layout(t *testing.T) {
	a := loadShared(t, "Qwen/Qwen3.5-397B-A17B")
	assert.Equal(t, &MoE{Experts: 512, TopK: 10, Intermediate: 1024, SharedIntermediate: 1024}, a.MoE)
	assert.Equal(t, &LinearAttention{KeyHeads: 16, KeyDim: 128, ValueHeads: 64, ValueDim: 128, ConvKernel: 4, StateBytes: 4}, a.Linear)
	assert.Equal(t, []LayerGroup{
		{Kind: LayerKind{Attn: AttnFull, MoE: true}, Count: 15},
		{Kind: LayerKind{Attn: AttnLinear, MoE: true}, Count: 45},
	}, a.Groups())
	assert.Equal(t, LayerKind{Attn: AttnLinear, MoE: true}, a.LayerKinds[0])
	assert.Equal(t, LayerKind{Attn: AttnFull, MoE: true}, a.LayerKinds[3])
	assert.True(t, a.AttnOutputGate && a.QKNorm)
	assert.Equal(t, 15, a.FullKVLayers())
	assert.Equal(t, 45, a.LinearLayers())
	assert.Equal(t, BF16, a.WeightDtype)
	// q_proj yields a query and a gate per head: (2·32/8 + 2·⌈2/8⌉)·256 at TP 8
	assert.Equal(t, GEMMShape{"qkv", (8 + 2) * 256, 4096}, a.LayerGEMMs(8)[0])
	assert.Equal(t, []GEMMShape{{"in_proj_qkvz", (4096 + 16384) / 8, 4096}, {"in_proj_ba", 16, 4096}, {"out_proj", 4096, 1024}},
		a.LinearProjections(8))
	require.NoError(t, a.ValidateParallel(Parallel{TP: 8, DP: 1, EP: true}))
	b := *a
	l := *a.Linear
	l.KeyHeads = 4
	b.Linear = &l
	assert.ErrorContains(t, b.Validate(8), "tensor parallel size 8 does not divide linear_num_key_heads = 4")

	d := loadShared(t, "Qwen/Qwen3.5-27B")
	assert.Nil(t, d.MoE)
	assert.Equal(t, 17408, d.Intermediate)
	assert.Equal(t, []LayerGroup{
		{Kind: LayerKind{Attn: AttnFull}, Count: 16},
		{Kind: LayerKind{Attn: AttnLinear}, Count: 48},
	}, d.Groups())
}

// TestQwen35Params hand-counts the parameters against the model cards'
// totals (397 B / 17 B active, 27 B: the vision towers, left out, add about
// half a billion).
func TestQwen35Params(t *testing.T) {
	a := loadShared(t, "Qwen/Qwen3.5-397B-A17B")
	// h 4096, V 248,320, 15 full + 45 linear layers, every layer MoE
	full := int64(4096*2*32*256 + 2*4096*2*256 + 32*256*4096)           // q with gate, k, v, o: 104,857,600
	linear := int64(4096*(2*16*128+2*64*128) + 4096*2*64 + 64*128*4096) // qkvz, ba, out: 117,964,800
	moe := int64(512*3*4096*1024 + 512*4096 + 3*4096*1024)              // experts, router, shared: 6,457,131,008
	embed := int64(2 * 248320 * 4096)
	want := 15*full + 45*linear + 60*moe + embed
	assert.Equal(t, int64(396_343_377_920), want)
	assert.Equal(t, want, a.Params())
	assert.Equal(t, want-60*502*3*4096*1024, a.ActiveParams()) // 17,346,068,480
	assert.InDelta(t, 397e9, float64(a.Params()), 0.01*397e9)
	assert.InDelta(t, 17e9, float64(a.ActiveParams()), 0.03*17e9)

	d := loadShared(t, "Qwen/Qwen3.5-27B")
	full = int64(5120*2*24*256 + 2*5120*4*256 + 24*256*5120)           // 104,857,600
	linear = int64(5120*(2*16*128+2*48*128) + 5120*2*48 + 48*128*5120) // 115,834,880
	want = 16*full + 48*linear + 64*3*5120*17408 + 2*248320*5120
	assert.Equal(t, int64(26_893_352_960), want)
	assert.Equal(t, want, d.Params())
}

// TestQwen35CacheBytes: KV only in the full-attention layers; the linear
// layers' state per request is the convolution's last 3 inputs (bf16) and
// the fp32 recurrent state, per GPU.
func TestQwen35CacheBytes(t *testing.T) {
	a := loadShared(t, "Qwen/Qwen3.5-397B-A17B")
	assert.Equal(t, int64(1*256*15*2*2), a.KVBytesPerToken(8, 2)) // ⌈2/8⌉ KV head: 15,360
	assert.Equal(t, int64(2*256*15*2*1), a.KVBytesPerToken(1, 1))
	// TP 8: conv 3 · (2·16·128 + 64·128)/8 · 2 = 9,216; state 8·128·128·4 = 524,288
	assert.Equal(t, int64(9216+524288), a.Linear.StateBytesPerLayer(8))
	assert.Equal(t, int64(45*(9216+524288)), a.StateBytesPerSequence(8))
	assert.Equal(t, int64(45*(9216+8*128*128*2)), a.StateBytesPerSequenceAs(8, 2)) // SGLang --mamba-ssm-dtype bfloat16
	d := loadShared(t, "Qwen/Qwen3.5-27B")
	assert.Equal(t, int64(3*10240*2+48*128*128*4), d.Linear.StateBytesPerLayer(1)) // 3,207,168
	assert.Equal(t, int64(48*3_207_168), d.StateBytesPerSequence(1))
	assert.Equal(t, int64(4*256*16*2*2), d.KVBytesPerToken(1, 2))
}

// TestQwen35Quantization: nvidia's NVFP4 releases keep attention, linear
// attention and the shared expert in bf16 (exclude patterns); the Qwen3.6
// MIXED_PRECISION ones store attention in FP8 and the FFNs weight-only NVFP4.
func TestQwen35Quantization(t *testing.T) {
	a := loadShared(t, "nvidia/Qwen3.5-397B-A17B-NVFP4")
	assert.Equal(t, NVFP4, a.ExpertDtype())
	assert.Equal(t, BF16, a.WeightDtype)
	assert.Equal(t, BF16, a.AttentionDtype())
	assert.Equal(t, FP8, a.KVDtype)
	d := loadShared(t, "nvidia/Qwen3.6-27B-NVFP4")
	assert.Equal(t, NVFP4, d.WeightDtype)
	assert.Equal(t, FP8, d.AttentionDtype())
	assert.Contains(t, d.Approximations, "weight-only NVFP4 layers (W4A16_NVFP4: bf16 activations) priced as NVFP4")
	m := loadShared(t, "nvidia/Qwen3.6-35B-A3B-NVFP4")
	assert.Equal(t, NVFP4, m.ExpertDtype())
	assert.Equal(t, FP8, m.AttentionDtype())
}

func TestQwen35ConfigErrors(t *testing.T) {
	types := strings.Repeat(`"linear_attention",`, 3) + `"full_attention"`
	base := `"architectures":["Qwen3_5ForConditionalGeneration"],"text_config":{"num_hidden_layers":4,"hidden_size":64,
		"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":128,"vocab_size":100,
		"max_position_embeddings":512,"linear_num_key_heads":2,"linear_key_head_dim":8,"linear_num_value_heads":4,
		"linear_value_head_dim":8,"linear_conv_kernel_dim":4`
	a, err := Parse([]byte(`{`+base+`,"layer_types":[`+types+`]}}`), "m")
	require.NoError(t, err)
	assert.Equal(t, 3, a.LinearLayers())
	assert.Equal(t, 2.0, a.Linear.StateBytes) // no mamba_ssm_dtype: bf16
	b, err := Parse([]byte(`{`+base+`,"full_attention_interval":2}}`), "m")
	require.NoError(t, err)
	assert.Equal(t, []LayerKind{{Attn: AttnLinear}, {Attn: AttnFull}, {Attn: AttnLinear}, {Attn: AttnFull}}, b.LayerKinds)
	for _, c := range []struct{ extra, want string }{
		{`,"layer_types":["full_attention"]`, "layer_types has 1 entries, want num_hidden_layers = 4"},
		{`,"layer_types":[` + strings.Repeat(`"mamba",`, 3) + `"full_attention"]`, `layer_types[0] = "mamba"`},
		{``, "full_attention_interval (or layer_types) is missing"},
		{`,"full_attention_interval":9`, "layer_types has no full_attention layer"},
		{`,"full_attention_interval":2,"mamba_ssm_dtype":"int8"`, `mamba_ssm_dtype "int8" not supported`},
		{`,"full_attention_interval":2,"linear_num_value_heads":3`, "linear_num_key_heads = 2 does not divide linear_num_value_heads = 3"},
	} {
		_, err := Parse([]byte(`{`+base+c.extra+`}}`), "m")
		assert.ErrorContains(t, err, c.want, c.extra)
	}
	_, err = Parse([]byte(`{`+strings.Replace(base, `"linear_key_head_dim":8,`, "", 1)+`,"full_attention_interval":2}}`), "m")
	assert.ErrorContains(t, err, "config.json field text_config.linear_key_head_dim is missing")
}

// TestQwen3VLLanguageModel: Qwen3-VL's text_config is a Qwen3 (dense) or
// Qwen3-MoE language model, the same shapes as the text releases: the
// language model of Qwen3-VL-235B-A22B counts Qwen3-235B-A22B's parameters,
// that of Qwen3-VL-32B Qwen3-32B's; the vision tower is left out and said so.
func TestQwen3VLLanguageModel(t *testing.T) {
	vl := loadShared(t, "Qwen/Qwen3-VL-235B-A22B-Instruct")
	txt := loadShared(t, "Qwen/Qwen3-235B-A22B-FP8")
	assert.Equal(t, txt.Params(), vl.Params())
	assert.Equal(t, txt.MoE.Experts, vl.MoE.Experts)
	assert.True(t, vl.QKNorm)
	assert.Contains(t, vl.Approximations, "multimodal checkpoint: the language model (text_config) is simulated; the vision tower and its weights are left out")
	d := loadShared(t, "Qwen/Qwen3-VL-32B-Instruct")
	q := loadShared(t, "Qwen/Qwen3-32B-FP8")
	assert.False(t, d.Hybrid())
	assert.True(t, d.QKNorm)
	assert.Equal(t, q.Params(), d.Params())
	assert.Equal(t, q.KVBytesPerToken(2, 2), d.KVBytesPerToken(2, 2))
	small := loadShared(t, "Qwen/Qwen3-VL-2B-Instruct")
	assert.True(t, small.TieEmbeddings)
}

// TestTextReleasesOfKnownLayers: MiMo-7B is Qwen2's decoder (vLLM mimo.py)
// with multi-token-prediction layers left out; MiniMax-M3's text-only
// release has the layers of its multimodal checkpoint's language model.
func TestTextReleasesOfKnownLayers(t *testing.T) {
	m := loadShared(t, "XiaomiMiMo/MiMo-7B-Base")
	assert.False(t, m.Hybrid())
	// 36 · (qkv (32 + 16)·128·4096 + o 4096·4096 + 3·4096·11008) + 2·151,680·4096
	assert.Equal(t, int64(36*(48*128*4096+4096*4096+3*4096*11008)+2*151680*4096), m.Params())
	assert.Contains(t, m.Approximations[0], "multi-token-prediction")
	txt := loadShared(t, "MiniMaxAI/MiniMax-M3")
	vl := loadShared(t, "nvidia/MiniMax-M3-NVFP4")
	assert.Equal(t, vl.Params(), txt.Params())
	assert.Equal(t, vl.Groups(), txt.Groups())
	assert.Equal(t, BF16, txt.ExpertDtype())
}

// TestLlama4Layout: Llama-4's RoPE layers are chunked local attention
// (8,192-token chunks), every fourth a global NoPE layer; Maverick's MoE
// layers (128 experts, top 1, a shared expert) alternate with dense FFNs of
// intermediate_size_mlp; Scout's are all MoE (16 experts). Parameters
// against the cards (109 B / 17 B and 400 B / 17 B, the vision tower aside).
func TestLlama4Layout(t *testing.T) {
	s := loadShared(t, "meta-llama/Llama-4-Scout-17B-16E-Instruct")
	assert.Equal(t, &MoE{Experts: 16, TopK: 1, Intermediate: 8192, SharedIntermediate: 8192}, s.MoE)
	assert.Equal(t, 8192, s.AttentionChunk)
	assert.Equal(t, []LayerGroup{{Kind: LayerKind{Attn: AttnFull, MoE: true}, Count: 12}, {Kind: LayerKind{Attn: AttnChunked, MoE: true}, Count: 36}}, s.Groups())
	assert.Equal(t, LayerKind{Attn: AttnFull, MoE: true}, s.LayerKinds[3])
	attn := int64(5120*40*128 + 2*5120*8*128 + 40*128*5120)
	moe := int64(16*3*5120*8192 + 16*5120 + 3*5120*8192)
	assert.Equal(t, 48*(attn+moe)+2*202048*5120, s.Params())
	assert.Equal(t, s.Params()-48*15*3*5120*8192, s.ActiveParams())
	assert.InDelta(t, 109e9, float64(s.Params()), 0.02*109e9)
	assert.InDelta(t, 17e9, float64(s.ActiveParams()), 0.02*17e9)
	assert.Equal(t, int64(48*8*128*2*2), s.KVBytesPerToken(1, 2)) // every layer caches the context (vLLM's default)

	m := loadShared(t, "meta-llama/Llama-4-Maverick-17B-128E-Instruct")
	assert.Equal(t, 16384, m.Intermediate)
	assert.Equal(t, []LayerGroup{{Kind: LayerKind{Attn: AttnFull, MoE: true}, Count: 12}, {Kind: LayerKind{Attn: AttnChunked}, Count: 24},
		{Kind: LayerKind{Attn: AttnChunked, MoE: true}, Count: 12}}, m.Groups())
	moe = int64(128*3*5120*8192 + 128*5120 + 3*5120*8192)
	assert.Equal(t, 48*attn+24*moe+24*3*5120*16384+2*202048*5120, m.Params())
	assert.InDelta(t, 400e9, float64(m.Params()), 0.01*400e9)
	assert.InDelta(t, 17e9, float64(m.ActiveParams()), 0.02*17e9)
}

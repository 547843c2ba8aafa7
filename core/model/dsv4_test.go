package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeepSeekV4Layout: DeepSeek-V4-Flash's 43 layers by compress_ratios
// (2 of the window alone, 21 ratio-4 CSA, 20 ratio-128 HCA; the 44th entry
// is the MTP layer's), every FFN a MoE, and the formats vLLM serves each
// checkpoint with: fp8_block linear layers, MXFP4 experts (expert_dtype
// "fp4"), NVFP4 ones for NVIDIA's checkpoint (moe_quant_algo "NVFP4"),
// fp8_block for SGLang's FP8 conversion (no expert_dtype).
func TestDeepSeekV4Layout(t *testing.T) {
	a, err := Load("deepseek-ai/DeepSeek-V4-Flash", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, []LayerGroup{{LayerKind{Attn: AttnCSA, MoE: true}, 21}, {LayerKind{Attn: AttnHCA, MoE: true}, 20},
		{LayerKind{Attn: AttnSWA, MoE: true}, 2}}, a.Groups())
	assert.Equal(t, 1, a.KVHeads)
	assert.Equal(t, 512, a.HeadDim)
	assert.Equal(t, 1, a.MTPLayers)
	assert.Equal(t, MoE{Experts: 256, TopK: 6, Intermediate: 2048, SharedIntermediate: 2048, Dtype: MXFP4}, *a.MoE)
	assert.Equal(t, 3, a.DSV4.HashLayers)
	assert.Equal(t, MLAIndexer{Heads: 64, HeadDim: 128, TopK: 512}, a.DSV4.Indexer)
	assert.Equal(t, FP8Block, a.WeightDtype)
	for name, want := range map[string]Dtype{"nvidia/DeepSeek-V4-Flash-NVFP4": NVFP4, "sgl-project/DeepSeek-V4-Flash-FP8": FP8Block} {
		b, err := Load(name, sharedConfigs)
		require.NoError(t, err, name)
		assert.Equal(t, want, b.ExpertDtype(), name)
		assert.Equal(t, FP8Block, b.WeightDtype, name)
	}
	pro, err := Load("deepseek-ai/DeepSeek-V4-Pro", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, []LayerGroup{{LayerKind{Attn: AttnCSA, MoE: true}, 30}, {LayerKind{Attn: AttnHCA, MoE: true}, 31}}, pro.Groups())
	// vLLM splits the output groups over the ranks: TP 16 does not divide Flash's 8
	assert.NoError(t, a.Validate(8))
	assert.ErrorContains(t, a.Validate(16), "tensor parallel size 16 does not divide o_groups = 8")
}

// TestDeepSeekV4Params: the model cards' 284 B (13 B active) for Flash and
// 1.6 T (49 B active) for Pro, counted by hand from the configs (norms,
// sinks, the compressors' position biases and the mHC mixing weights left
// out). Per layer, TP 1:
//
//	attention  (q_lora + d)·h + H·d·q_lora + g·o_lora·(H·d/g) + h·g·o_lora
//	CSA adds   IH·ID·q_lora (index wq_b) + 2·2d·h (compressor) + IH·h + 2·2·ID·h (indexer's)
//	HCA adds   2·d·h (compressor)
//	MoE        E·3·h·I + E·h (router) + 3·h·I (one shared expert)
//	once       2·V·h (embedding, lm_head)
//
// Flash (h 4096, H 64, d 512, q_lora 1024, g 8, o_lora 1024, IH 64, ID
// 128, E 256, I 2048, 21 CSA + 20 HCA + 2 window layers):
// 21·126,091,264 + 20·111,149,056 + 2·106,954,752 + 43·6,468,665,344 +
// 1,059,061,760 = 284,296,478,720; active: 43 layers hold 6 of 256 experts,
// minus 43·250·3·4096·2048 → 13,763,870,720 (12.7 B without the embedding
// and lm_head). Pro (h 7168, H 128, q_lora 1536, g 16, E 384, I 3072, 30
// CSA + 31 HCA): 1,572,909,875,200, active 49,691,754,496.
func TestDeepSeekV4Params(t *testing.T) {
	attn := func(h, H, d, q, g, o int64) int64 { return (q+d)*h + H*d*q + g*o*(H*d/g) + h*g*o }
	for _, tc := range []struct {
		name                   string
		h, H, q, g, E, I, L    int64
		csa, hca, swa          int64
		wantParams, wantActive int64
	}{
		{"deepseek-ai/DeepSeek-V4-Flash", 4096, 64, 1024, 8, 256, 2048, 43, 21, 20, 2, 284_296_478_720, 13_763_870_720},
		{"deepseek-ai/DeepSeek-V4-Pro", 7168, 128, 1536, 16, 384, 3072, 61, 30, 31, 0, 1_572_909_875_200, 49_691_754_496},
	} {
		a, err := Load(tc.name, sharedConfigs)
		require.NoError(t, err)
		const d, o, ih, id, v = 512, 1024, 64, 128, 129280
		base := attn(tc.h, tc.H, d, tc.q, tc.g, o)
		csa := base + ih*id*tc.q + 2*2*d*tc.h + ih*tc.h + 2*2*id*tc.h
		hca := base + 2*d*tc.h
		moe := tc.E*3*tc.h*tc.I + tc.E*tc.h + 3*tc.h*tc.I
		want := tc.csa*csa + tc.hca*hca + tc.swa*base + tc.L*moe + 2*v*tc.h
		assert.Equal(t, tc.wantParams, want, tc.name)
		assert.Equal(t, want, a.Params(), tc.name)
		active := want - tc.L*(tc.E-6)*3*tc.h*tc.I
		assert.Equal(t, tc.wantActive, active, tc.name)
		assert.Equal(t, active, a.ActiveParams(), tc.name)
	}
}

// TestDeepSeekV4KVBytes: the caches that grow with the context, per token
// on every GPU: a CSA layer keeps one 584-byte fp8_ds_mla entry (448 fp8 +
// 64 bf16 rotary + 8 scale bytes) and one 132-byte indexer entry per 4
// tokens, an HCA layer one entry per 128. Flash, fp8: 21·(584 + 132)/4 +
// 20·584/128 = 3,759 + 91.25 → 3,851; bf16 (1,024-byte entries):
// 21·(1,024 + 132)/4 + 20·1,024/128 = 6,069 + 160 = 6,229; Pro, fp8:
// 30·179 + 31·4.5625 = 5,511.44 → 5,512. The same at every TP (one KV head).
// Per sequence, Flash, fp8: every layer's 128-token window and its 64-token
// block, 43·192·584 = 4,821,504; the CSA layers' compressor states (12
// tokens of 2·1,024 fp32 and 12 of the indexer's 2·256 fp32),
// 21·(12·8,192 + 12·2,048) = 2,580,480; the HCA layers' (136 tokens of
// 2·512 fp32), 20·136·4,096 = 11,141,120: 18,543,104 bytes.
func TestDeepSeekV4KVBytes(t *testing.T) {
	a, err := Load("deepseek-ai/DeepSeek-V4-Flash", sharedConfigs)
	require.NoError(t, err)
	for _, tp := range []int{1, 8} {
		assert.Equal(t, int64(3851), a.KVBytesPerToken(tp, 1))
		assert.Equal(t, int64(21*(1024+132)/4+20*1024/128), a.KVBytesPerToken(tp, 2))
	}
	assert.Equal(t, int64(43*192*584+21*(12*8192+12*2048)+20*136*4096), a.SlidingKVBytesPerSequence(8, 1, 256))
	assert.Equal(t, int64(18_543_104), a.SlidingKVBytesPerSequence(8, 1, 16))
	pro, err := Load("deepseek-ai/DeepSeek-V4-Pro", sharedConfigs)
	require.NoError(t, err)
	assert.Equal(t, int64(5512), pro.KVBytesPerToken(8, 1))
}

// TestDeepSeekV4ConfigErrors: a bad field is named.
func TestDeepSeekV4ConfigErrors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedConfigs, "deepseek-ai--DeepSeek-V4-Flash_config.json"))
	require.NoError(t, err)
	src := string(data)
	for _, tc := range []struct{ from, to, want string }{
		{`"compress_ratios": [
    0,
    0,
    4,`, `"compress_ratios": [
    0,
    0,
    8,`, "config.json field compress_ratios[2] = 8, want 0, 4 or 128"},
		{`"expert_dtype": "fp4"`, `"expert_dtype": "int4"`, `config.json field expert_dtype = "int4", want "fp4" or "fp8"`},
		{`"o_groups": 8`, `"o_groups": 7`, "o_groups = 7 does not divide num_attention_heads = 64"},
		{`"num_key_value_heads": 1`, `"num_key_value_heads": 2`, "num_key_value_heads = 2, want 1"},
		{`"hc_mult": 4,`, ``, "config.json field hc_mult is missing"},
		{`"num_hash_layers": 3`, `"num_hash_layers": 44`, "num_hash_layers = 44 exceeds num_hidden_layers = 43"},
	} {
		require.Contains(t, src, tc.from)
		_, err := Parse([]byte(strings.Replace(src, tc.from, tc.to, 1)), "v4")
		assert.ErrorContains(t, err, tc.want, tc.to)
	}
}

package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadShared(t *testing.T, name string) *Arch {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sharedConfigs, ConfigFileName(name))); err != nil {
		t.Skipf("shared config of %s absent", name)
	}
	a, err := Load(name, sharedConfigs)
	require.NoError(t, err)
	return a
}

func TestParseMoEFamilies(t *testing.T) {
	t.Run("Qwen3-235B-A22B-FP8", func(t *testing.T) {
		a := loadShared(t, "Qwen/Qwen3-235B-A22B-FP8")
		assert.Equal(t, &MoE{Experts: 128, TopK: 8, Intermediate: 1536}, a.MoE)
		assert.Nil(t, a.LayerKinds) // decoder_sparse_step 1, no mlp_only_layers: every layer MoE
		assert.Equal(t, FP8Block, a.WeightDtype)
		assert.Equal(t, FP8Block, a.ExpertDtype())
		assert.True(t, a.QKNorm)
		assert.False(t, a.QKNormAcrossHeads) // per head, as Qwen3
		assert.Equal(t, []LayerGroup{{Kind: LayerKind{Attn: AttnFull, MoE: true}, Count: 94}}, a.Groups())
	})
	t.Run("MiniMax-M2.5", func(t *testing.T) {
		a := loadShared(t, "MiniMaxAI/MiniMax-M2.5")
		assert.Equal(t, &MoE{Experts: 256, TopK: 8, Intermediate: 1536}, a.MoE)
		assert.Equal(t, FP8Block, a.ExpertDtype())
		assert.Equal(t, 62, a.MoELayers())
		assert.True(t, a.QKNorm && a.QKNormAcrossHeads) // qk_norm_type per_layer
	})
	t.Run("gpt-oss-120b", func(t *testing.T) {
		a := loadShared(t, "openai/gpt-oss-120b")
		assert.Equal(t, &MoE{Experts: 128, TopK: 4, Intermediate: 2880, Dtype: MXFP4}, a.MoE)
		assert.Equal(t, BF16, a.WeightDtype) // attention stays bf16
		assert.Equal(t, 128, a.SlidingWindow)
		assert.True(t, a.AttentionSinks)
		assert.Equal(t, []LayerGroup{
			{Kind: LayerKind{Attn: AttnFull, MoE: true}, Count: 18},
			{Kind: LayerKind{Attn: AttnSliding, MoE: true}, Count: 18},
		}, a.Groups())
		assert.Equal(t, LayerKind{Attn: AttnSliding, MoE: true}, a.LayerKinds[0]) // layer 0 is sliding
	})
	t.Run("gpt-oss-20b", func(t *testing.T) {
		a := loadShared(t, "openai/gpt-oss-20b")
		assert.Equal(t, 32, a.MoE.Experts)
		assert.Equal(t, 12, a.SlidingLayers())
	})
	t.Run("MiniMax-M3-NVFP4", func(t *testing.T) {
		a := loadShared(t, "nvidia/MiniMax-M3-NVFP4")
		assert.Equal(t, "MiniMaxM3SparseForConditionalGeneration", a.Architecture)
		assert.Equal(t, &MoE{Experts: 128, TopK: 4, Intermediate: 3072, SharedIntermediate: 3072, Dtype: NVFP4}, a.MoE)
		assert.Equal(t, FP8, a.WeightDtype) // MXFP8 attention priced as fp8
		assert.Equal(t, 12288, a.Intermediate)
		assert.Equal(t, []LayerGroup{
			{Kind: LayerKind{Attn: AttnFull, MoE: false}, Count: 3},
			{Kind: LayerKind{Attn: AttnSparse, MoE: true}, Count: 57},
		}, a.Groups())
		assert.Equal(t, &SparseAttention{IndexHeads: 4, IndexDim: 128, TopKBlocks: 16, BlockSize: 128, LocalBlocks: 1}, a.Sparse)
		assert.Equal(t, 2176, a.Sparse.KeptTokens()) // (16 + 0 + 1)·128
		assert.Len(t, a.Approximations, 3)           // sparse attention, MXFP8, vision tower
		assert.False(t, a.QKNormAcrossHeads)         // qk_norm_type per_head
	})
}

// TestMoEParams checks the parameter counts against a hand count and the
// checkpoints' advertised sizes.
func TestMoEParams(t *testing.T) {
	t.Run("gpt-oss-120b ≈ 117 B", func(t *testing.T) {
		a := loadShared(t, "openai/gpt-oss-120b")
		// L 36, h 2880, n 64, kv 8, d 64, E 128, I_e 2880, V 201088.
		// attention: qkv (64+16)·64·2880 = 14,745,600 + o 2880·4096 = 11,796,480
		//   = 26,542,080; experts 128·3·2880·2880 = 3,185,049,600; router
		//   128·2880 = 368,640; per layer 3,211,960,320; ×36 = 115,630,571,520;
		// embedding and lm_head 2·201088·2880 = 1,158,266,880
		// → 116,788,838,400.
		assert.Equal(t, int64(116_788_838_400), a.Params())
		// active: less the 128 − 4 idle experts of each of the 36 layers,
		// 36·124·3·2880·2880 = 111,078,604,800 → 5,710,233,600 (gpt-oss-120b
		// card: 5.1 B active, without the 1.16 B of embeddings).
		assert.Equal(t, int64(5_710_233_600), a.ActiveParams())
	})
	t.Run("Qwen3-235B-A22B ≈ 235 B", func(t *testing.T) {
		a := loadShared(t, "Qwen/Qwen3-235B-A22B")
		// L 94, h 4096, n 64, kv 4, d 128, E 128, I_e 1536, V 151936.
		// attention (64+8)·128·4096 + 4096·8192 = 71,303,168; experts
		// 128·3·4096·1536 = 2,415,919,104; router 524,288; per layer
		// 2,487,746,560; ×94 = 233,848,176,640; + 2·151936·4096 = 1,244,659,712
		// → 235,092,836,352.
		assert.Equal(t, int64(235_092_836_352), a.Params())
	})
}

func TestMoEWeightBytesPerGPU(t *testing.T) {
	a := loadShared(t, "Qwen/Qwen3-235B-A22B-FP8")
	// TP 4, fp8_block (1 B). Per layer per GPU: qkv (16+2)·128·4096 =
	// 9,437,184 + o 4096·2048 = 8,388,608 → 17,825,792 B; experts at
	// moe_tp 4: 128·3·4096·384 = 603,979,776 B; router 128·4096·2 =
	// 1,048,576 B; sum 622,854,144 ·94 = 58,548,289,536; embedding and
	// lm_head 2·37984·4096·2 = 622,329,856 → 59,170,619,392.
	assert.Equal(t, int64(59_170_619_392), a.WeightBytesPerGPUParallel(Parallel{TP: 4, DP: 1}))
	// EP 4 holds 32 whole experts: 32·3·4096·1536 = the same 603,979,776 B.
	assert.Equal(t, int64(59_170_619_392), a.WeightBytesPerGPUParallel(Parallel{TP: 4, DP: 1, EP: true}))
	// TP 4 with the experts split both ways (TensorRT-LLM's moe_ep_size 2,
	// moe_tp_size 2): 64 experts of 768 each, 64·3·4096·768 = the same
	// 603,979,776 B.
	both := Parallel{TP: 4, DP: 1, EP: true, MoEEPSize: 2}
	assert.Equal(t, 2, both.MoETP())
	assert.Equal(t, 2, both.MoEEP())
	assert.Equal(t, "TP4 EP2", both.String())
	assert.Equal(t, int64(59_170_619_392), a.WeightBytesPerGPUParallel(both))
	// MoEEPSize of all GPUs is plain EP
	assert.Equal(t, 1, Parallel{TP: 4, DP: 1, EP: true, MoEEPSize: 4}.MoETP())
	// TP 1 × DP 2 without EP: attention whole on each GPU (71,303,168 B),
	// experts moe_tp 2: 128·3·4096·768 = 1,207,959,552 B, router 1,048,576;
	// per layer 1,280,311,296 ·94 = 120,349,261,824; embeddings 2·151936·4096·2
	// = 2,489,319,424 → 122,838,581,248.
	assert.Equal(t, int64(122_838_581_248), a.WeightBytesPerGPUParallel(Parallel{TP: 1, DP: 2}))

	// A dense decoder is WeightBytesPerGPU, DP or not.
	q, _ := Builtin("Qwen/Qwen3-32B")
	assert.Equal(t, q.WeightBytesPerGPU(2), q.WeightBytesPerGPUParallel(Parallel{TP: 2, DP: 4}))
}

func TestMoEKVBytes(t *testing.T) {
	a := loadShared(t, "openai/gpt-oss-120b")
	// Only the 18 full-attention layers grow with the context:
	// 8·64·18·2·2 = 36,864 B per token at TP 1, bf16.
	assert.Equal(t, int64(36_864), a.KVBytesPerToken(1, 2))
	// The 18 sliding layers hold 128 + 16 tokens per sequence (block 16):
	// 8·64·18·2·2·144 = 5,308,416 B.
	assert.Equal(t, int64(5_308_416), a.SlidingKVBytesPerSequence(1, 2, 16))
	q := loadShared(t, "Qwen/Qwen3-235B-A22B-FP8")
	assert.Equal(t, int64(0), q.SlidingKVBytesPerSequence(1, 2, 16))
	// Qwen3-235B: 4·128·94·2·2 = 192,512 B at TP 1; TP 8 replicates the 4
	// KV heads: 1 head per GPU → 48,128 B.
	assert.Equal(t, int64(192_512), q.KVBytesPerToken(1, 2))
	assert.Equal(t, int64(48_128), q.KVBytesPerToken(8, 2))
	m3 := loadShared(t, "nvidia/MiniMax-M3-NVFP4")
	// TP 4: 1 KV head·128·60·2·2 = 30,720 + indexer keys 57·128·2 = 14,592.
	assert.Equal(t, int64(45_312), m3.KVBytesPerToken(4, 2))
}

func TestValidateParallel(t *testing.T) {
	mm := loadShared(t, "MiniMaxAI/MiniMax-M2.5")                            // I_e 1536, fp8_block
	assert.NoError(t, mm.ValidateParallel(Parallel{TP: 4, DP: 1}))           // 1536/4 = 384 = 3·128
	assert.NoError(t, mm.ValidateParallel(Parallel{TP: 8, DP: 1, EP: true})) // experts whole
	err := mm.ValidateParallel(Parallel{TP: 8, DP: 1})                       // 1536/8 = 192
	assert.ErrorContains(t, err, "moe_intermediate_size 1536 over 8 GPUs is 192 per GPU, not divisible by the fp8 weight block (128)")
	assert.NoError(t, mm.ValidateParallel(Parallel{TP: 4, DP: 4, EP: true})) // two nodes: the perf sources price it
	assert.ErrorContains(t, mm.ValidateParallel(Parallel{TP: 4, DP: 512, EP: true}), "2048 GPUs, more than 1024")
	assert.ErrorContains(t, mm.ValidateParallel(Parallel{TP: 4, DP: 0}), "data_parallel_size = 0")
	q, _ := Builtin("Qwen/Qwen3-32B")
	assert.ErrorContains(t, q.ValidateParallel(Parallel{TP: 2, DP: 1, EP: true}), "enable_expert_parallel needs a mixture-of-experts model")
	assert.NoError(t, q.ValidateParallel(Parallel{TP: 2, DP: 4}))
	assert.NoError(t, mm.ValidateParallel(Parallel{TP: 8, DP: 1, EP: true, MoEEPSize: 4})) // 1536/2 = 768 = 6·128
	assert.ErrorContains(t, mm.ValidateParallel(Parallel{TP: 4, DP: 1, EP: true, MoEEPSize: 3}),
		"3 expert-parallel ranks do not divide the 4 GPUs")
	assert.ErrorContains(t, mm.ValidateParallel(Parallel{TP: 4, DP: 1, EP: true, MoEEPSize: 8}),
		"8 expert-parallel ranks do not divide the 4 GPUs")
	g := loadShared(t, "openai/gpt-oss-20b") // 32 experts
	assert.NoError(t, g.ValidateParallel(Parallel{TP: 8, DP: 1, EP: true}))
}

func TestParseMoEErrors(t *testing.T) {
	const base = `"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"num_key_value_heads":2,"vocab_size":100,"max_position_embeddings":512`
	tests := []struct{ name, json, want string }{
		{"qwen3 no top-k", `{"architectures":["Qwen3MoeForCausalLM"],"num_experts":8,"moe_intermediate_size":32,"decoder_sparse_step":1,"mlp_only_layers":[],` + base + `}`, "num_experts_per_tok is missing"},
		{"qwen3 no step", `{"architectures":["Qwen3MoeForCausalLM"],"num_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":32,"mlp_only_layers":[],` + base + `}`, "decoder_sparse_step is missing"},
		{"top-k above experts", `{"architectures":["MiniMaxM2ForCausalLM"],"num_local_experts":4,"num_experts_per_tok":8,"intermediate_size":32,"shared_intermediate_size":0,"use_qk_norm":true,` + base + `}`, "num_experts_per_tok = 8 exceeds the 4 experts"},
		{"minimax qk norm per head", `{"architectures":["MiniMaxM2ForCausalLM"],"num_local_experts":4,"num_experts_per_tok":2,"intermediate_size":32,"shared_intermediate_size":0,"use_qk_norm":true,"qk_norm_type":"per_head",` + base + `}`, `qk_norm_type "per_head" is not supported for MiniMaxM2ForCausalLM`},
		{"gpt-oss no layer_types", `{"architectures":["GptOssForCausalLM"],"num_local_experts":4,"num_experts_per_tok":2,"intermediate_size":32,"sliding_window":128,` + base + `}`, "layer_types is missing"},
		{"gpt-oss bad layer type", `{"architectures":["GptOssForCausalLM"],"num_local_experts":4,"num_experts_per_tok":2,"intermediate_size":32,"sliding_window":128,"layer_types":["full_attention","linear"],` + base + `}`, `layer_types[1] = "linear"`},
		{"m3 freq length", `{"architectures":["MiniMaxM3SparseForConditionalGeneration"],"text_config":{"num_local_experts":4,"num_experts_per_tok":2,"intermediate_size":32,"shared_intermediate_size":32,"n_shared_experts":1,"dense_intermediate_size":64,"use_qk_norm":true,"moe_layer_freq":[1],` + base + `}}`, "text_config.moe_layer_freq has 1 entries, want num_hidden_layers = 2"},
		{"unsupported quant", `{"architectures":["MixtralForCausalLM"],"num_local_experts":4,"num_experts_per_tok":2,"intermediate_size":32,"quantization_config":{"quant_method":"awq"},` + base + `}`, "quantization_config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json), "m")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A Qwen3-MoE whose layer 1 is in mlp_only_layers: a dense layer of
	// intermediate_size.
	a, err := Parse([]byte(`{"architectures":["Qwen3MoeForCausalLM"],"num_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":32,"decoder_sparse_step":1,"mlp_only_layers":[1],"intermediate_size":128,`+base+`}`), "m")
	require.NoError(t, err)
	assert.Equal(t, []LayerKind{{Attn: AttnFull, MoE: true}, {Attn: AttnFull, MoE: false}}, a.LayerKinds)
}

// TestMiniMaxM2NVFP4Roles: nvidia's MiniMax-M2.5-NVFP4 and M2.7-NVFP4
// exclude every layer's self_attn (and router) from NVFP4: the experts are
// NVFP4, attention bf16 (role by role, as ModelOpt's exclude patterns say),
// where the checkpoint was refused as per-layer mixed precision.
func TestMiniMaxM2NVFP4Roles(t *testing.T) {
	for _, name := range []string{"nvidia/MiniMax-M2.5-NVFP4", "nvidia/MiniMax-M2.7-NVFP4"} {
		a := loadShared(t, name)
		assert.Equal(t, NVFP4, a.ExpertDtype(), name)
		assert.Equal(t, BF16, a.AttentionDtype(), name)
		assert.Equal(t, FP8, a.KVDtype, name)
		// the weights: 62 layers of bf16 attention (48 heads of 128, 8 KV heads)
		// and 256 NVFP4 experts of 1536 (4.5 bits a weight with the scales)
		fp8 := loadShared(t, "MiniMaxAI/MiniMax-M2.5")
		assert.Equal(t, fp8.Params(), a.Params(), name)
	}
}

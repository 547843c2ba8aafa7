package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedConfigs is the AIConfigurator model_configs directory, read in place.
const sharedConfigs = "../../../shared/data/aic/model_configs"

func TestDtypeBytes(t *testing.T) {
	assert.Equal(t, 2.0, BF16.Bytes())
	assert.Equal(t, 1.0, FP8.Bytes())
	assert.Equal(t, 1.0, FP8Block.Bytes())
	assert.Equal(t, 0.5625, NVFP4.Bytes())  // 4 bits + one byte per 16
	assert.Equal(t, 0.53125, MXFP4.Bytes()) // 4 bits + one byte per 32
	assert.Equal(t, 0.5625, INT4.Bytes())   // 4 bits + a bf16 scale per 32 (Kimi-K2.5's group_size)
	assert.Equal(t, 0.0, Dtype("int3").Bytes())
	assert.False(t, Dtype("int3").Valid())

	d, err := ParseDtype("bf16")
	require.NoError(t, err)
	assert.Equal(t, BF16, d)
	for _, s := range []string{"nvfp4", "fp4"} {
		d, err = ParseDtype(s)
		require.NoError(t, err)
		assert.Equal(t, NVFP4, d)
	}
	_, err = ParseDtype("mxfp4")
	assert.ErrorContains(t, err, `"mxfp4"`)
}

func TestParseQuantization(t *testing.T) {
	const base = `"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512`
	tests := []struct {
		name      string
		quant     string
		weight    Dtype
		kv        Dtype
		errSubstr string
	}{
		{"none", ``, BF16, "", ""},
		{"fp8", `{"quant_method":"fp8"}`, FP8, "", ""},
		{"modelopt nvfp4 with fp8 kv scheme", `{"quant_method":"modelopt","quant_algo":"NVFP4","kv_cache_scheme":{"num_bits":8,"type":"float"},"ignore":["lm_head"]}`, NVFP4, FP8, ""},
		{"modelopt fp8 with kv algo", `{"quant_method":"modelopt","quant_algo":"FP8","kv_cache_quant_algo":"FP8"}`, FP8, FP8, ""},
		{"mixed precision", `{"quant_method":"modelopt","quant_algo":"MIXED_PRECISION"}`, "", "", `quant_algo "MIXED_PRECISION" not supported`},
		{"nvfp4 kv", `{"quant_method":"modelopt","quant_algo":"NVFP4","kv_cache_quant_algo":"NVFP4"}`, "", "", `kv_cache_quant_algo "NVFP4" not supported`},
		{"attention excluded", `{"quant_method":"modelopt","quant_algo":"NVFP4","ignore":["lm_head","model.layers.1.self_attn*"]}`, "", "",
			`"model.layers.1.self_attn*" leaves model.layers.1.self_attn.q_proj unquantized`},
		{"a whole layer excluded", `{"quant_method":"modelopt","quant_algo":"NVFP4","exclude_modules":["model.layers.0"]}`, "", "",
			`"model.layers.0" leaves model.layers.0.self_attn.q_proj unquantized`},
		{"no such layer", `{"quant_method":"modelopt","quant_algo":"NVFP4","exclude_modules":["model.layers.2.mlp*","model.embed_tokens"]}`, NVFP4, "", ""},
		// ModelOpt 0.31's config.json (Qwen3-32B-FP8-Static-PerTensor): no
		// quant_method, the KV format named by a string
		{"modelopt kv scheme as a name", `{"config_groups":{"group_0":{"weights":{"dynamic":false,"num_bits":8,"type":"float"}}},"ignore":["lm_head"],"quant_algo":"FP8","kv_cache_scheme":"FP8","producer":{"name":"modelopt","version":"0.31.0"}}`, FP8, FP8, ""},
		{"kv scheme name in any case", `{"quant_algo":"FP8","kv_cache_scheme":" fp8 "}`, FP8, FP8, ""},
		{"kv scheme name not FP8", `{"quant_algo":"FP8","kv_cache_scheme":"int8"}`, "", "", `kv_cache_scheme "int8" not supported (FP8, or an 8-bit float scheme)`},
		{"kv scheme a number", `{"quant_algo":"FP8","kv_cache_scheme":8}`, "", "", `kv_cache_scheme must be an object {num_bits, type} or a format name such as "FP8", got 8`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := `{` + base + `}`
			if tc.quant != "" {
				cfg = `{` + base + `,"quantization_config":` + tc.quant + `}`
			}
			a, err := Parse([]byte(cfg), "m")
			if tc.errSubstr != "" {
				require.Error(t, err)
				assert.Regexp(t, `^model m: config\.json( field quantization_config)?: `, err.Error())
				assert.Contains(t, err.Error(), tc.errSubstr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.weight, a.WeightDtype)
			assert.Equal(t, tc.kv, a.KVDtype)
		})
	}
}

// A value of the wrong JSON type is named by its dotted field and the type
// wanted, not by Go's struct and type names.
func TestParseNamesAWrongTypeByItsField(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"architectures":["LlamaForCausalLM"],"num_hidden_layers":"2"}`:                                       "model m: config.json field num_hidden_layers: must be an integer, got a string",
		`{"architectures":"LlamaForCausalLM"}`:                                                                 "model m: config.json field architectures: must be an array, got a string",
		`{"architectures":["LlamaForCausalLM"],"quantization_config":{"quant_algo":"FP8","ignore":"lm_head"}}`: "model m: config.json field quantization_config.ignore: must be an array, got a string",
	} {
		_, err := Parse([]byte(cfg), "m")
		require.Error(t, err, cfg)
		assert.Equal(t, want, err.Error(), cfg)
		assert.NotContains(t, err.Error(), "Go struct")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Arch
	}{
		{
			// head_dim absent → 64/8 = 8; num_key_value_heads absent → heads = 8.
			name: "defaults",
			json: `{"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,
				"num_attention_heads":8,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512}`,
			want: Arch{Name: "defaults", Architecture: "LlamaForCausalLM", Layers: 2, Hidden: 64, Heads: 8,
				KVHeads: 8, HeadDim: 8, Intermediate: 128, Vocab: 1000, MaxPositionEmbeddings: 512, WeightDtype: BF16},
		},
		{
			// head_dim null is a default too; Qwen3 → QKNorm; tied embeddings kept.
			name: "qwen3 null head_dim tied",
			json: `{"architectures":["Qwen3ForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"head_dim":null,
				"num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":128,"vocab_size":1000,
				"max_position_embeddings":512,"tie_word_embeddings":true}`,
			want: Arch{Name: "qwen3 null head_dim tied", Architecture: "Qwen3ForCausalLM", Layers: 2, Hidden: 64, Heads: 8,
				KVHeads: 2, HeadDim: 8, Intermediate: 128, Vocab: 1000, MaxPositionEmbeddings: 512,
				QKNorm: true, TieEmbeddings: true, WeightDtype: BF16},
		},
		{
			name: "fp8 per tensor",
			json: `{"architectures":["Qwen2ForCausalLM"],"num_hidden_layers":1,"hidden_size":32,"head_dim":16,
				"num_attention_heads":4,"num_key_value_heads":4,"intermediate_size":64,"vocab_size":10,
				"max_position_embeddings":8,"quantization_config":{"quant_method":"fp8"}}`,
			want: Arch{Name: "fp8 per tensor", Architecture: "Qwen2ForCausalLM", Layers: 1, Hidden: 32, Heads: 4,
				KVHeads: 4, HeadDim: 16, Intermediate: 64, Vocab: 10, MaxPositionEmbeddings: 8, WeightDtype: FP8},
		},
		{
			name: "fp8 block",
			json: `{"architectures":["MistralForCausalLM"],"num_hidden_layers":1,"hidden_size":32,
				"num_attention_heads":4,"intermediate_size":64,"vocab_size":10,"max_position_embeddings":8,
				"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}`,
			want: Arch{Name: "fp8 block", Architecture: "MistralForCausalLM", Layers: 1, Hidden: 32, Heads: 4,
				KVHeads: 4, HeadDim: 8, Intermediate: 64, Vocab: 10, MaxPositionEmbeddings: 8, WeightDtype: FP8Block},
		},
		{
			name: "modelopt fp8",
			json: `{"architectures":["Qwen3ForCausalLM"],"num_hidden_layers":1,"hidden_size":32,
				"num_attention_heads":4,"intermediate_size":64,"vocab_size":10,"max_position_embeddings":8,
				"quantization_config":{"quant_algo":"FP8"}}`,
			want: Arch{Name: "modelopt fp8", Architecture: "Qwen3ForCausalLM", Layers: 1, Hidden: 32, Heads: 4,
				KVHeads: 4, HeadDim: 8, Intermediate: 64, Vocab: 10, MaxPositionEmbeddings: 8, QKNorm: true, WeightDtype: FP8},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.json), tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.want, *got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	const base = `"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512`
	tests := []struct {
		name, json, want string
	}{
		{"bad json", `{`, "config.json"},
		{"no architectures", `{` + base + `}`, "architectures"},
		{"moe without experts", `{"architectures":["Qwen3MoeForCausalLM"],` + base + `}`, "config.json field num_experts is missing"},
		{"gemma-4", `{"architectures":["Gemma4ForConditionalGeneration"],` + base + `}`,
			"not supported: architectures = Gemma4ForConditionalGeneration: Gemma-4's layers are not modelled"},
		{"deepseek-v4 without compress_ratios", `{"architectures":["DeepseekV4ForCausalLM"],"num_key_value_heads":1,"head_dim":64,` +
			`"n_routed_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":32,"n_shared_experts":1,"q_lora_rank":32,` +
			`"o_lora_rank":32,"o_groups":4,"qk_rope_head_dim":16,"sliding_window":128,"index_n_heads":4,"index_head_dim":32,` +
			`"index_topk":64,"hc_mult":4,` + base + `}`, "config.json field compress_ratios is missing"},
		{"unknown family", `{"architectures":["FalconForCausalLM"],` + base + `}`,
			"not supported: architectures = FalconForCausalLM (dense decoders: LlamaForCausalLM, MiMoForCausalLM"},
		{"missing layers", `{"architectures":["LlamaForCausalLM"],"hidden_size":64,"num_attention_heads":8,
			"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512}`, "num_hidden_layers is missing"},
		{"zero vocab", `{"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,
			"intermediate_size":128,"vocab_size":0,"max_position_embeddings":512}`, "vocab_size = 0"},
		{"negative kv heads", `{"architectures":["LlamaForCausalLM"],"num_key_value_heads":-1,` + base + `}`, "num_key_value_heads = -1"},
		{"kv heads do not divide", `{"architectures":["LlamaForCausalLM"],"num_key_value_heads":3,` + base + `}`, "num_key_value_heads = 3 does not divide"},
		{"zero head_dim", `{"architectures":["LlamaForCausalLM"],"head_dim":0,` + base + `}`, "head_dim = 0"},
		{"awq", `{"architectures":["LlamaForCausalLM"],"quantization_config":{"quant_method":"awq"},` + base + `}`, "quantization_config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json), "m")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestBuiltinsMatchConfigFiles checks each built-in against Parse of the
// config.json it was copied from.
func TestBuiltinsMatchConfigFiles(t *testing.T) {
	files := map[string]string{
		"Qwen/Qwen3-32B":                    "Qwen--Qwen3-32B_config.json",
		"Qwen/Qwen3-8B":                     "Qwen--Qwen3-8B_config.json",
		"meta-llama/Llama-3.1-8B-Instruct":  "meta-llama--Meta-Llama-3.1-8B_config.json",
		"meta-llama/Llama-3.1-70B-Instruct": "meta-llama--Meta-Llama-3.1-70B_config.json",
	}
	require.ElementsMatch(t, BuiltinNames(), []string{"Qwen/Qwen3-32B", "Qwen/Qwen3-8B",
		"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"})
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(sharedConfigs, files[name]))
			if os.IsNotExist(err) {
				t.Skipf("shared config %s absent", files[name])
			}
			require.NoError(t, err)
			want, err := Parse(data, name)
			require.NoError(t, err)
			got, ok := Builtin(name)
			require.True(t, ok)
			assert.Equal(t, *want, *got)
			require.NoError(t, got.Validate(1))
		})
	}
}

func TestBuiltinReturnsCopy(t *testing.T) {
	a, ok := Builtin("Qwen/Qwen3-8B")
	require.True(t, ok)
	a.Layers = 1
	b, _ := Builtin("Qwen/Qwen3-8B")
	assert.Equal(t, 36, b.Layers)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,
		"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Org--Tiny_config.json"), []byte(cfg), 0o644))
	path := filepath.Join(dir, "plain.json")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))

	t.Run("path", func(t *testing.T) {
		a, err := Load(path, "")
		require.NoError(t, err)
		assert.Equal(t, path, a.Name)
		assert.Equal(t, 2, a.Layers)
	})
	t.Run("builtin", func(t *testing.T) {
		a, err := Load("Qwen/Qwen3-32B", dir)
		require.NoError(t, err)
		assert.Equal(t, 64, a.Layers)
	})
	t.Run("config dir", func(t *testing.T) {
		a, err := Load("Org/Tiny", dir)
		require.NoError(t, err)
		assert.Equal(t, "Org/Tiny", a.Name)
		assert.Equal(t, 8, a.HeadDim)
	})
	t.Run("ModelOpt hf_quant_config beside the config", func(t *testing.T) {
		// Org--Q_config.json has no quantization_config; Org--Q_hf_quant_config.json says FP8.
		require.NoError(t, os.WriteFile(filepath.Join(dir, "Org--Q_config.json"), []byte(cfg), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "Org--Q_hf_quant_config.json"),
			[]byte(`{"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}`), 0o644))
		a, err := Load("Org/Q", dir)
		require.NoError(t, err)
		assert.Equal(t, FP8, a.WeightDtype)
		assert.Equal(t, FP8, a.KVDtype, "kv_cache_quant_algo FP8: vLLM's auto KV cache is fp8")
		// a plain config.json with hf_quant_config.json in its folder
		sub := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(sub, "config.json"), []byte(cfg), 0o644))
		hq := filepath.Join(sub, "hf_quant_config.json")
		require.NoError(t, os.WriteFile(hq, []byte(`{"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}}`), 0o644))
		a, err = Load(filepath.Join(sub, "config.json"), "")
		require.NoError(t, err)
		assert.Equal(t, NVFP4, a.WeightDtype)
		assert.Equal(t, Dtype(""), a.KVDtype)
		require.NoError(t, os.WriteFile(hq, []byte(`{"quantization": {"quant_algo": "W4A16_AWQ"}}`), 0o644))
		_, err = Load(filepath.Join(sub, "config.json"), "")
		assert.ErrorContains(t, err, `hf_quant_config.json: quantization: quant_method "", quant_algo "W4A16_AWQ" not supported`)
		// without the sibling the checkpoint is bf16
		a, err = Load("Org/Tiny", dir)
		require.NoError(t, err)
		assert.Equal(t, BF16, a.WeightDtype)
	})
	t.Run("shared nvidia FP8 checkpoint", func(t *testing.T) {
		if _, err := os.Stat(sharedConfigs); err != nil {
			t.Skip("shared model configs not found")
		}
		a, err := Load("nvidia/Llama-3.1-70B-Instruct-FP8", sharedConfigs)
		require.NoError(t, err)
		assert.Equal(t, FP8, a.WeightDtype)
		assert.Equal(t, 80, a.Layers)
	})
	t.Run("not found", func(t *testing.T) {
		_, err := Load("Org/Missing", dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"Org/Missing"`)
		assert.Contains(t, err.Error(), filepath.Join(dir, "Org--Missing_config.json"))
		assert.Contains(t, err.Error(), "Qwen/Qwen3-32B")
	})
	t.Run("bad file names path", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"architectures":["Gemma4ForConditionalGeneration"]}`), 0o644))
		_, err := Load(bad, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), bad)
		assert.Contains(t, err.Error(), "not supported: architectures = Gemma4ForConditionalGeneration")
	})
	t.Run("shared fp8 config", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(sharedConfigs, "Qwen--Qwen3-32B-FP8_config.json")); err != nil {
			t.Skip("shared model_configs absent")
		}
		a, err := Load("Qwen/Qwen3-32B-FP8", sharedConfigs)
		require.NoError(t, err)
		assert.Equal(t, FP8Block, a.WeightDtype)
	})
}

func TestValidate(t *testing.T) {
	a, _ := Builtin("Qwen/Qwen3-32B") // 64 heads
	for _, tp := range []int{1, 2, 4, 8} {
		assert.NoError(t, a.Validate(tp), "tp=%d", tp)
	}
	assert.ErrorContains(t, a.Validate(0), "out of range")
	assert.ErrorContains(t, a.Validate(MaxTP+1), "out of range")
	assert.NoError(t, a.Validate(16)) // a node's size is the system's (replay checks it)
	assert.ErrorContains(t, a.Validate(3), "does not divide num_attention_heads = 64")
	b := *a
	b.Intermediate = 0
	assert.ErrorContains(t, b.Validate(1), "intermediate_size = 0")
}

func TestKVBytesPerToken(t *testing.T) {
	q32, _ := Builtin("Qwen/Qwen3-32B") // kv 8, d 128, L 64
	tests := []struct {
		name    string
		tp      int
		kvBytes float64
		want    int64
	}{
		{"bf16 tp1", 1, 2, 262144}, // 8·128·64·2·2
		{"bf16 tp2", 2, 2, 131072}, // 4·128·64·2·2
		{"fp8 tp1", 1, 1, 131072},  // 8·128·64·2·1
		{"bf16 tp8", 8, 2, 32768},  // 1·128·64·2·2
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, q32.KVBytesPerToken(tc.tp, tc.kvBytes), tc.name)
	}
	// kv = 2 heads at tp = 4: replicated, ceil(2/4) = 1 head per GPU:
	// 1·8·3·2·2 = 96 bytes.
	small := Arch{KVHeads: 2, HeadDim: 8, Layers: 3}
	assert.Equal(t, int64(96), small.KVBytesPerToken(4, 2))
}

func TestWeightBytesPerGPU(t *testing.T) {
	// Tiny model: h 4, n 2, kv 1, d 2, I 8, V 16, L 1, bf16.
	tiny := Arch{Layers: 1, Hidden: 4, Heads: 2, KVHeads: 1, HeadDim: 2, Intermediate: 8, Vocab: 16, WeightDtype: BF16}
	// t = 1: qkv (2+2)·2·4 = 32, o 4·4 = 16, gate_up 16·4 = 64, down 4·8 = 32
	// → 144 elements ·2 B = 288; embedding 16·4·2 = 128, logits 128 → 544.
	assert.Equal(t, int64(544), tiny.WeightBytesPerGPU(1))
	// t = 2: qkv (1+2·1)·2·4 = 24 (KV replicated), o 4·2 = 8, gate_up 8·4 = 32,
	// down 4·4 = 16 → 80·2 = 160; embedding 8·4·2 = 64, logits 64 → 288.
	assert.Equal(t, int64(288), tiny.WeightBytesPerGPU(2))
	// Tied: the embedding counts once: 544 − 128 = 416.
	tied := tiny
	tied.TieEmbeddings = true
	assert.Equal(t, int64(416), tied.WeightBytesPerGPU(1))

	// Qwen3-32B-FP8 (fp8_block), t = 1. Per layer: qkv (64+16)·128·5120 =
	// 52,428,800; o 5120·8192 = 41,943,040; gate_up 51200·5120 = 262,144,000;
	// down 5120·25600 = 131,072,000; sum 487,587,840 ·64 layers ·1 B =
	// 31,205,621,760; embedding + logits 2·151,936·5,120·2 = 3,111,649,280
	// → 34,317,271,040.
	q, _ := Builtin("Qwen/Qwen3-32B")
	q.WeightDtype = FP8Block
	assert.Equal(t, int64(34_317_271_040), q.WeightBytesPerGPU(1))
	// bf16 at t = 2: 31,205,621,760·2/2 + 3,111,649,280/2 = 32,761,446,400.
	q.WeightDtype = BF16
	assert.Equal(t, int64(32_761_446_400), q.WeightBytesPerGPU(2))

	// Llama-3.1-70B in NVFP4, t = 1. Per layer: qkv (64+16)·128·8192 =
	// 83,886,080; o 8192·8192 = 67,108,864; gate_up 57344·8192 = 469,762,048;
	// down 8192·28672 = 234,881,024; sum 855,638,016 ·80 layers = 68,451,041,280
	// elements ·0.5625 B (4 bits + an fp8 scale per 16) = 38,503,710,720;
	// embedding + logits stay bf16: 2·128,256·8,192·2 = 4,202,692,608
	// → 42,706,403,328 (bf16 would be 141 GB: 3.3× less).
	l, _ := Builtin("meta-llama/Llama-3.1-70B-Instruct")
	l.WeightDtype = NVFP4
	assert.Equal(t, int64(42_706_403_328), l.WeightBytesPerGPU(1))
}

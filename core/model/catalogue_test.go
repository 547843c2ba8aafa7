package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A config folder's file names map to model names; ModelOpt quantization
// files and other files are not models.
func TestNameOfConfigFile(t *testing.T) {
	for file, want := range map[string]string{
		"Qwen--Qwen3-32B_config.json": "Qwen/Qwen3-32B", "gpt2_config.json": "gpt2",
		"nvidia--X-FP8_hf_quant_config.json": "", "notes.txt": "", "config.json": "",
	} {
		got, ok := NameOfConfigFile(file)
		assert.Equal(t, want != "", ok, file)
		assert.Equal(t, want, got, file)
		if ok {
			assert.Equal(t, file, ConfigFileName(got), "the inverse of ConfigFileName")
		}
	}
}

// ListFile loads a file as Load would: a usable model with its shape, an
// unsupported one with Load's reason and its architecture.
func TestListFile(t *testing.T) {
	dir := t.TempDir()
	dense := filepath.Join(dir, "zz--Dense_config.json")
	require.NoError(t, os.WriteFile(dense, []byte(`{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
		"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
		"max_position_embeddings": 512}`), 0o644))
	v4 := filepath.Join(dir, "aa--V4_config.json")
	require.NoError(t, os.WriteFile(v4, []byte(`{"architectures": ["Gemma4ForConditionalGeneration"]}`), 0o644))
	moe := filepath.Join(dir, "bb--Moe_config.json")
	require.NoError(t, os.WriteFile(moe, []byte(`{"architectures": ["MixtralForCausalLM"], "num_hidden_layers": 2,
		"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
		"max_position_embeddings": 512, "num_local_experts": 8, "num_experts_per_tok": 2}`), 0o644))

	assert.Equal(t, Listing{Name: "zz/Dense", Source: dense, Architecture: "LlamaForCausalLM", Supported: true,
		Layers: 2, Hidden: 64, WeightDtype: "bfloat16", MaxPositionEmbeddings: 512}, ListFile(dense, "zz/Dense"))
	l := ListFile(v4, "aa/V4")
	assert.False(t, l.Supported)
	assert.Equal(t, "Gemma4ForConditionalGeneration", l.Architecture)
	assert.Contains(t, l.Reason, "not supported")
	assert.Equal(t, Listing{Name: "bb/Moe", Source: moe, Architecture: "MixtralForCausalLM", Supported: true,
		Layers: 2, Hidden: 64, WeightDtype: "bfloat16", MaxPositionEmbeddings: 512, Experts: 8, TopK: 2,
		ExpertDtype: "bfloat16"}, ListFile(moe, "bb/Moe"))
	assert.Len(t, BuiltinListings(), len(BuiltinNames()))
}

package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const llamaTiny = `{"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,
	"num_attention_heads":8,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512,
	"torch_dtype":"bfloat16"}`

// A Hugging Face checkpoint folder, as `vllm serve /path/to/folder` takes it,
// is read through its config.json (and the hf_quant_config.json beside it);
// it was "not found". A folder without config.json says so.
func TestLoadTakesACheckpointFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Llama-tiny")
	require.NoError(t, os.Mkdir(dir, 0o755))
	_, err := Load(dir, "")
	require.EqualError(t, err, "model "+dir+": a folder without config.json: give a Hugging Face checkpoint folder (it holds config.json) or the config file itself")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(llamaTiny), 0o644))
	a, err := Load(dir, "")
	require.NoError(t, err)
	assert.Equal(t, dir, a.Name)
	assert.Equal(t, 2, a.Layers)
	assert.Equal(t, BF16, a.WeightDtype)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hf_quant_config.json"),
		[]byte(`{"quantization": {"quant_algo": "FP8"}}`), 0o644))
	a, err = Load(dir, "")
	require.NoError(t, err)
	assert.Equal(t, FP8, a.WeightDtype)
}

// An unknown torch_dtype ("float128") was served as bfloat16 without a word:
// transformers cannot load it. Every torch floating-point name is taken.
func TestParseRefusesATorchDtypeTorchHasNot(t *testing.T) {
	_, err := Parse([]byte(strings.Replace(llamaTiny, `"bfloat16"`, `"float128"`, 1)), "m")
	require.EqualError(t, err, `model m: config.json field torch_dtype: "float128" is not a torch floating-point type `+
		`(bfloat16, double, float, float16, float32, float64, float8_e4m3fn, float8_e5m2, half)`)
	_, err = Parse([]byte(strings.Replace(llamaTiny, `"torch_dtype":"bfloat16"`, `"dtype":"int8"`, 1)), "m")
	require.ErrorContains(t, err, `config.json field dtype: "int8" is not a torch floating-point type`)
	for _, ok := range []string{"float16", "float32", "half"} {
		a, err := Parse([]byte(strings.Replace(llamaTiny, `"bfloat16"`, `"`+ok+`"`, 1)), "m")
		require.NoError(t, err, ok)
		assert.Equal(t, BF16, a.WeightDtype, ok) // 2-byte weights, as vLLM's dtype auto serves them
	}
}

// NaN in config.json (Python's json writes it) was "invalid character 'N'
// looking for beginning of value", with no line or field. In a field the
// model is read from it is an error naming its line and field; in one no
// reader reads (rope_theta, or Nemotron-H's time_step_limit [0.0, Infinity])
// the checkpoint is served as vLLM serves it, the same model as without it.
func TestParseNamesTheLineAndFieldOfNaN(t *testing.T) {
	data := strings.Replace(llamaTiny, `"vocab_size":1000`, `"vocab_size":1000,"rope_theta":1e4,"num_key_value_heads":NaN`, 1)
	_, err := Parse([]byte(data), "m")
	require.EqualError(t, err, "model m: config.json: line 2, field num_key_value_heads: NaN is not a JSON number "+
		"(JSON has no NaN or Infinity; give a finite number)")
	_, err = Parse([]byte(strings.Replace(llamaTiny, `"hidden_size":64`, `"hidden_size":-Infinity`, 1)), "m")
	require.EqualError(t, err, "model m: config.json: line 1, field hidden_size: -Infinity is not a JSON number "+
		"(JSON has no NaN or Infinity; give a finite number)")
	want, err := Parse([]byte(llamaTiny), "m")
	require.NoError(t, err)
	unread := strings.Replace(llamaTiny, `"vocab_size":1000`,
		`"vocab_size":1000,"rope_theta":NaN,"time_step_limit":[0.0, Infinity],"note":"NaN, -Infinity"`, 1)
	got, err := Parse([]byte(unread), "m")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = Parse([]byte(strings.Replace(llamaTiny, `"hidden_size":64`, `"hidden_size":64,,`, 1)), "m")
	require.EqualError(t, err, "model m: config.json: line 1: invalid character ',' looking for beginning of object key string")
}

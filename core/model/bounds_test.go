package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A config.json count beyond its physical bound is refused with the field
// named: an intermediate_size of 2^62 wrapped the weight bytes negative, and
// a max_position_embeddings of 2^62 let prompt + output lengths wrap.
func TestCountsOutOfBounds(t *testing.T) {
	const base = `"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512`
	valid := `{` + base + `}`
	_, err := Parse([]byte(valid), "tiny")
	require.NoError(t, err)
	for _, c := range []struct {
		field string
		value int64
		max   int
	}{
		{"intermediate_size", 1 << 62, 1 << 20},
		{"num_hidden_layers", 1 << 62, 1024},
		{"vocab_size", 1 << 62, 1 << 24},
		{"hidden_size", 1 << 40, 1 << 18},
		{"max_position_embeddings", 1 << 62, 1 << 30},
		{"head_dim", 1 << 31, 4096},            // the later head_dim wins
		{"num_attention_heads", 1 << 40, 4096}, // kv heads default to it; head_dim given below
	} {
		t.Run(c.field, func(t *testing.T) {
			// a later key overrides the same key earlier in the object
			text := fmt.Sprintf(`{%s,"head_dim":8,"%s":%d}`, base, c.field, c.value)
			_, err := Parse([]byte(text), "tiny")
			assert.EqualError(t, err, fmt.Sprintf(
				"model tiny: config.json field %s = %d, out of range 1..%d (about ten times the largest published model)",
				c.field, c.value, c.max))
		})
	}
	// The largest published dense checkpoint stays inside: Llama-3.1-405B.
	_, err = Parse([]byte(`{"architectures":["LlamaForCausalLM"],"num_hidden_layers":126,"hidden_size":16384,"num_attention_heads":128,"num_key_value_heads":8,"intermediate_size":53248,"vocab_size":128256,"max_position_embeddings":131072}`), "405b")
	assert.NoError(t, err)
	// Validate checks a Go-built Arch the same way.
	a := &Arch{Name: "go", Layers: 2, Hidden: 64, Heads: 8, KVHeads: 8, HeadDim: 8, Intermediate: 1 << 40, Vocab: 1000, WeightDtype: BF16}
	assert.ErrorContains(t, a.Validate(1), "field intermediate_size = 1099511627776, out of range 1..1048576")
}

// A model config file is read whole only up to 16 MiB.
func TestConfigFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"pad": "`+strings.Repeat("p", MaxConfigFileBytes)+`"}`), 0o644))
	_, err := Load(path, "")
	assert.EqualError(t, err, "model "+path+": "+path+": larger than 16777216 bytes (16 MiB): not a config file")
}

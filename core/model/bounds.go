package model

import (
	"fmt"
	"io"
	"os"
)

// Limits are the physical bounds of a dense decoder's config.json counts,
// each about ten times the largest published checkpoint (Llama-3.1-405B: 126
// layers, hidden 16,384, 128 heads, intermediate 53,248; Gemma 3: vocab
// 262,144; Llama 4 Scout: 10M context; head_dim ≤ 256). Within them every
// product the simulator forms (weight and KV bytes, FLOPs of a pass) stays far
// inside int64 and float64, so a corrupted or made-up file is refused with
// the field named instead of priced into garbage (an intermediate_size of
// 2^62 wrapped the weight bytes negative and gave an endless KV cache).
var Limits = []struct {
	Field string
	Max   int
}{
	{"num_hidden_layers", 1024},
	{"hidden_size", 1 << 18},
	{"num_attention_heads", 4096},
	{"num_key_value_heads", 4096},
	{"head_dim", 4096},
	{"intermediate_size", 1 << 20},
	{"vocab_size", 1 << 24},
	{"max_position_embeddings", MaxContextTokens},
}

// MaxContextTokens bounds max_position_embeddings (and so max_model_len):
// 2^30 tokens, a hundred times the longest context published.
const MaxContextTokens = 1 << 30

// checkLimits returns an error naming the first count of a outside
// 1..Limits.Max (where names the file: "config.json field"). A
// max_position_embeddings of 0 passes when !needContext (an Arch built in Go
// without one, which Validate accepts).
func (a *Arch) checkLimits(where string, needContext bool) error {
	for _, l := range Limits {
		v := a.count(l.Field)
		if v == 0 && !needContext && l.Field == "max_position_embeddings" {
			continue
		}
		if v == 0 && l.Field == "intermediate_size" && a.MoE != nil && a.DenseFFNLayers() == 0 {
			continue // no dense FFN: the MoE blocks have their own sizes
		}
		if v < 1 || v > l.Max {
			return fmt.Errorf("model %s: %s %s = %d, out of range 1..%d (about ten times the largest published model)",
				a.Name, where, l.Field, v, l.Max)
		}
	}
	return nil
}

// count is the value of a Limits field.
func (a *Arch) count(field string) int {
	switch field {
	case "num_hidden_layers":
		return a.Layers
	case "hidden_size":
		return a.Hidden
	case "num_attention_heads":
		return a.Heads
	case "num_key_value_heads":
		return a.KVHeads
	case "head_dim":
		return a.HeadDim
	case "intermediate_size":
		return a.Intermediate
	case "vocab_size":
		return a.Vocab
	}
	return a.MaxPositionEmbeddings
}

// MaxConfigFileBytes bounds a model or system config file read whole (a
// config.json is a few KB): 16 MiB, the trace readers' line bound.
const MaxConfigFileBytes = 16 << 20

// ReadConfigFile reads a config file (config.json, a system YAML) of at most
// MaxConfigFileBytes. Errors: the os error, or one naming the file when it
// is larger (a data file or a device named by mistake is never read whole).
func ReadConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes (16 MiB): not a config file", path, MaxConfigFileBytes)
	}
	return data, nil
}

package model

import (
	"testing"
)

// FuzzParse: any bytes given as a config.json parse to an architecture
// inside Limits, or to an error naming the model; never a panic. An accepted
// architecture's byte counts are positive (the Limits keep every product
// inside int64).
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"architectures":["Qwen3ForCausalLM"],"num_hidden_layers":36,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,"max_position_embeddings":40960}`))
	f.Add([]byte(`{"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"intermediate_size":4611686018427387904,"vocab_size":1000,"max_position_embeddings":512}`))
	f.Add([]byte(`{"architectures":["LlamaForCausalLM"],"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":512,"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}`))
	f.Add([]byte(`[[[[[[[[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		if err := a.checkLimits("field", true); err != nil {
			t.Fatalf("accepted outside the limits: %v", err)
		}
		for _, tp := range []int{1, 2, 4, 8} {
			if a.Validate(tp) != nil {
				continue
			}
			if a.WeightBytesPerGPU(tp) <= 0 || a.KVBytesPerToken(tp, 2) <= 0 {
				t.Fatalf("tp %d: weight bytes %d, KV bytes per token %d", tp, a.WeightBytesPerGPU(tp), a.KVBytesPerToken(tp, 2))
			}
		}
	})
}

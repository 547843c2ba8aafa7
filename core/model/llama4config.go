package model

import "fmt"

// readLlama4: Llama-4 Scout and Maverick (the language model of text_config),
// as vLLM's llama4.py builds it. Layer i uses rotary embeddings and chunked
// local attention (a query attends to the keys of its own chunk of
// attention_chunk_size tokens) when no_rope_layers[i] is 1, else it is a
// global full-attention layer without rotary embedding (NoPE); without
// no_rope_layers, every fourth layer is NoPE (Llama4TextConfig's default).
// Layer i is MoE when i + 1 is a multiple of interleave_moe_layer_step:
// num_local_experts experts of intermediate_size, num_experts_per_tok of
// them a token (sigmoid routing), and a shared expert of intermediate_size;
// the other layers a dense FFN of intermediate_size_mlp. use_qk_norm
// normalises q and k (an L2 norm, in the RoPE layers).
func readLlama4(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NumLocalExperts, "num_local_experts", c.IntermediateSize, "intermediate_size"); err != nil {
		return err
	}
	a.MoE.SharedIntermediate = a.MoE.Intermediate
	step, err := need(c.InterleaveMoELayerStep, "interleave_moe_layer_step", true)
	if err != nil {
		return err
	}
	if step > 1 {
		if a.Intermediate, err = need(c.IntermediateSizeMLP, "intermediate_size_mlp", true); err != nil {
			return err
		}
	} else {
		a.Intermediate = 0 // every layer MoE: intermediate_size is the experts'
	}
	chunk := 0
	if c.AttentionChunkSize != nil {
		if chunk, err = need(c.AttentionChunkSize, "attention_chunk_size", true); err != nil {
			return err
		}
	}
	rope := make([]bool, a.Layers)
	if c.NoRopeLayers != nil {
		if rope, err = layerFlags(c.NoRopeLayers, "no_rope_layers", a.Layers); err != nil {
			return err
		}
	} else {
		for i := range rope {
			rope[i] = (i+1)%4 != 0
		}
	}
	a.AttentionChunk = chunk
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i := range a.LayerKinds {
		k := LayerKind{Attn: AttnFull, MoE: (i+1)%step == 0}
		if rope[i] && chunk > 0 {
			k.Attn = AttnChunked
		}
		a.LayerKinds[i] = k
	}
	if c.UseQKNorm != nil && *c.UseQKNorm {
		a.QKNorm = true
		a.Approximations = append(a.Approximations,
			"q/k normalisation (an L2 norm in the RoPE layers) priced as a per-head RMSNorm in every layer")
	}
	if chunk > 0 {
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"chunked local attention (%d-token chunks, %d of %d layers): each query attends to its chunk; the KV cache holds the whole context in every layer, as vLLM's default (the hybrid KV cache manager off for chunked local attention)",
			chunk, a.ChunkedLayers(), a.Layers))
	}
	return nil
}

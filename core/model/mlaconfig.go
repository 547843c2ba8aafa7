package model

import (
	"encoding/json"
	"fmt"
)

// readDeepSeekExperts reads the DeepSeek family's experts: n_routed_experts
// of moe_intermediate_size, num_experts_per_tok per token, and
// n_shared_experts × moe_intermediate_size of shared experts.
func readDeepSeekExperts(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NRoutedExperts, "n_routed_experts", c.MoEIntermediateSize, "moe_intermediate_size"); err != nil {
		return err
	}
	nShared, err := need(c.NSharedExperts, "n_shared_experts", false)
	if err != nil {
		return err
	}
	a.MoE.SharedIntermediate = nShared * a.MoE.Intermediate
	return nil
}

// layerFreq is moe_layer_freq: an integer f (DeepSeek: a layer from
// first_k_dense_replace on is MoE when its index is a multiple of f) or a
// list of per-layer 0/1 flags (MiniMax-M3).
type layerFreq struct {
	every *int
	flags *[]int
}

// UnmarshalJSON reads either form.
func (f *layerFreq) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		f.every = &n
		return nil
	}
	var l []int
	if err := json.Unmarshal(data, &l); err != nil {
		return fmt.Errorf("moe_layer_freq must be an integer or an array of 0/1 flags, got %s", quoteJSON(data))
	}
	f.flags = &l
	return nil
}

// listFlags is the flag list of f (nil when f is nil or an integer).
func (f *layerFreq) listFlags() *[]int {
	if f == nil {
		return nil
	}
	return f.flags
}

// readDeepSeek: the DeepSeek-V2/V3 family (DeepseekV2/V3/V32ForCausalLM,
// Kimi-K2 and K2.5, GLM-5's GlmMoeDsaForCausalLM), as vLLM's
// deepseek_v2.py reads it: MLA attention in every layer (kv_lora_rank,
// q_lora_rank or null, qk_nope_head_dim, qk_rope_head_dim, v_head_dim); a
// layer i is MoE when i ≥ first_k_dense_replace and i is a multiple of
// moe_layer_freq (else a dense FFN of intermediate_size), with
// n_routed_experts experts of moe_intermediate_size, num_experts_per_tok
// of them per token, and n_shared_experts × moe_intermediate_size of
// shared experts; n_group / topk_group restrict a token's experts to its
// topk_group best groups (grouped_topk). DeepSeek Sparse Attention when
// the config has index_topk (vLLM's is_v32 = hasattr(config,
// "index_topk")), with index_n_heads and index_head_dim.
func readDeepSeek(c *moeConfig, a *Arch) error {
	if err := readDeepSeekExperts(c, a); err != nil {
		return err
	}
	firstK, freq, err := deepSeekMoELayers(c, a.Architecture)
	if err != nil {
		return err
	}
	for _, g := range []struct {
		p     *int
		field string
		dst   *int
	}{{c.NGroup, "n_group", &a.MoE.Groups}, {c.TopKGroup, "topk_group", &a.MoE.TopKGroups}} {
		if g.p != nil {
			if *g.dst, err = need(g.p, g.field, true); err != nil {
				return err
			}
		}
	}
	if a.MoE.Groups > 0 && (a.MoE.Experts%a.MoE.Groups != 0 || a.MoE.TopKGroups > a.MoE.Groups) {
		return fmt.Errorf("n_group = %d, topk_group = %d: n_group must divide n_routed_experts = %d and topk_group ≤ n_group",
			a.MoE.Groups, a.MoE.TopKGroups, a.MoE.Experts)
	}
	m, err := readMLA(c)
	if err != nil {
		return err
	}
	if err := setMLALayers(a, m, func(int) AttnKind { return AttnMLA }, firstK, freq); err != nil {
		return err
	}
	if m.Indexer != nil {
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"DeepSeek Sparse Attention: each query attends to its %d best keys of the indexer's %d heads × %d scores over every cached token",
			m.Indexer.TopK, m.Indexer.Heads, m.Indexer.HeadDim))
	}
	return nil
}

// setMLALayers sets a's MLA attention m and its layers: layer i's
// attention attn(i), MoE when i ≥ firstK and i is a multiple of freq
// (deepSeekMoELayers). vLLM's MLA has one latent KV "head"; the prefill
// heads are H keys of P + R (HeadDim: the attention width the activation
// estimate reads). Errors: dense layers without intermediate_size.
func setMLALayers(a *Arch, m *MLA, attn func(int) AttnKind, firstK, freq int) error {
	a.MLA = m
	a.KVHeads, a.HeadDim = a.Heads, m.NopeDim+m.RopeDim
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i := range a.LayerKinds {
		a.LayerKinds[i] = LayerKind{Attn: attn(i), MoE: i >= firstK && i%freq == 0}
	}
	if a.DenseFFNLayers() > 0 && a.Intermediate == 0 {
		return fmt.Errorf("intermediate_size is missing (needed by the first %d dense layers)", firstK)
	}
	return nil
}

// readMLA reads the MLA attention of the DeepSeek family's fields
// (q_lora_rank, null or absent for none; kv_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim, v_head_dim; DSA's index_n_heads, index_head_dim and
// index_topk when index_topk is set) and validates it.
func readMLA(c *moeConfig) (*MLA, error) {
	var err error
	m := &MLA{}
	if c.QLoraRank != nil {
		if m.QLoraRank, err = need(c.QLoraRank, "q_lora_rank", true); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		p     *int
		field string
		dst   *int
	}{{c.KVLoraRank, "kv_lora_rank", &m.KVLoraRank}, {c.QKNopeHeadDim, "qk_nope_head_dim", &m.NopeDim},
		{c.QKRopeHeadDim, "qk_rope_head_dim", &m.RopeDim}, {c.VHeadDim, "v_head_dim", &m.VDim}} {
		if *f.dst, err = need(f.p, f.field, true); err != nil {
			return nil, err
		}
	}
	if c.IndexTopK != nil {
		ix := &MLAIndexer{}
		for _, f := range []struct {
			p     *int
			field string
			dst   *int
		}{{c.IndexNHeads, "index_n_heads", &ix.Heads}, {c.IndexHeadDim, "index_head_dim", &ix.HeadDim},
			{c.IndexTopK, "index_topk", &ix.TopK}} {
			if *f.dst, err = need(f.p, f.field, true); err != nil {
				return nil, err
			}
		}
		m.Indexer = ix
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// deepSeekMoELayers reads first_k_dense_replace and moe_layer_freq (an
// integer, default 1): layer i is MoE when i ≥ first_k_dense_replace and i
// is a multiple of moe_layer_freq (vLLM deepseek_v2.py, kimi_linear.py).
func deepSeekMoELayers(c *moeConfig, arch string) (firstK, freq int, err error) {
	if firstK, err = need(c.FirstKDenseReplace, "first_k_dense_replace", false); err != nil {
		return 0, 0, err
	}
	freq = 1
	if f := c.MoELayerFreq; f != nil {
		if f.every == nil {
			return 0, 0, fmt.Errorf("moe_layer_freq must be an integer for %s", arch)
		}
		if freq, err = need(f.every, "moe_layer_freq", true); err != nil {
			return 0, 0, err
		}
	}
	return firstK, freq, nil
}

package model

import "fmt"

// kimiK3Config holds the config.json fields of Kimi-K3's language model
// (text_config, KimiLinearForCausalLM) beyond moeConfig's.
type kimiK3Config struct {
	LinearAttnConfig       *kimiLinearAttnConfig `json:"linear_attn_config"`
	NumExpertsPerToken     *int                  `json:"num_experts_per_token"`
	NumSharedExperts       *int                  `json:"num_shared_experts"`
	RoutedExpertHiddenSize *int                  `json:"routed_expert_hidden_size"`
	MLAUseOutputGate       *bool                 `json:"mla_use_output_gate"`
	HiddenAct              *string               `json:"hidden_act"`
	AttnResBlockSize       *int                  `json:"attn_res_block_size"`
	NumExpertGroup         *int                  `json:"num_expert_group"`
}

// kimiLinearAttnConfig is text_config.linear_attn_config: the layers of
// each kind (1-based indices) and the Kimi Delta Attention shape.
type kimiLinearAttnConfig struct {
	FullAttnLayers      *[]int `json:"full_attn_layers"`
	KDALayers           *[]int `json:"kda_layers"`
	HeadDim             *int   `json:"head_dim"`
	NumHeads            *int   `json:"num_heads"`
	ShortConvKernelSize *int   `json:"short_conv_kernel_size"`
	UseFullRankGate     *bool  `json:"use_full_rank_gate"`
}

// kdaStateBytes is the bytes of one element of a KDA layer's recurrent
// state: vLLM keeps it in fp32 whatever the model's dtype
// (MambaStateDtypeCalculator.kda_state_dtype returns float32 for the
// recurrent state, the cache dtype for the three convolution states).
const kdaStateBytes = 4

// readKimiK3: Kimi-K3 (KimiK3ForConditionalGeneration; its language model
// in text_config, KimiLinearForCausalLM), as vLLM's kimi_linear.py builds
// it. linear_attn_config lists each layer (1-based) as a Kimi Delta
// Attention layer (kda_layers: num_heads × head_dim queries, keys and
// values, each through a causal convolution of short_conv_kernel_size,
// and the delta rule with a per-key decay gate; Arch.Linear with KDA set)
// or an MLA layer (full_attn_layers: the DeepSeek fields kv_lora_rank,
// q_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, with a
// sigmoid output gate when mla_use_output_gate). A layer i (0-based) is MoE
// when i ≥ first_k_dense_replace and i is a multiple of moe_layer_freq
// (else a dense FFN of intermediate_size): num_experts experts of
// moe_intermediate_size, num_experts_per_token a token, num_shared_experts ×
// moe_intermediate_size of shared experts, and, with
// routed_expert_hidden_size below hidden_size, latent experts (MoE.Latent:
// projected down before dispatch and up after combine). hidden_act must be
// "situ"; it is priced as a gated SiLU (the same GEMMs). Errors name the
// field.
func readKimiK3(c *moeConfig, a *Arch) error {
	k := &c.kimiK3Config
	if err := readExpertsTopK(a, c.NumExperts, "num_experts", k.NumExpertsPerToken, "num_experts_per_token",
		c.MoEIntermediateSize, "moe_intermediate_size"); err != nil {
		return err
	}
	m := a.MoE
	nShared, err := need(k.NumSharedExperts, "num_shared_experts", false)
	if err != nil {
		return err
	}
	m.SharedIntermediate = nShared * m.Intermediate
	if k.RoutedExpertHiddenSize != nil {
		l, err := need(k.RoutedExpertHiddenSize, "routed_expert_hidden_size", true)
		if err != nil {
			return err
		}
		if l > a.Hidden {
			return fmt.Errorf("routed_expert_hidden_size = %d is wider than hidden_size = %d (latent experts project the hidden state down)", l, a.Hidden)
		}
		if l < a.Hidden {
			m.Latent = l
		}
	}
	firstK, freq, err := deepSeekMoELayers(c, a.Architecture)
	if err != nil {
		return err
	}
	if act := k.HiddenAct; act == nil || *act != "situ" {
		got := "missing"
		if act != nil {
			got = fmt.Sprintf("%q", *act)
		}
		return fmt.Errorf("hidden_act is %s, want \"situ\" (Kimi-K3's expert activation)", got)
	}
	mla, err := readMLA(c)
	if err != nil {
		return err
	}
	if mla.Indexer != nil {
		return fmt.Errorf("index_topk: DeepSeek Sparse Attention in a Kimi-K3 MLA layer is not modelled")
	}
	mla.OutputGate = k.MLAUseOutputGate != nil && *k.MLAUseOutputGate
	kinds, lin, err := readKDA(k.LinearAttnConfig, a.Layers)
	if err != nil {
		return err
	}
	a.Linear = lin
	if err := setMLALayers(a, mla, func(i int) AttnKind { return kinds[i] }, firstK, freq); err != nil {
		return err
	}
	a.Approximations = append(a.Approximations,
		"SiTU expert and FFN activations (hidden_act situ) priced as SiLU-and-mul (the same GEMMs; the elementwise op differs)")
	if b := k.AttnResBlockSize; b != nil && *b > 0 {
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"block attention residuals (attn_res_block_size %d: each layer's input a learned mix of the block sums before it) are not priced: elementwise work of a few hidden_size vectors per token and layer",
			*b))
	}
	if m.Latent > 0 {
		a.Approximations = append(a.Approximations,
			"the latent experts' RMSNorm before the latent up-projection (latent_moe_use_norm) is not priced")
	}
	return nil
}

// readKDA reads linear_attn_config: each layer's attention (kda_layers and
// full_attn_layers, 1-based, together naming every layer once) and the
// KDA shape (num_heads, head_dim, short_conv_kernel_size,
// use_full_rank_gate).
func readKDA(c *kimiLinearAttnConfig, layers int) ([]AttnKind, *LinearAttention, error) {
	const field = "linear_attn_config"
	if c == nil {
		return nil, nil, fmt.Errorf("%s is missing", field)
	}
	kinds := make([]AttnKind, layers)
	seen := make([]bool, layers)
	for _, l := range []struct {
		p    *[]int
		name string
		kind AttnKind
	}{{c.KDALayers, "kda_layers", AttnLinear}, {c.FullAttnLayers, "full_attn_layers", AttnMLA}} {
		if l.p == nil {
			return nil, nil, fmt.Errorf("%s.%s is missing", field, l.name)
		}
		for j, i := range *l.p {
			if i < 1 || i > layers {
				return nil, nil, fmt.Errorf("%s.%s[%d] = %d, outside 1..num_hidden_layers = %d", field, l.name, j, i, layers)
			}
			if seen[i-1] {
				return nil, nil, fmt.Errorf("%s.%s[%d] = %d: layer %d is listed twice", field, l.name, j, i, i)
			}
			seen[i-1], kinds[i-1] = true, l.kind
		}
	}
	for i, s := range seen {
		if !s {
			return nil, nil, fmt.Errorf("%s: layer %d (1-based) is in neither kda_layers nor full_attn_layers", field, i+1)
		}
	}
	l := &LinearAttention{KDA: true, StateBytes: kdaStateBytes, FullRankGate: c.UseFullRankGate != nil && *c.UseFullRankGate}
	if err := readFields([]stateField{{c.NumHeads, field + ".num_heads", &l.KeyHeads}, {c.HeadDim, field + ".head_dim", &l.KeyDim},
		{c.ShortConvKernelSize, field + ".short_conv_kernel_size", &l.ConvKernel}}); err != nil {
		return nil, nil, err
	}
	l.ValueHeads, l.ValueDim = l.KeyHeads, l.KeyDim
	return kinds, l, l.validate(0)
}

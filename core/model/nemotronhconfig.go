package model

import (
	"fmt"
	"math"
)

// nemotronHConfig holds the config.json fields of Nemotron-H
// (NemotronHForCausalLM) beyond moeConfig's.
type nemotronHConfig struct {
	Pattern          *string   `json:"hybrid_override_pattern"`
	BlockTypes       *[]string `json:"layers_block_type"`
	MambaHeads       *int      `json:"mamba_num_heads"`
	MambaHeadDim     *int      `json:"mamba_head_dim"`
	NGroups          *int      `json:"n_groups"`
	SSMStateSize     *int      `json:"ssm_state_size"`
	ConvKernel       *int      `json:"conv_kernel"`
	ChunkSize        *int      `json:"chunk_size"`
	SSMCacheDtype    *string   `json:"mamba_ssm_cache_dtype"`
	AttentionHeadDim *int      `json:"attention_head_dim"`
	MLPHiddenAct     *string   `json:"mlp_hidden_act"`
	SharedExpertSize *int      `json:"moe_shared_expert_intermediate_size"`
	LatentSize       *int      `json:"moe_latent_size"`
}

// Nemotron-H's layer kinds, as hybrid_override_pattern spells them.
const (
	nemotronMamba     = 'M'
	nemotronAttention = '*'
	nemotronMLP       = '-'
	nemotronMoE       = 'E'
)

// nemotronBlockTypes maps layers_block_type's names to the pattern's
// letters (NemotronHConfig: the newer spelling of the same layout).
var nemotronBlockTypes = map[string]byte{"mamba": nemotronMamba, "attention": nemotronAttention, "mlp": nemotronMLP, "moe": nemotronMoE}

// readNemotronH: Nemotron-H and Nemotron-3 (NemotronHForCausalLM), as
// vLLM's nemotron_h.py builds them. Each decoder layer is one mixer behind
// one RMSNorm and a residual: a Mamba-2 mixer ("M", MambaMixer2:
// mamba_num_heads × mamba_head_dim, n_groups of ssm_state_size, a causal
// convolution of conv_kernel), grouped-query attention ("*", no FFN), a
// dense MLP ("-", intermediate_size) or a MoE block ("E": n_routed_experts
// of moe_intermediate_size, num_experts_per_tok a token with sigmoid
// routing, a shared expert of moe_shared_expert_intermediate_size), as
// hybrid_override_pattern or layers_block_type lists them. The FFNs are
// relu², not gated (up_proj and down_proj). With moe_latent_size
// (Nemotron-3 Super and Ultra) the routed experts are latent: they work on
// a moe_latent_size-wide projection of the token (MoE.Latent,
// fc1_latent_proj and fc2_latent_proj around dispatch and combine).
//
// The simulator prices layers as a mixer and an FFN: each FFN layer is
// paired with a mixer (a Mamba-2 one first), the mixers left over have no
// FFN (LayerKind.NoFFN). Pass times add layer by layer, so the pairing
// changes no FLOP or byte; the per-layer costs do (two norms and two TP
// all-reduces a paired layer, where Nemotron-H has one of each a layer:
// noted). A relu² FFN of width I holds 2·h·I weights: it is priced as a
// SwiGLU FFN of width ⌊2·I/3⌉ (the same weights and FLOPs within rounding,
// as the MoE tables measure gated experts only; noted).
func readNemotronH(c *moeConfig, a *Arch) error {
	n := &c.nemotronHConfig
	kinds, err := nemotronLayers(n, a.Layers)
	if err != nil {
		return err
	}
	if act := n.MLPHiddenAct; act != nil && *act != "relu2" {
		return fmt.Errorf("mlp_hidden_act %q not supported (relu2)", *act)
	}
	if n.AttentionHeadDim != nil {
		if a.HeadDim, err = need(n.AttentionHeadDim, "attention_head_dim", true); err != nil {
			return err
		}
	} else if c.HeadDim == nil {
		return fmt.Errorf("head_dim is missing (Nemotron-H's attention heads are not hidden_size / num_attention_heads wide)")
	}
	l := &LinearAttention{Mamba2: true, StateBytes: 2}
	if err := l.read([]stateField{{n.NGroups, "n_groups", &l.KeyHeads}, {n.SSMStateSize, "ssm_state_size", &l.KeyDim},
		{n.MambaHeads, "mamba_num_heads", &l.ValueHeads}, {n.MambaHeadDim, "mamba_head_dim", &l.ValueDim},
		{n.ConvKernel, "conv_kernel", &l.ConvKernel}, {n.ChunkSize, "chunk_size", &l.Chunk}},
		n.SSMCacheDtype, "mamba_ssm_cache_dtype"); err != nil {
		return err
	}
	count := map[byte]int{}
	for _, k := range kinds {
		count[k]++
	}
	if count[nemotronAttention] == 0 {
		return fmt.Errorf("hybrid_override_pattern has no attention layer (*)")
	}
	ffns := count[nemotronMLP] + count[nemotronMoE]
	mixers := count[nemotronMamba] + count[nemotronAttention]
	if ffns > mixers {
		return fmt.Errorf("hybrid_override_pattern has %d FFN layers (- and E) and %d mixers (M and *): more FFNs than mixers is not modelled", ffns, mixers)
	}
	relu2 := func(i int) int { return int(math.Round(2 * float64(i) / 3)) }
	if count[nemotronMoE] > 0 {
		if err := readExperts(c, a, c.NRoutedExperts, "n_routed_experts", c.MoEIntermediateSize, "moe_intermediate_size"); err != nil {
			return err
		}
		shared, err := need(n.SharedExpertSize, "moe_shared_expert_intermediate_size", false)
		if err != nil {
			return err
		}
		a.MoE.Intermediate, a.MoE.SharedIntermediate = relu2(a.MoE.Intermediate), relu2(shared)
		if n.LatentSize != nil {
			if a.MoE.Latent, err = need(n.LatentSize, "moe_latent_size", true); err != nil {
				return err
			}
			if a.MoE.Latent > a.Hidden {
				return fmt.Errorf("moe_latent_size = %d is wider than hidden_size = %d (latent experts project the hidden state down)", a.MoE.Latent, a.Hidden)
			}
		}
	}
	if count[nemotronMLP] > 0 {
		if a.Intermediate == 0 {
			return fmt.Errorf("intermediate_size is missing (needed by the MLP layers, -)")
		}
		a.Intermediate = relu2(a.Intermediate)
	} else {
		a.Intermediate = 0
	}
	a.Linear, a.nemotronLayout = l, kinds
	// the FFN layers in order onto the Mamba-2 mixers, then the attention ones
	var ffn []byte
	for _, k := range kinds {
		if k == nemotronMLP || k == nemotronMoE {
			ffn = append(ffn, k)
		}
	}
	a.Layers = mixers
	a.LayerKinds = make([]LayerKind, 0, mixers)
	for _, want := range []byte{nemotronMamba, nemotronAttention} {
		for _, k := range kinds {
			if k != want {
				continue
			}
			lk := LayerKind{Attn: AttnLinear}
			if k == nemotronAttention {
				lk.Attn = AttnFull
			}
			if len(ffn) == 0 {
				lk.NoFFN = true
			} else {
				lk.MoE, ffn = ffn[0] == nemotronMoE, ffn[1:]
			}
			a.LayerKinds = append(a.LayerKinds, lk)
		}
	}
	a.Approximations = append(a.Approximations,
		fmt.Sprintf("Nemotron-H's %d single-mixer layers (%d Mamba-2, %d attention, %d MLP, %d MoE) priced as %d mixers, %d of them with an FFN layer beside: the same weights and FLOPs, one norm and one TP all-reduce more a paired layer",
			len(kinds), count[nemotronMamba], count[nemotronAttention], count[nemotronMLP], count[nemotronMoE], mixers, ffns),
		"relu² (non-gated) FFNs and experts priced as SwiGLU ones of 2/3 the width (the same weights and FLOPs)")
	if p := c.NumNextnPredictLayers; p != nil && *p > 0 {
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"the %d multi-token-prediction layer(s) (num_nextn_predict_layers) are not loaded: they serve speculative decoding only", *p))
	}
	return nil
}

// nemotronLayerCount fills a missing num_hidden_layers from the layer list,
// as transformers' NemotronHConfig does (num_hidden_layers is a property
// returning len(layers_block_type): models/nemotron_h/configuration_nemotron_h.py).
// Nemotron-3 Ultra's config.json gives only layers_block_type. A count that is
// given and disagrees with the list stays an error (nemotronLayers).
func nemotronLayerCount(c *moeConfig) {
	if c.NumHiddenLayers != nil {
		return
	}
	n := 0
	switch {
	case c.Pattern != nil:
		n = len(*c.Pattern)
	case c.BlockTypes != nil:
		n = len(*c.BlockTypes)
	}
	if n > 0 {
		c.NumHiddenLayers = &n
	}
}

// nemotronLayers reads the layer kinds of hybrid_override_pattern (one
// letter a layer: M, *, - or E) or layers_block_type, one per layer.
func nemotronLayers(n *nemotronHConfig, layers int) ([]byte, error) {
	var kinds []byte
	switch {
	case n.Pattern != nil:
		kinds = []byte(*n.Pattern)
		for i, k := range kinds {
			if k != nemotronMamba && k != nemotronAttention && k != nemotronMLP && k != nemotronMoE {
				return nil, fmt.Errorf("hybrid_override_pattern[%d] = %q, want M (Mamba-2), * (attention), - (MLP) or E (MoE)", i, k)
			}
		}
	case n.BlockTypes != nil:
		for i, t := range *n.BlockTypes {
			k, ok := nemotronBlockTypes[t]
			if !ok {
				return nil, fmt.Errorf("layers_block_type[%d] = %q, want mamba, attention, mlp or moe", i, t)
			}
			kinds = append(kinds, k)
		}
	default:
		return nil, fmt.Errorf("hybrid_override_pattern (or layers_block_type) is missing")
	}
	if len(kinds) != layers {
		return nil, fmt.Errorf("hybrid_override_pattern has %d layers, want num_hidden_layers = %d", len(kinds), layers)
	}
	return kinds, nil
}

// nemotronQuant reads a Nemotron-H checkpoint's formats: bf16, or a ModelOpt
// FP8 / NVFP4 release (quantization_config or hf_quant_config.json), whose
// exclusions and MIXED_PRECISION layers are weighed role by role over the
// checkpoint's own module names (backbone.layers.<i>.mixer.…: nemotronModules).
func nemotronQuant(q *moeQuantConfig, a *Arch) error {
	return roleFormats(q, a)
}

// nemotronModules calls f for each weight module of a Nemotron-H
// checkpoint, named as it stores them ("backbone.layers.<i>.mixer.…", the
// real layer index i): a Mamba-2 mixer's in_proj and out_proj and an
// attention layer's q, k, v and o projections (the attention role), an
// MLP's up_proj and down_proj (dense FFN), a MoE layer's shared expert and
// one routed expert (their up_proj and down_proj). Elements are per layer,
// relu² FFNs at their own width (3/2 of the priced one).
func (a *Arch) nemotronModules(f func(r weightRole, names []string, elems int64)) {
	h := int64(a.Hidden)
	one := func(r weightRole, i int, name string, elems int64) {
		f(r, []string{fmt.Sprintf("backbone.layers.%d.mixer.%s", i, name)}, elems)
	}
	relu2 := func(i int) int64 { return int64(math.Round(1.5 * float64(i))) }
	for i, k := range a.nemotronLayout {
		switch k {
		case nemotronMamba:
			for _, g := range a.LinearProjections(1) {
				one(roleAttention, i, g.Name, int64(g.N)*int64(g.K))
			}
		case nemotronAttention:
			q, kv := int64(a.Heads*a.HeadDim), int64(a.KVHeads*a.HeadDim)
			for _, m := range []roleModule{{"q_proj", h * q}, {"k_proj", h * kv}, {"v_proj", h * kv}, {"o_proj", q * h}} {
				one(roleAttention, i, m.name, m.elems)
			}
		case nemotronMLP:
			e := h * relu2(a.Intermediate)
			one(roleDenseFFN, i, "up_proj", e)
			one(roleDenseFFN, i, "down_proj", e)
		case nemotronMoE:
			if s := a.MoE.SharedIntermediate; s > 0 {
				e := h * relu2(s)
				one(roleShared, i, "shared_experts.up_proj", e)
				one(roleShared, i, "shared_experts.down_proj", e)
			}
			for _, g := range a.LatentProjections() {
				one(roleShared, i, g.Name, int64(g.N)*int64(g.K))
			}
			e := int64(a.ExpertHidden()) * relu2(a.MoE.Intermediate)
			one(roleExperts, i, "experts.0.up_proj", e)
			one(roleExperts, i, "experts.0.down_proj", e)
		}
	}
}

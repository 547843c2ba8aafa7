package model

import (
	"fmt"
	"sort"
	"strings"
)

// family is a model family whose layers need more than the MoE readers
// give (hybridFamilies): its config.json reader and the reader of its
// quantization_config.
type family struct {
	read  func(c *moeConfig, a *Arch) error
	quant func(q *moeQuantConfig, a *Arch) error
}

// hybridFamilies maps each accepted hybrid or multimodal "architectures"
// value (a language model with linear-attention layers, or one kept in
// text_config beside a vision tower) to its readers. A family may be dense
// (no MoE layer).
var hybridFamilies = map[string]family{
	"Qwen3NextForCausalLM":               {readQwen35, roleFormats},
	"Qwen3_5ForConditionalGeneration":    {readQwen35, roleFormats},
	"Qwen3_5MoeForConditionalGeneration": {readQwen35, roleFormats},
	// Qwen3-VL: the language model of text_config is Qwen3 (dense) or
	// Qwen3-MoE, as vLLM's qwen3_vl.py and qwen3_vl_moe.py run it
	"Qwen3VLForConditionalGeneration":    {readQwen3Dense, denseQuant},
	"Qwen3VLMoeForConditionalGeneration": {readQwenMoE, moeQuant},
	// MiniMax-M3's text-only release (the layers of MiniMaxM3SparseForCausalLM)
	"MiniMaxM3ForCausalLM": {readMiniMaxM3, moeQuant},
	// Llama-4 Scout and Maverick: chunked local attention, interleaved MoE
	"Llama4ForConditionalGeneration": {readLlama4, moeQuant},
	// Nemotron-H, Nemotron-3: Mamba-2 mixers beside attention, MLP and MoE layers
	"NemotronHForCausalLM": {readNemotronH, nemotronQuant},
	// Kimi-K3: Kimi Delta Attention beside MLA layers, latent experts
	// (text_config; the quantization is read as the MLA family's, mlaQuant)
	"KimiK3ForConditionalGeneration": {readKimiK3, mlaQuant},
}

// readQwen3Dense: a Qwen3 dense decoder (Qwen3ForCausalLM's layers: GQA with
// per-head q/k RMSNorm, a SwiGLU FFN of intermediate_size).
func readQwen3Dense(c *moeConfig, a *Arch) error {
	if a.Intermediate == 0 {
		return fmt.Errorf("intermediate_size is missing")
	}
	a.QKNorm = true
	return nil
}

// denseQuant sets a dense decoder's weight format from quantization_config
// as Parse does (applyQuant: one format for every linear layer; exclusions
// that leave a layer's GEMMs unquantized are refused).
func denseQuant(q *moeQuantConfig, a *Arch) error {
	a.WeightDtype = BF16
	if q == nil {
		return nil
	}
	return applyQuant(a, &q.quantConfig, "config.json field quantization_config")
}

// HybridArchitectures lists the hybrid and multimodal "architectures"
// values that Parse accepts (hybridFamilies), sorted.
func HybridArchitectures() []string {
	var out []string
	for k := range hybridFamilies {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// qwen3MoEShared is the Qwen families' shared-expert module prefix.
const qwen3MoEShared = "mlp.shared_expert."

// readQwen35: Qwen3-Next (Qwen3NextForCausalLM) and Qwen3.5 / Qwen3.6
// (Qwen3_5ForConditionalGeneration, dense; Qwen3_5MoeForConditionalGeneration;
// the language model of text_config), as vLLM's qwen3_next.py and
// qwen3_5.py build them. layer_types names each layer "linear_attention"
// (Gated DeltaNet: linear_num_key_heads × linear_key_head_dim queries and
// keys, linear_num_value_heads × linear_value_head_dim values, a causal
// convolution of linear_conv_kernel_dim) or "full_attention" (GQA with q/k
// RMSNorm and, with attn_output_gate (default true), a sigmoid output gate
// from q_proj); without layer_types every full_attention_interval-th layer
// (index + 1 a multiple of it) is full attention. The MoE variants have
// num_experts experts of moe_intermediate_size, num_experts_per_tok per
// token, and a shared expert of shared_expert_intermediate_size (with its
// sigmoid gate), in every layer except mlp_only_layers and those whose
// index + 1 is not a multiple of decoder_sparse_step (default 1); the
// dense variant an FFN of intermediate_size. mamba_ssm_dtype "float32"
// keeps the recurrent state in fp32 (every Qwen3.5 and Qwen3.6 config).
func readQwen35(c *moeConfig, a *Arch) error {
	moe := a.Architecture != "Qwen3_5ForConditionalGeneration"
	dense := map[int]bool{}
	step := 1
	if moe {
		if err := readExperts(c, a, c.NumExperts, "num_experts", c.MoEIntermediateSize, "moe_intermediate_size"); err != nil {
			return err
		}
		shared, err := need(c.SharedExpertIntermediate, "shared_expert_intermediate_size", false)
		if err != nil {
			return err
		}
		a.MoE.SharedIntermediate = shared
		if c.DecoderSparseStep != nil {
			if step, err = need(c.DecoderSparseStep, "decoder_sparse_step", true); err != nil {
				return err
			}
		}
		if c.MLPOnlyLayers != nil {
			for _, i := range *c.MLPOnlyLayers {
				if i < 0 || i >= a.Layers {
					return fmt.Errorf("mlp_only_layers has layer %d, outside 0..%d", i, a.Layers-1)
				}
				dense[i] = true
			}
		}
	} else if a.Intermediate == 0 {
		return fmt.Errorf("intermediate_size is missing")
	}
	l := &LinearAttention{StateBytes: 2}
	if err := l.read([]stateField{{c.LinearNumKeyHeads, "linear_num_key_heads", &l.KeyHeads}, {c.LinearKeyHeadDim, "linear_key_head_dim", &l.KeyDim},
		{c.LinearNumValueHeads, "linear_num_value_heads", &l.ValueHeads}, {c.LinearValueHeadDim, "linear_value_head_dim", &l.ValueDim},
		{c.LinearConvKernelDim, "linear_conv_kernel_dim", &l.ConvKernel}}, c.MambaSSMDtype, "mamba_ssm_dtype"); err != nil {
		return err
	}
	a.Linear = l
	kinds, err := qwen35LayerTypes(c, a.Layers)
	if err != nil {
		return err
	}
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i := range a.LayerKinds {
		a.LayerKinds[i] = LayerKind{Attn: kinds[i], MoE: moe && !dense[i] && (i+1)%step == 0}
	}
	if a.DenseFFNLayers() > 0 && a.Intermediate == 0 {
		return fmt.Errorf("intermediate_size is missing (needed by the dense FFN layers)")
	}
	if a.FullKVLayers() == 0 {
		return fmt.Errorf("layer_types has no full_attention layer")
	}
	a.QKNorm = true
	a.AttnOutputGate = c.AttnOutputGate == nil || *c.AttnOutputGate
	if n := c.MTPNumHiddenLayers; n != nil && *n > 0 {
		a.MTPLayers = *n
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"the %d multi-token-prediction layer(s) (mtp_num_hidden_layers) are not loaded: they serve speculative decoding only", *n))
	}
	if moe && a.MoE.SharedIntermediate > 0 {
		a.Approximations = append(a.Approximations,
			"the shared expert's sigmoid gate (one GEMV of hidden_size per token) is not priced")
	}
	return nil
}

// qwen35LayerTypes reads each layer's attention from layer_types, else
// from full_attention_interval.
func qwen35LayerTypes(c *moeConfig, layers int) ([]AttnKind, error) {
	out := make([]AttnKind, layers)
	if c.LayerTypes != nil {
		if len(*c.LayerTypes) != layers {
			return nil, fmt.Errorf("layer_types has %d entries, want num_hidden_layers = %d", len(*c.LayerTypes), layers)
		}
		for i, t := range *c.LayerTypes {
			switch t {
			case "linear_attention":
				out[i] = AttnLinear
			case "full_attention":
				out[i] = AttnFull
			default:
				return nil, fmt.Errorf("layer_types[%d] = %q, want linear_attention or full_attention", i, t)
			}
		}
		return out, nil
	}
	k, err := need(c.FullAttentionInterval, "full_attention_interval (or layer_types)", true)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = AttnLinear
		if (i+1)%k == 0 {
			out[i] = AttnFull
		}
	}
	return out, nil
}

// roleFormats sets a hybrid checkpoint's weight formats role by role
// (applyRoleFormats) from quantization_config (nil: bf16; a ModelOpt
// hf_quant_config.json beside it may still set them, Load):
//   - ModelOpt quant_algo "MIXED_PRECISION" with quantized_layers (Qwen3.6
//     NVFP4: FP8 attention, weight-only NVFP4 FFNs and experts): each
//     module's entry (or its parent's: "mlp.experts"), an absent module
//     bf16; FP8 and MXFP8 as fp8, NVFP4 and W4A16_NVFP4 as nvfp4;
//   - compressed-tensors config_groups: a module takes the group whose
//     targets name it ("Linear" names every module), its ignore list
//     excluding;
//   - fp8, ModelOpt FP8 or NVFP4 (applyQuant's formats) with ignore or
//     exclude_modules patterns (Qwen3.5 NVFP4: the experts NVFP4, attention,
//     linear attention and the shared expert bf16).
//
// The KV cache's calibrated format follows kv_cache_scheme or
// kv_cache_quant_algo (applyQuant's rules).
func roleFormats(q *moeQuantConfig, a *Arch) error {
	a.WeightDtype = BF16
	if q == nil {
		return nil
	}
	const where = "config.json field quantization_config"
	kv := quantConfig{QuantMethod: "fp8", KVCacheScheme: q.KVCacheScheme, KVCacheQuantAlgo: q.KVCacheQuantAlgo}
	if err := applyQuant(a, &kv, where); err != nil {
		return err
	}
	a.WeightDtype = BF16
	patterns := append(append([]string(nil), q.ExcludeModules...), q.Ignore...)
	switch {
	case q.QuantAlgo == "MIXED_PRECISION":
		return a.mixedRoleFormats(q, patterns)
	case q.QuantMethod == "compressed-tensors":
		return a.groupRoleFormats(q, patterns, where)
	}
	plain := q.quantConfig
	plain.ExcludeModules, plain.Ignore, plain.KVCacheScheme, plain.KVCacheQuantAlgo = nil, nil, nil, nil
	if err := applyQuant(a, &plain, where); err != nil {
		return err
	}
	a.applyRoleQuant(a.WeightDtype, patterns, qwen3MoEShared)
	return nil
}

// mixedAlgos maps ModelOpt's per-layer quant_algo to the format priced, and
// the note a stand-in needs.
var mixedAlgos = map[string]struct {
	d    Dtype
	note string
}{
	"FP8":         {FP8, ""},
	"MXFP8":       {FP8, "MXFP8 layers priced as fp8 with per-tensor scales (one scale byte per 32 weights left out)"},
	"NVFP4":       {NVFP4, ""},
	"W4A16_NVFP4": {NVFP4, "weight-only NVFP4 layers (W4A16_NVFP4: bf16 activations) priced as NVFP4"},
}

// mixedRoleFormats is roleFormats for ModelOpt's MIXED_PRECISION: a
// module's format is its quantized_layers entry, or its nearest parent's.
func (a *Arch) mixedRoleFormats(q *moeQuantConfig, patterns []string) error {
	var bad string
	notes := map[string]bool{}
	a.applyRoleFormats(NVFP4, qwen3MoEShared, func(names []string) Dtype {
		for _, name := range names {
			for _, p := range patterns {
				if excluded(p, name) {
					return BF16
				}
			}
			for n := name; n != ""; {
				if l, ok := q.QuantizedLayers[n]; ok {
					m, known := mixedAlgos[l.QuantAlgo]
					if !known {
						bad = l.QuantAlgo
						return BF16
					}
					if m.note != "" {
						notes[m.note] = true
					}
					return m.d
				}
				i := strings.LastIndexByte(n, '.')
				if i < 0 {
					break
				}
				n = n[:i]
			}
		}
		return BF16
	})
	if bad != "" {
		return fmt.Errorf("config.json field quantization_config.quantized_layers: quant_algo %q not supported (FP8, MXFP8, NVFP4, W4A16_NVFP4)", bad)
	}
	a.addNotes(notes)
	return nil
}

// groupRoleFormats is roleFormats for compressed-tensors config_groups: a
// module takes the format of the group whose targets name it exactly (or
// by a "re:" pattern), else of a group targeting "Linear", else bf16;
// ignore excludes.
func (a *Arch) groupRoleFormats(q *moeQuantConfig, patterns []string, where string) error {
	if len(q.ConfigGroups) == 0 {
		return fmt.Errorf("%s.config_groups is missing (compressed-tensors)", where)
	}
	groups := make([]string, 0, len(q.ConfigGroups))
	for g := range q.ConfigGroups {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	formats := map[string]Dtype{}
	notes := map[string]bool{}
	for _, g := range groups {
		d, note, err := ctDtype(q.ConfigGroups[g])
		if err != nil {
			return fmt.Errorf("%s.config_groups.%s: %w", where, g, err)
		}
		formats[g] = d
		if note != "" {
			notes[note] = true
		}
	}
	a.applyRoleFormats(formats[groups[0]], qwen3MoEShared, func(names []string) Dtype {
		for _, name := range names {
			for _, p := range patterns {
				if excluded(p, name) {
					return BF16
				}
			}
		}
		linear := Dtype("")
		for _, g := range groups {
			for _, t := range q.ConfigGroups[g].Targets {
				if t == "Linear" {
					linear = formats[g]
					continue
				}
				for _, name := range names {
					if excluded(t, name) {
						return formats[g]
					}
				}
			}
		}
		if linear != "" {
			return linear
		}
		return BF16
	})
	a.addNotes(notes)
	return nil
}

// addNotes appends the set's notes to Approximations, sorted.
func (a *Arch) addNotes(notes map[string]bool) {
	var ns []string
	for n := range notes {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	a.Approximations = append(a.Approximations, ns...)
}

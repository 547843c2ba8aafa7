package model

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// ctGroup is one compressed-tensors config_groups entry: the targets and the
// weight and activation schemes (llm-compressor's QuantizationScheme).
type ctGroup struct {
	Targets []string  `json:"targets"`
	Weights *ctScheme `json:"weights"`
	Inputs  *ctScheme `json:"input_activations"`
}

type ctScheme struct {
	NumBits   int    `json:"num_bits"`
	Type      string `json:"type"`
	Strategy  string `json:"strategy"`
	GroupSize int    `json:"group_size"`
}

// ctDtype is the weight format of a compressed-tensors scheme, as vLLM's
// compressed-tensors config picks its kernels (CompressedTensorsConfig
// _get_scheme_from_parts): 4-bit integer weights without activation
// quantization, W4A16 (Marlin WNA16) → INT4; 8-bit float weights and
// activations → FP8 (FP8Block with strategy "block"); 4-bit float weights
// in groups of 16 with 4-bit float activations → NVFP4; 4-bit float weights
// in groups of 32 without → MXFP4. Anything else is an error naming it.
func ctDtype(g ctGroup) (Dtype, string, error) {
	w, in := g.Weights, g.Inputs
	if w == nil {
		return "", "", fmt.Errorf("a config group has no weights scheme")
	}
	note := ""
	switch {
	case w.NumBits == 4 && w.Type == "int" && in == nil:
		if w.GroupSize != INT4GroupSize {
			note = fmt.Sprintf("int4 weights in groups of %d priced as groups of %d (scale bytes off by %+.1f %%)",
				w.GroupSize, INT4GroupSize, 100*(2.0/float64(max(w.GroupSize, 1))-2.0/INT4GroupSize)/INT4.Bytes())
		}
		return INT4, note, nil
	case w.NumBits == 8 && w.Type == "float" && in != nil && in.NumBits == 8 && in.Type == "float":
		if w.Strategy == "block" {
			return FP8Block, "", nil
		}
		return FP8, "", nil
	case w.NumBits == 4 && w.Type == "float" && w.GroupSize == NVFP4GroupSize && in != nil && in.NumBits == 4:
		return NVFP4, "", nil
	case w.NumBits == 4 && w.Type == "float" && w.GroupSize == MXFP4GroupSize && in == nil:
		return MXFP4, "", nil
	}
	inBits := 0
	if in != nil {
		inBits = in.NumBits
	}
	return "", "", fmt.Errorf("weights of %d-bit %s (group_size %d) with %d-bit activations not supported (W4A16 int, W8A8 fp8, NVFP4, MXFP4)",
		w.NumBits, w.Type, w.GroupSize, inBits)
}

// weightRole is a kind of weight GEMM whose format a checkpoint may set
// apart from the others.
type weightRole int

const (
	roleAttention weightRole = iota
	roleDenseFFN
	roleShared
	roleExperts
	numRoles
)

var roleNames = [numRoles]string{"attention", "dense FFN", "shared experts", "routed experts"}

// mlaModules are an MLA-family decoder layer's weight modules by role, with
// their elements per layer (to weigh a role that is partly excluded), as the
// checkpoints name them after "model.layers.<i>." (vLLM deepseek_v2.py).
func (a *Arch) mlaModules(i int) [numRoles][]struct {
	name  string
	elems int64
} {
	type mod = struct {
		name  string
		elems int64
	}
	var out [numRoles][]mod
	m, h := a.MLA, int64(a.Hidden)
	heads := int64(a.Heads)
	qk := int64(m.NopeDim + m.RopeDim)
	if m.QLoraRank > 0 {
		out[roleAttention] = append(out[roleAttention], mod{"self_attn.q_a_proj", h * int64(m.QLoraRank)},
			mod{"self_attn.q_b_proj", int64(m.QLoraRank) * heads * qk})
	} else {
		out[roleAttention] = append(out[roleAttention], mod{"self_attn.q_proj", h * heads * qk})
	}
	out[roleAttention] = append(out[roleAttention], mod{"self_attn.kv_a_proj_with_mqa", h * int64(m.LatentDim())},
		mod{"self_attn.kv_b_proj", int64(m.KVLoraRank) * heads * int64(m.NopeDim+m.VDim)},
		mod{"self_attn.o_proj", heads * int64(m.VDim) * h})
	if ix := m.Indexer; ix != nil {
		out[roleAttention] = append(out[roleAttention], mod{"self_attn.indexer.wq_b", int64(ix.Heads * ix.HeadDim * max(m.QLoraRank, 1))},
			mod{"self_attn.indexer.wk", h * int64(ix.HeadDim)})
	}
	ffn := func(prefix string, inter int) []mod {
		e := h * int64(inter)
		return []mod{{prefix + "gate_proj", e}, {prefix + "up_proj", e}, {prefix + "down_proj", e}}
	}
	if !a.LayerKinds[i].MoE {
		out[roleDenseFFN] = ffn("mlp.", a.Intermediate)
		return out
	}
	if a.MoE.SharedIntermediate > 0 {
		out[roleShared] = ffn("mlp.shared_experts.", a.MoE.SharedIntermediate)
	}
	out[roleExperts] = ffn("mlp.experts.0.", a.MoE.Intermediate)
	return out
}

// excluded reports whether a quantization exclusion pattern covers a module
// name: a compressed-tensors "re:" pattern (Python re.match: anchored at the
// start), a ModelOpt glob (fnmatch, path.Match here: '*' may cross the dots
// of module names, which hold no '/'), or a module name and its children.
func excluded(p, name string) bool {
	if rx, ok := strings.CutPrefix(p, "re:"); ok {
		re, err := regexp.Compile("^(?:" + rx + ")")
		return err == nil && re.MatchString(name)
	}
	if ok, _ := path.Match(p, name); ok {
		return true
	}
	return name == p || strings.HasPrefix(name, p+".")
}

// applyRoleQuant sets an MLA-family checkpoint's formats, quantized with q
// (every linear layer, lm_head aside) except for the modules the patterns
// exclude, role by role: the attention projections (AttnDtype), the dense
// FFNs and shared experts (WeightDtype: one format, the one most of their
// weights have), the routed experts (MoE.Dtype). A module counts as excluded
// under either name vLLM loads it by ("model.layers.<i>." or, in a
// multimodal checkpoint, "language_model.model.layers.<i>."). A role partly
// excluded (some layers or some of its modules) takes the format of most of
// its weights, and Approximations says so.
func (a *Arch) applyRoleQuant(q Dtype, patterns []string) {
	var quant, plain [numRoles]int64
	for i := 0; i < a.Layers; i++ {
		mods := a.mlaModules(i)
		for r := range mods {
			for _, md := range mods[r] {
				out := false
				for _, prefix := range []string{"model.layers.", "language_model.model.layers."} {
					name := fmt.Sprintf("%s%d.%s", prefix, i, md.name)
					for _, p := range patterns {
						out = out || excluded(p, name)
					}
				}
				if out {
					plain[r] += md.elems
				} else {
					quant[r] += md.elems
				}
			}
		}
	}
	var dt [numRoles]Dtype
	for r := range dt {
		dt[r] = q
		if plain[r] > quant[r] {
			dt[r] = BF16
		}
		if plain[r] > 0 && quant[r] > 0 {
			a.Approximations = append(a.Approximations, fmt.Sprintf(
				"%s: %.0f %% of the weights are %s and %.0f %% bf16 (excluded from quantization); all priced as %s",
				roleNames[r], 100*float64(quant[r])/float64(quant[r]+plain[r]), q,
				100*float64(plain[r])/float64(quant[r]+plain[r]), dt[r]))
		}
	}
	ffn := dt[roleDenseFFN]
	if quant[roleDenseFFN]+plain[roleDenseFFN] < quant[roleShared]+plain[roleShared] {
		ffn = dt[roleShared]
	}
	if dt[roleDenseFFN] != dt[roleShared] && quant[roleDenseFFN]+plain[roleDenseFFN] > 0 && quant[roleShared]+plain[roleShared] > 0 {
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"dense FFNs are %s and shared experts %s; both priced as %s", dt[roleDenseFFN], dt[roleShared], ffn))
	}
	a.WeightDtype, a.AttnDtype, a.MoE.Dtype = ffn, dt[roleAttention], dt[roleExperts]
	if a.AttnDtype == a.WeightDtype {
		a.AttnDtype = ""
	}
	if a.MoE.Dtype == a.WeightDtype {
		a.MoE.Dtype = ""
	}
}

// mlaQuant sets an MLA-family checkpoint's formats from quantization_config
// (nil: bf16; a ModelOpt hf_quant_config.json beside it may still set them,
// Load): compressed-tensors (Kimi-K2.5's int4 experts: one config group for
// every Linear, ctDtype, its ignore list excluding modules by role,
// applyRoleQuant), fp8 with or without weight_block_size (every linear,
// DeepSeek-V3), or ModelOpt FP8 / NVFP4 with exclude_modules (role by
// role). The KV cache's calibrated format follows kv_cache_scheme or
// kv_cache_quant_algo (applyQuant's rules).
func mlaQuant(q *moeQuantConfig, a *Arch) error {
	a.WeightDtype = BF16
	if q == nil {
		return nil
	}
	const where = "config.json field quantization_config"
	if q.QuantMethod != "compressed-tensors" {
		// fp8 and ModelOpt: applyQuant's formats and KV rules, then the
		// exclusions role by role (its own check is for dense decoders)
		plain := q.quantConfig
		patterns := append(append([]string(nil), plain.ExcludeModules...), plain.Ignore...)
		plain.ExcludeModules, plain.Ignore = nil, nil
		if err := applyQuant(a, &plain, where); err != nil {
			return err
		}
		a.applyRoleQuant(a.WeightDtype, patterns)
		return nil
	}
	if len(q.ConfigGroups) == 0 {
		return fmt.Errorf("%s.config_groups is missing (compressed-tensors)", where)
	}
	var dt Dtype
	for name, g := range q.ConfigGroups {
		if len(g.Targets) != 1 || g.Targets[0] != "Linear" {
			return fmt.Errorf("%s.config_groups.%s.targets = %v: only one group for every Linear is supported", where, name, g.Targets)
		}
		d, note, err := ctDtype(g)
		if err != nil {
			return fmt.Errorf("%s.config_groups.%s: %w", where, name, err)
		}
		if dt != "" && d != dt {
			return fmt.Errorf("%s.config_groups: groups of %s and %s: one format for every Linear is supported", where, dt, d)
		}
		dt = d
		if note != "" {
			a.Approximations = append(a.Approximations, note)
		}
	}
	kv := quantConfig{QuantMethod: "fp8", KVCacheScheme: q.KVCacheScheme}
	if err := applyQuant(a, &kv, where); err != nil {
		return err
	}
	a.applyRoleQuant(dt, q.Ignore)
	return nil
}

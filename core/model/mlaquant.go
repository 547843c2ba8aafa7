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

// roleModule is one weight module of a decoder layer, named as the
// checkpoints name it after "model.layers.<i>.", with its elements per
// layer (to weigh a role that is partly excluded).
type roleModule struct {
	name  string
	elems int64
}

// layerPrefixes are the names a decoder layer's modules are loaded under:
// a text model's "model.layers.<i>.", a multimodal checkpoint's
// "language_model.model.layers.<i>." (Kimi-K2.5) or
// "model.language_model.layers.<i>." (Qwen3.5, Qwen3-VL).
var layerPrefixes = [...]string{"model.layers.", "language_model.model.layers.", "model.language_model.layers."}

// eachRoleModule calls f for every weight module of the decoder layers,
// layer by layer: its role, the names it may be loaded under and its
// elements. Nemotron-H's modules are its checkpoint's own
// (nemotronModules); the others' are layerModules under each of
// layerPrefixes.
func (a *Arch) eachRoleModule(sharedPrefix string, f func(r weightRole, names []string, elems int64)) {
	if a.nemotronLayout != nil {
		a.nemotronModules(f)
		return
	}
	for i := 0; i < a.Layers; i++ {
		mods := a.layerModules(i, sharedPrefix)
		for r := range mods {
			for _, md := range mods[r] {
				var names [len(layerPrefixes)]string
				for j, prefix := range layerPrefixes {
					names[j] = fmt.Sprintf("%s%d.%s", prefix, i, md.name)
				}
				f(weightRole(r), names[:], md.elems)
			}
		}
	}
}

// layerModules are decoder layer i's weight modules by role: an MLA
// layer's (vLLM deepseek_v2.py), else a GQA or linear-attention layer's
// (qwen3_next.py and qwen3_5.py names), then its dense FFN, or its shared
// experts (sharedPrefix: "mlp.shared_experts." in the DeepSeek family,
// "mlp.shared_expert." in Qwen's) and one routed expert.
func (a *Arch) layerModules(i int, sharedPrefix string) [numRoles][]roleModule {
	var out [numRoles][]roleModule
	h := int64(a.Hidden)
	k := LayerKind{Attn: AttnFull, MoE: a.MoE != nil} // a uniform decoder (LayerKinds nil)
	if a.LayerKinds != nil {
		k = a.LayerKinds[i]
	}
	switch {
	case k.Attn == AttnLinear && a.Linear.KDA:
		// Kimi-K3's KDA layers keep their projections in self_attn
		for _, g := range a.LinearProjections(1) {
			name := strings.TrimSuffix(g.Name, "_proj") + "_proj"
			out[roleAttention] = append(out[roleAttention], roleModule{"self_attn." + name, int64(g.N) * int64(g.K)})
		}
	case a.MLA != nil:
		out[roleAttention] = a.mlaAttentionModules()
	case k.Attn == AttnLinear:
		l := a.Linear
		qk, v := int64(l.KeyHeads*l.KeyDim), int64(l.ValueHeads*l.ValueDim)
		out[roleAttention] = []roleModule{{"linear_attn.in_proj_qkv", h * (2*qk + v)}, {"linear_attn.in_proj_z", h * v},
			{"linear_attn.in_proj_b", h * int64(l.ValueHeads)}, {"linear_attn.in_proj_a", h * int64(l.ValueHeads)},
			{"linear_attn.out_proj", v * h}}
	default:
		q := int64(a.Heads * a.HeadDim)
		if a.AttnOutputGate {
			q *= 2
		}
		kv := int64(a.KVHeads * a.HeadDim)
		out[roleAttention] = []roleModule{{"self_attn.q_proj", h * q}, {"self_attn.k_proj", h * kv},
			{"self_attn.v_proj", h * kv}, {"self_attn.o_proj", int64(a.Heads*a.HeadDim) * h}}
	}
	names := ffnNames(a.Architecture)
	ffn := func(prefix string, inter int, gate, up, down string) []roleModule {
		e := h * int64(inter)
		return []roleModule{{prefix + gate, e}, {prefix + up, e}, {prefix + down, e}}
	}
	if k.NoFFN {
		return out
	}
	if !k.MoE {
		out[roleDenseFFN] = ffn(names.dense, a.Intermediate, "gate_proj", "up_proj", "down_proj")
		return out
	}
	if names.shared != "" {
		sharedPrefix = names.shared
	}
	if a.MoE.SharedIntermediate > 0 {
		out[roleShared] = ffn(sharedPrefix, a.MoE.SharedIntermediate, "gate_proj", "up_proj", "down_proj")
	}
	out[roleExperts] = ffn(names.expert, a.MoE.Intermediate, names.gate, names.up, names.down)
	return out
}

// ffnModules are the names of a family's FFN weight modules after
// "model.layers.<i>.": the dense FFN's prefix, one routed expert's prefix
// and its gate, up and down projections, the shared expert's prefix ("":
// the caller's).
type ffnModules struct {
	dense, expert, gate, up, down, shared string
}

// ffnNames: Mixtral and MiniMax-M2 keep their experts in block_sparse_moe
// (w1 the gate, w3 up, w2 down: vLLM mixtral.py, minimax_m2.py), Llama-4
// its FFNs in feed_forward (llama4.py: a dense LlamaMLP, the experts, a
// shared_expert), the others in mlp (gate_proj, up_proj, down_proj).
func ffnNames(arch string) ffnModules {
	switch arch {
	case "MixtralForCausalLM", "MiniMaxM2ForCausalLM":
		return ffnModules{"mlp.", "block_sparse_moe.experts.0.", "w1", "w3", "w2", ""}
	case "Llama4ForConditionalGeneration":
		return ffnModules{"feed_forward.", "feed_forward.experts.0.", "gate_proj", "up_proj", "down_proj", "feed_forward.shared_expert."}
	}
	return ffnModules{"mlp.", "mlp.experts.0.", "gate_proj", "up_proj", "down_proj", ""}
}

// mlaAttentionModules are an MLA layer's attention modules (vLLM
// deepseek_v2.py names), with their elements.
func (a *Arch) mlaAttentionModules() []roleModule {
	m, h := a.MLA, int64(a.Hidden)
	heads := int64(a.Heads)
	qk := int64(m.NopeDim + m.RopeDim)
	var out []roleModule
	if m.QLoraRank > 0 {
		out = append(out, roleModule{"self_attn.q_a_proj", h * int64(m.QLoraRank)},
			roleModule{"self_attn.q_b_proj", int64(m.QLoraRank) * heads * qk})
	} else {
		out = append(out, roleModule{"self_attn.q_proj", h * heads * qk})
	}
	out = append(out, roleModule{"self_attn.kv_a_proj_with_mqa", h * int64(m.LatentDim())},
		roleModule{"self_attn.kv_b_proj", int64(m.KVLoraRank) * heads * int64(m.NopeDim+m.VDim)},
		roleModule{"self_attn.o_proj", heads * int64(m.VDim) * h})
	if m.OutputGate {
		out = append(out, roleModule{"self_attn.g_proj", h * heads * int64(m.VDim)})
	}
	if ix := m.Indexer; ix != nil {
		out = append(out, roleModule{"self_attn.indexer.wq_b", int64(ix.Heads * ix.HeadDim * max(m.QLoraRank, 1))},
			roleModule{"self_attn.indexer.wk", h * int64(ix.HeadDim)})
	}
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

// applyRoleQuant sets a checkpoint's formats, quantized with q (every
// linear layer, lm_head aside) except for the modules the patterns
// exclude, role by role (applyRoleFormats).
func (a *Arch) applyRoleQuant(q Dtype, patterns []string, sharedPrefix string) {
	a.applyRoleFormats(q, sharedPrefix, func(names []string) Dtype {
		for _, name := range names {
			for _, p := range patterns {
				if excluded(p, name) {
					return BF16
				}
			}
		}
		return q
	})
}

// applyRoleFormats sets a checkpoint's formats role by role from format,
// which gives a module's weight format from the names it may be loaded
// under (layerPrefixes): the attention projections (AttnDtype), the dense
// FFNs and shared experts (WeightDtype: one format, the one most of their
// weights have), the routed experts (MoE.Dtype). A role whose modules
// differ (some layers or modules excluded) takes the format of most of its
// weights, and Approximations says so; q names the quantized format in
// that note.
func (a *Arch) applyRoleFormats(q Dtype, sharedPrefix string, format func(names []string) Dtype) {
	var elems [numRoles]map[Dtype]int64
	var order [numRoles][]Dtype // formats in the order first met (a deterministic note)
	a.eachRoleModule(sharedPrefix, func(r weightRole, names []string, n int64) {
		d := format(names)
		if elems[r] == nil {
			elems[r] = map[Dtype]int64{}
		}
		if _, seen := elems[r][d]; !seen {
			order[r] = append(order[r], d)
		}
		elems[r][d] += n
	})
	var dt [numRoles]Dtype
	var total [numRoles]int64
	for r := range dt {
		dt[r] = q
		var best int64 = -1
		for _, d := range order[r] {
			total[r] += elems[r][d]
			if elems[r][d] > best {
				dt[r], best = d, elems[r][d]
			}
		}
		if len(order[r]) == 2 && elems[r][q] > 0 && elems[r][BF16] > 0 {
			a.Approximations = append(a.Approximations, fmt.Sprintf(
				"%s: %.0f %% of the weights are %s and %.0f %% bf16 (excluded from quantization); all priced as %s",
				roleNames[r], 100*float64(elems[r][q])/float64(total[r]), q,
				100*float64(elems[r][BF16])/float64(total[r]), dt[r]))
		} else if len(order[r]) > 1 {
			var parts []string
			for _, d := range order[r] {
				parts = append(parts, fmt.Sprintf("%.1f %% %s", 100*float64(elems[r][d])/float64(total[r]), d))
			}
			a.Approximations = append(a.Approximations, fmt.Sprintf("%s: the weights are %s; all priced as %s",
				roleNames[r], strings.Join(parts, ", "), dt[r]))
		}
	}
	ffn := dt[roleDenseFFN]
	if total[roleDenseFFN] < total[roleShared] {
		ffn = dt[roleShared]
	}
	if dt[roleDenseFFN] != dt[roleShared] && total[roleDenseFFN] > 0 && total[roleShared] > 0 {
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"dense FFNs are %s and shared experts %s; both priced as %s", dt[roleDenseFFN], dt[roleShared], ffn))
	}
	a.WeightDtype, a.AttnDtype = ffn, dt[roleAttention]
	if a.AttnDtype == a.WeightDtype {
		a.AttnDtype = ""
	}
	if a.MoE != nil {
		a.MoE.Dtype = dt[roleExperts]
		if a.MoE.Dtype == a.WeightDtype {
			a.MoE.Dtype = ""
		}
	}
}

// deepSeekShared is the DeepSeek family's shared-experts module prefix.
const deepSeekShared = "mlp.shared_experts."

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
		a.applyRoleQuant(a.WeightDtype, patterns, deepSeekShared)
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
	a.applyRoleQuant(dt, q.Ignore, deepSeekShared)
	return nil
}

package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// moeFamilies maps each accepted mixture-of-experts "architectures" value to
// the reader of its config.json fields (families name them differently).
var moeFamilies = map[string]func(c *moeConfig, a *Arch) error{
	"Qwen3MoeForCausalLM":                     readQwenMoE,
	"Qwen2MoeForCausalLM":                     readQwenMoE,
	"MixtralForCausalLM":                      readMixtral,
	"MiniMaxM2ForCausalLM":                    readMiniMaxM2,
	"GptOssForCausalLM":                       readGptOss,
	"MiniMaxM3SparseForCausalLM":              readMiniMaxM3,
	"MiniMaxM3SparseForConditionalGeneration": readMiniMaxM3,
	// the DeepSeek-V2/V3 family (MLA attention; mlaconfig.go)
	"DeepseekV2ForCausalLM":           readDeepSeek,
	"DeepseekV3ForCausalLM":           readDeepSeek,
	"DeepseekV32ForCausalLM":          readDeepSeek,
	"KimiK25ForConditionalGeneration": readDeepSeek,
	"GlmMoeDsaForCausalLM":            readDeepSeek,
	// DeepSeek-V4 (compressed attention; dsv4config.go)
	"DeepseekV4ForCausalLM": readDeepSeekV4,
}

// MoEArchitectures lists the mixture-of-experts "architectures" values that
// Parse accepts, sorted.
func MoEArchitectures() []string {
	var out []string
	for k := range moeFamilies {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// moeConfig is the union of the config.json fields the MoE families use.
// Pointers tell a missing field from zero.
type moeConfig struct {
	hfConfig
	ModelType                string          `json:"model_type"`
	NumExperts               *int            `json:"num_experts"`
	NumLocalExperts          *int            `json:"num_local_experts"`
	NumExpertsPerTok         *int            `json:"num_experts_per_tok"`
	MoEIntermediateSize      *int            `json:"moe_intermediate_size"`
	SharedExpertIntermediate *int            `json:"shared_expert_intermediate_size"`
	SharedIntermediateSize   *int            `json:"shared_intermediate_size"`
	NSharedExperts           *int            `json:"n_shared_experts"`
	DenseIntermediateSize    *int            `json:"dense_intermediate_size"`
	DecoderSparseStep        *int            `json:"decoder_sparse_step"`
	MLPOnlyLayers            *[]int          `json:"mlp_only_layers"`
	MoELayerFreq             *layerFreq      `json:"moe_layer_freq"`
	LayerTypes               *[]string       `json:"layer_types"`
	SlidingWindow            *int            `json:"sliding_window"`
	UseSlidingWindow         *bool           `json:"use_sliding_window"`
	UseQKNorm                *bool           `json:"use_qk_norm"`
	QKNormType               *string         `json:"qk_norm_type"`
	SparseAttention          *sparseConfig   `json:"sparse_attention_config"`
	TextConfig               json.RawMessage `json:"text_config"`
	// the DeepSeek family (readDeepSeek)
	NRoutedExperts     *int `json:"n_routed_experts"`
	FirstKDenseReplace *int `json:"first_k_dense_replace"`
	NGroup             *int `json:"n_group"`
	TopKGroup          *int `json:"topk_group"`
	QLoraRank          *int `json:"q_lora_rank"`
	KVLoraRank         *int `json:"kv_lora_rank"`
	QKNopeHeadDim      *int `json:"qk_nope_head_dim"`
	QKRopeHeadDim      *int `json:"qk_rope_head_dim"`
	VHeadDim           *int `json:"v_head_dim"`
	IndexNHeads        *int `json:"index_n_heads"`
	IndexHeadDim       *int `json:"index_head_dim"`
	IndexTopK          *int `json:"index_topk"`
	// DeepSeek-V4 (readDeepSeekV4)
	OLoraRank       *int    `json:"o_lora_rank"`
	OGroups         *int    `json:"o_groups"`
	HCMult          *int    `json:"hc_mult"`
	HCSinkhornIters *int    `json:"hc_sinkhorn_iters"`
	NumHashLayers   *int    `json:"num_hash_layers"`
	CompressRatios  *[]int  `json:"compress_ratios"`
	ExpertDtype     *string `json:"expert_dtype"`
	// Qwen3-Next and Qwen3.5 (readQwen35)
	LinearNumKeyHeads     *int    `json:"linear_num_key_heads"`
	LinearKeyHeadDim      *int    `json:"linear_key_head_dim"`
	LinearNumValueHeads   *int    `json:"linear_num_value_heads"`
	LinearValueHeadDim    *int    `json:"linear_value_head_dim"`
	LinearConvKernelDim   *int    `json:"linear_conv_kernel_dim"`
	FullAttentionInterval *int    `json:"full_attention_interval"`
	AttnOutputGate        *bool   `json:"attn_output_gate"`
	MambaSSMDtype         *string `json:"mamba_ssm_dtype"`
	MTPNumHiddenLayers    *int    `json:"mtp_num_hidden_layers"`
	// Llama-4 (readLlama4)
	AttentionChunkSize     *int   `json:"attention_chunk_size"`
	InterleaveMoELayerStep *int   `json:"interleave_moe_layer_step"`
	IntermediateSizeMLP    *int   `json:"intermediate_size_mlp"`
	NoRopeLayers           *[]int `json:"no_rope_layers"`
	// Nemotron-H (readNemotronH)
	nemotronHConfig
	// Kimi-K3 (readKimiK3)
	kimiK3Config
	// quantization_config with the fields the MoE checkpoints use beyond
	// quantConfig's (gpt-oss mxfp4, ModelOpt mixed precision).
	Quant *moeQuantConfig `json:"quantization_config"`
}

type sparseConfig struct {
	UseSparseAttention  *bool  `json:"use_sparse_attention"`
	SparseIndexDim      *int   `json:"sparse_index_dim"`
	SparseNumIndexHeads *int   `json:"sparse_num_index_heads"`
	SparseTopKBlocks    *int   `json:"sparse_topk_blocks"`
	SparseBlockSize     *int   `json:"sparse_block_size"`
	SparseInitBlock     *int   `json:"sparse_init_block"`
	SparseLocalBlock    *int   `json:"sparse_local_block"`
	SparseAttentionFreq *[]int `json:"sparse_attention_freq"`
}

type moeQuantConfig struct {
	quantConfig
	QuantizedLayers map[string]struct {
		QuantAlgo string `json:"quant_algo"`
	} `json:"quantized_layers"`
	// compressed-tensors (Kimi-K2.5): one scheme per group of targets
	ConfigGroups map[string]ctGroup `json:"config_groups"`
	// MoEQuantAlgo is DeepSeek-V4's routed experts' format beside an fp8
	// quant_method (ModelOpt's NVFP4 experts: "NVFP4"; dsv4Quant)
	MoEQuantAlgo string `json:"moe_quant_algo"`
}

// parseMoE reads the config.json of a mixture-of-experts model whose first
// "architectures" entry is arch (a key of moeFamilies). A multimodal
// checkpoint (MiniMax-M3) keeps its language model in text_config; only the
// language model is read (the vision tower is left out, and Approximations
// says so). Errors name the model and the config field.
func parseMoE(data []byte, name, arch string) (*Arch, error) {
	var c moeConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("model %s: config.json%w", name, readableJSON(err, ""))
	}
	quant := c.Quant
	prefix := ""
	if len(c.TextConfig) > 0 && string(c.TextConfig) != "null" {
		var t moeConfig
		if err := json.Unmarshal(c.TextConfig, &t); err != nil {
			return nil, fmt.Errorf("model %s: config.json%w", name, readableJSON(err, "text_config."))
		}
		t.Architectures = c.Architectures
		if t.Quant == nil {
			t.Quant = quant
		}
		c, prefix = t, "text_config."
	}
	a := &Arch{Name: name, Architecture: arch, TieEmbeddings: c.TieWordEmbeddings}
	if arch == "NemotronHForCausalLM" {
		nemotronLayerCount(&c)
	}
	if c.HeadDim == nil && c.QKNopeHeadDim != nil && c.QKRopeHeadDim != nil && *c.QKNopeHeadDim > 0 && *c.QKRopeHeadDim > 0 {
		// an MLA model's heads are P + R wide (the MLA readers set it), whatever
		// hidden_size / num_attention_heads is (Kimi-K3: 7168 / 96)
		hd := *c.QKNopeHeadDim + *c.QKRopeHeadDim
		c.HeadDim = &hd
	}
	if err := readCommon(&c.hfConfig, a, prefix, false); err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	read, quantize := moeFamilies[arch], moeQuant
	if f, ok := hybridFamilies[arch]; ok {
		read, quantize = f.read, f.quant
	}
	if err := read(&c, a); err != nil {
		return nil, fmt.Errorf("model %s: config.json field %s%w", name, prefix, err)
	}
	if a.MoE != nil {
		if err := a.validateMoE(); err != nil {
			return nil, fmt.Errorf("model %s: config.json field %s%w", name, prefix, err)
		}
	}
	if a.MLA != nil {
		quantize = mlaQuant
	}
	if a.DSV4 != nil {
		quantize = dsv4Quant
	}
	if err := quantize(c.Quant, a); err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	if prefix != "" {
		a.Approximations = append(a.Approximations,
			"multimodal checkpoint: the language model (text_config) is simulated; the vision tower and its weights are left out")
	}
	return a, nil
}

// readCommon fills the counts every decoder has, fields under prefix
// ("text_config." for a multimodal checkpoint): num_hidden_layers,
// hidden_size, num_attention_heads, intermediate_size (required when
// needIntermediate, else read when present), vocab_size,
// max_position_embeddings (each > 0), then num_key_value_heads (default
// num_attention_heads) and head_dim (default hidden_size /
// num_attention_heads). Errors name the field.
func readCommon(c *hfConfig, a *Arch, prefix string, needIntermediate bool) error {
	type field struct {
		field string
		src   *int
		dst   *int
	}
	fields := []field{
		{"num_hidden_layers", c.NumHiddenLayers, &a.Layers},
		{"hidden_size", c.HiddenSize, &a.Hidden},
		{"num_attention_heads", c.NumAttentionHeads, &a.Heads},
	}
	if needIntermediate || c.IntermediateSize != nil {
		fields = append(fields, field{"intermediate_size", c.IntermediateSize, &a.Intermediate})
	}
	fields = append(fields, field{"vocab_size", c.VocabSize, &a.Vocab},
		field{"max_position_embeddings", c.MaxPositionEmbeddings, &a.MaxPositionEmbeddings})
	for _, f := range fields {
		if f.src == nil {
			return fmt.Errorf("config.json field %s%s is missing", prefix, f.field)
		}
		if *f.src <= 0 {
			return fmt.Errorf("config.json field %s%s = %d, want > 0", prefix, f.field, *f.src)
		}
		*f.dst = *f.src
	}
	if n := c.NumNextnPredictLayers; n != nil {
		if *n < 0 {
			return fmt.Errorf("config.json field %snum_nextn_predict_layers = %d, want ≥ 0", prefix, *n)
		}
		a.MTPLayers = *n
	}
	a.KVHeads = a.Heads
	if c.NumKeyValueHeads != nil {
		if *c.NumKeyValueHeads <= 0 {
			return fmt.Errorf("config.json field %snum_key_value_heads = %d, want > 0", prefix, *c.NumKeyValueHeads)
		}
		a.KVHeads = *c.NumKeyValueHeads
	}
	if c.HeadDim != nil {
		if *c.HeadDim <= 0 {
			return fmt.Errorf("config.json field %shead_dim = %d, want > 0", prefix, *c.HeadDim)
		}
		a.HeadDim = *c.HeadDim
	} else {
		if a.Hidden%a.Heads != 0 {
			return fmt.Errorf("config.json has no %shead_dim and hidden_size = %d is not a multiple of num_attention_heads = %d",
				prefix, a.Hidden, a.Heads)
		}
		a.HeadDim = a.Hidden / a.Heads
	}
	if a.Heads%a.KVHeads != 0 {
		return fmt.Errorf("config.json field %snum_key_value_heads = %d does not divide num_attention_heads = %d",
			prefix, a.KVHeads, a.Heads)
	}
	return nil
}

// need returns *p, or an error naming the field when it is missing or not
// positive ("positive" false: ≥ 0 allowed).
func need(p *int, field string, positive bool) (int, error) {
	if p == nil {
		return 0, fmt.Errorf("%s is missing", field)
	}
	if *p < 0 || (positive && *p == 0) {
		want := "> 0"
		if !positive {
			want = "≥ 0"
		}
		return 0, fmt.Errorf("%s = %d, want %s", field, *p, want)
	}
	return *p, nil
}

// readExperts reads the expert count from expertsField, the top-k from
// num_experts_per_tok and the expert intermediate size from interField
// (readExpertsTopK).
func readExperts(c *moeConfig, a *Arch, experts *int, expertsField string, inter *int, interField string) error {
	return readExpertsTopK(a, experts, expertsField, c.NumExpertsPerTok, "num_experts_per_tok", inter, interField)
}

// readExpertsTopK sets a.MoE's expert count, top-k and expert intermediate
// size from the config.json fields named (each required, > 0), in that
// order: the first missing or bad one is the error.
func readExpertsTopK(a *Arch, experts *int, expertsField string, topK *int, topKField string, inter *int, interField string) error {
	m := &MoE{}
	if err := readFields([]stateField{{experts, expertsField, &m.Experts}, {topK, topKField, &m.TopK},
		{inter, interField, &m.Intermediate}}); err != nil {
		return err
	}
	a.MoE = m
	return nil
}

// readQwenMoE: Qwen3-MoE and Qwen2-MoE. Layer i has a MoE FFN when it is not
// in mlp_only_layers and (i+1) is a multiple of decoder_sparse_step (HF
// Qwen3MoeDecoderLayer); other layers a dense FFN of intermediate_size.
// Qwen2-MoE adds a shared expert of shared_expert_intermediate_size.
func readQwenMoE(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NumExperts, "num_experts", c.MoEIntermediateSize, "moe_intermediate_size"); err != nil {
		return err
	}
	step, err := need(c.DecoderSparseStep, "decoder_sparse_step", true)
	if err != nil {
		return err
	}
	if c.MLPOnlyLayers == nil {
		return fmt.Errorf("mlp_only_layers is missing")
	}
	if c.UseSlidingWindow != nil && *c.UseSlidingWindow {
		return fmt.Errorf("use_sliding_window = true is not supported")
	}
	if a.Architecture == "Qwen2MoeForCausalLM" {
		if a.MoE.SharedIntermediate, err = need(c.SharedExpertIntermediate, "shared_expert_intermediate_size", false); err != nil {
			return err
		}
	} else {
		a.QKNorm = true
	}
	dense := map[int]bool{}
	for _, i := range *c.MLPOnlyLayers {
		if i < 0 || i >= a.Layers {
			return fmt.Errorf("mlp_only_layers has layer %d, outside 0..%d", i, a.Layers-1)
		}
		dense[i] = true
	}
	if step == 1 && len(dense) == 0 {
		return nil // every layer MoE: LayerKinds stays nil
	}
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i := range a.LayerKinds {
		a.LayerKinds[i] = LayerKind{Attn: AttnFull, MoE: !dense[i] && (i+1)%step == 0}
	}
	if a.DenseFFNLayers() > 0 && a.Intermediate == 0 {
		return fmt.Errorf("intermediate_size is missing (needed by the dense FFN layers)")
	}
	return nil
}

// readMixtral: every layer MoE, intermediate_size is the expert's; a
// non-null sliding_window makes every layer sliding-window attention.
func readMixtral(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NumLocalExperts, "num_local_experts", c.IntermediateSize, "intermediate_size"); err != nil {
		return err
	}
	if c.SlidingWindow != nil {
		w, err := need(c.SlidingWindow, "sliding_window", true)
		if err != nil {
			return err
		}
		a.SlidingWindow = w
		a.LayerKinds = make([]LayerKind, a.Layers)
		for i := range a.LayerKinds {
			a.LayerKinds[i] = LayerKind{Attn: AttnSliding, MoE: true}
		}
	}
	return nil
}

// readMiniMaxM2: every layer MoE (num_local_experts, intermediate_size the
// expert's), shared_intermediate_size (0: none), q/k RMSNorm (use_qk_norm).
func readMiniMaxM2(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NumLocalExperts, "num_local_experts", c.IntermediateSize, "intermediate_size"); err != nil {
		return err
	}
	shared, err := need(c.SharedIntermediateSize, "shared_intermediate_size", false)
	if err != nil {
		return err
	}
	a.MoE.SharedIntermediate = shared
	if c.UseQKNorm == nil {
		return fmt.Errorf("use_qk_norm is missing")
	}
	a.QKNorm = *c.UseQKNorm
	// vLLM's MiniMax-M2 normalises q and k over all heads (the only
	// qk_norm_type the family has, per_layer)
	if t := c.QKNormType; t != nil && *t != "per_layer" {
		return fmt.Errorf("qk_norm_type %q is not supported for %s (want per_layer)", *t, a.Architecture)
	}
	a.QKNormAcrossHeads = a.QKNorm
	return nil
}

// readGptOss: every layer MoE (num_local_experts, intermediate_size the
// expert's); layer_types names each layer "sliding_attention" or
// "full_attention", the window is sliding_window; each head has a sink.
func readGptOss(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NumLocalExperts, "num_local_experts", c.IntermediateSize, "intermediate_size"); err != nil {
		return err
	}
	w, err := need(c.SlidingWindow, "sliding_window", true)
	if err != nil {
		return err
	}
	a.SlidingWindow = w
	if c.LayerTypes == nil {
		return fmt.Errorf("layer_types is missing")
	}
	if len(*c.LayerTypes) != a.Layers {
		return fmt.Errorf("layer_types has %d entries, want num_hidden_layers = %d", len(*c.LayerTypes), a.Layers)
	}
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i, t := range *c.LayerTypes {
		switch t {
		case "sliding_attention":
			a.LayerKinds[i] = LayerKind{Attn: AttnSliding, MoE: true}
		case "full_attention":
			a.LayerKinds[i] = LayerKind{Attn: AttnFull, MoE: true}
		default:
			return fmt.Errorf("layer_types[%d] = %q, want sliding_attention or full_attention", i, t)
		}
	}
	a.AttentionSinks = true
	a.Approximations = append(a.Approximations, "attention sinks (one learned logit per head) are not priced")
	return nil
}

// readMiniMaxM3: moe_layer_freq gives each layer's FFN (1: MoE of
// num_local_experts experts of intermediate_size plus n_shared_experts ×
// shared_intermediate_size; 0: dense of dense_intermediate_size);
// sparse_attention_config.sparse_attention_freq each layer's attention (1:
// block-sparse) when use_sparse_attention is true.
func readMiniMaxM3(c *moeConfig, a *Arch) error {
	if err := readExperts(c, a, c.NumLocalExperts, "num_local_experts", c.IntermediateSize, "intermediate_size"); err != nil {
		return err
	}
	shared, err := need(c.SharedIntermediateSize, "shared_intermediate_size", false)
	if err != nil {
		return err
	}
	nShared, err := need(c.NSharedExperts, "n_shared_experts", false)
	if err != nil {
		return err
	}
	a.MoE.SharedIntermediate = shared * nShared
	if a.Intermediate, err = need(c.DenseIntermediateSize, "dense_intermediate_size", true); err != nil {
		return err
	}
	freq, err := layerFlags(c.MoELayerFreq.listFlags(), "moe_layer_freq", a.Layers)
	if err != nil {
		return err
	}
	if c.UseQKNorm == nil {
		return fmt.Errorf("use_qk_norm is missing")
	}
	a.QKNorm = *c.UseQKNorm
	sparse := make([]bool, a.Layers)
	if s := c.SparseAttention; s != nil && s.UseSparseAttention != nil && *s.UseSparseAttention {
		if sparse, err = layerFlags(s.SparseAttentionFreq, "sparse_attention_config.sparse_attention_freq", a.Layers); err != nil {
			return err
		}
		sp := &SparseAttention{}
		for _, f := range []struct {
			dst      *int
			src      *int
			field    string
			positive bool
		}{
			{&sp.IndexHeads, s.SparseNumIndexHeads, "sparse_num_index_heads", true},
			{&sp.IndexDim, s.SparseIndexDim, "sparse_index_dim", true},
			{&sp.TopKBlocks, s.SparseTopKBlocks, "sparse_topk_blocks", true},
			{&sp.BlockSize, s.SparseBlockSize, "sparse_block_size", true},
			{&sp.InitBlocks, s.SparseInitBlock, "sparse_init_block", false},
			{&sp.LocalBlocks, s.SparseLocalBlock, "sparse_local_block", false},
		} {
			if *f.dst, err = need(f.src, "sparse_attention_config."+f.field, f.positive); err != nil {
				return err
			}
		}
		a.Sparse = sp
		a.Approximations = append(a.Approximations, fmt.Sprintf(
			"block-sparse attention priced as dense attention over at most %d keys (%d top blocks + %d initial + %d local blocks of %d tokens), plus an indexer that reads one %d-element key per cached token and scores it with %d query heads",
			sp.KeptTokens(), sp.TopKBlocks, sp.InitBlocks, sp.LocalBlocks, sp.BlockSize, sp.IndexDim, sp.IndexHeads))
	}
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i := range a.LayerKinds {
		k := LayerKind{Attn: AttnFull, MoE: freq[i]}
		if sparse[i] {
			k.Attn = AttnSparse
		}
		a.LayerKinds[i] = k
	}
	return nil
}

// layerFlags reads a per-layer list of 0/1 flags of length layers.
func layerFlags(p *[]int, field string, layers int) ([]bool, error) {
	if p == nil {
		return nil, fmt.Errorf("%s is missing", field)
	}
	if len(*p) != layers {
		return nil, fmt.Errorf("%s has %d entries, want num_hidden_layers = %d", field, len(*p), layers)
	}
	out := make([]bool, layers)
	for i, v := range *p {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("%s[%d] = %d, want 0 or 1", field, i, v)
		}
		out[i] = v == 1
	}
	return out, nil
}

// validateMoE checks what the family readers leave: top-k within the
// experts, and at least one MoE layer.
func (a *Arch) validateMoE() error {
	m := a.MoE
	if m.TopK > m.Experts {
		return fmt.Errorf("num_experts_per_tok = %d exceeds the %d experts", m.TopK, m.Experts)
	}
	if a.MoELayers() == 0 {
		return fmt.Errorf("no layer has a mixture-of-experts FFN")
	}
	return nil
}

// moeQuant sets the weight formats of a MoE checkpoint from
// quantization_config:
//   - none: bf16 everywhere (a ModelOpt hf_quant_config.json beside the file
//     may still set them, see Load);
//   - quant_method "fp8": fp8 (fp8_block with weight_block_size) for every
//     linear layer, experts included (the router stays bf16);
//   - quant_method "mxfp4" (gpt-oss): MXFP4 routed experts, bf16 attention
//     (vLLM's Mxfp4Config quantizes the MoE layers only);
//   - ModelOpt quant_algo "MIXED_PRECISION" with quantized_layers (MiniMax-M3
//     NVFP4): the experts' format from their entries (NVFP4 or FP8), the
//     attention's from the q_proj entries; MXFP8 layers are priced as fp8
//     (per-tensor), a stand-in that Approximations records.
//
// Anything else is an error naming quantization_config.
func moeQuant(q *moeQuantConfig, a *Arch) error {
	if q == nil {
		a.WeightDtype = BF16
		return nil
	}
	switch {
	case q.QuantMethod == "mxfp4":
		a.WeightDtype, a.MoE.Dtype = BF16, MXFP4
		return nil
	case q.QuantAlgo == "MIXED_PRECISION" && (q.QuantMethod == "" || q.QuantMethod == "modelopt"):
		return mixedPrecision(q, a)
	}
	a.WeightDtype = BF16
	if excludesSomeLayerGEMM(&q.quantConfig, a.Layers) {
		// ModelOpt's NVFP4 releases keep attention bf16 (MiniMax-M2.5 and
		// M2.7-NVFP4: every layer's self_attn excluded): role by role
		return roleFormats(q, a)
	}
	return applyQuant(a, &q.quantConfig, "config.json field quantization_config")
}

// excludesSomeLayerGEMM reports whether an exclusion pattern of q leaves a
// decoder layer's weight GEMM unquantized (excludesLayerGEMM).
func excludesSomeLayerGEMM(q *quantConfig, layers int) bool {
	for _, p := range append(append([]string(nil), q.ExcludeModules...), q.Ignore...) {
		if _, ok := excludesLayerGEMM(p, layers); ok {
			return true
		}
	}
	return false
}

// mixedPrecision reads a ModelOpt MIXED_PRECISION quantized_layers map.
func mixedPrecision(q *moeQuantConfig, a *Arch) error {
	algo := func(want func(string) bool) (Dtype, error) {
		seen := map[string]bool{}
		for name, l := range q.QuantizedLayers {
			if want(name) {
				seen[l.QuantAlgo] = true
			}
		}
		if len(seen) == 0 {
			return BF16, nil
		}
		if len(seen) > 1 {
			var algos []string
			for s := range seen {
				algos = append(algos, s)
			}
			sort.Strings(algos)
			return "", fmt.Errorf("config.json field quantization_config.quantized_layers mixes %s in one kind of layer", strings.Join(algos, ", "))
		}
		for s := range seen {
			switch s {
			case "NVFP4":
				return NVFP4, nil
			case "FP8":
				return FP8, nil
			case "MXFP8":
				return FP8, nil
			}
			return "", fmt.Errorf("config.json field quantization_config.quantized_layers: quant_algo %q not supported (NVFP4, FP8, MXFP8)", s)
		}
		return BF16, nil
	}
	experts, err := algo(func(n string) bool { return strings.Contains(n, ".experts.") && !strings.Contains(n, "shared_experts") })
	if err != nil {
		return err
	}
	attn, err := algo(func(n string) bool { return strings.HasSuffix(n, "self_attn.q_proj") })
	if err != nil {
		return err
	}
	a.WeightDtype, a.MoE.Dtype = attn, experts
	for _, l := range q.QuantizedLayers {
		if l.QuantAlgo == "MXFP8" {
			a.Approximations = append(a.Approximations,
				"MXFP8 layers (attention, shared experts, dense FFNs) are priced as fp8 with per-tensor scales (one scale byte per 32 weights left out)")
			break
		}
	}
	return nil
}

package model

// MoE is the mixture-of-experts FFN of a model (Arch.MoE; nil for a dense
// decoder). Counts are per MoE layer and per model (not per GPU).
type MoE struct {
	// Experts is the number of routed experts E (num_experts /
	// num_local_experts).
	Experts int
	// TopK is the number of routed experts k each token goes to
	// (num_experts_per_tok).
	TopK int
	// Intermediate is one routed expert's intermediate size I_e, elements
	// (moe_intermediate_size, or intermediate_size in families whose
	// intermediate_size is the expert's).
	Intermediate int
	// SharedIntermediate is the intermediate size of the shared experts that
	// every token also goes through, all of them together, elements
	// (shared_intermediate_size × n_shared_experts,
	// shared_expert_intermediate_size); 0 when there are none.
	SharedIntermediate int
	// Dtype is the routed experts' weight format when it differs from
	// Arch.WeightDtype (gpt-oss: MXFP4 experts, bf16 attention); "" means
	// Arch.WeightDtype (see Arch.ExpertDtype).
	Dtype Dtype
	// Groups and TopKGroups are n_group and topk_group (DeepSeek-V3's
	// grouped routing: a token's experts come from its TopKGroups best of
	// Groups groups); 0 when the config has none. Each expert is still in a
	// token's top-k with probability k/E under uniform routing, so the
	// expected distinct experts (perf.ExpectedDistinctExperts) do not change.
	Groups, TopKGroups int
	// Latent is the width the routed experts work in when it is not the
	// hidden size, elements (moe_latent_size: Nemotron-3 Super and Ultra);
	// 0 means Arch.Hidden. A MoE layer then projects each token down to it
	// before dispatch (fc1_latent_proj, h → Latent) and back after combine
	// (fc2_latent_proj, Latent → h), both replicated on every rank, as
	// vLLM's nemotron_h.py NemotronHMoE builds them (the routed input and
	// output transforms of its fused MoE layer); the router and the shared
	// experts read the full hidden state.
	Latent int
}

// ExpertHidden is the width of the routed experts' input and output
// (h_e), elements: MoE.Latent when set, else Hidden. The expert GEMMs, the
// expert-parallel dispatch and combine and the experts' activations are
// this wide.
func (a *Arch) ExpertHidden() int {
	if a.MoE != nil && a.MoE.Latent > 0 {
		return a.MoE.Latent
	}
	return a.Hidden
}

// LatentProjections are one MoE layer's projections into and out of the
// experts' latent space (MoE.Latent), replicated (not split by TP):
// fc1_latent_proj N = h_e, K = h and fc2_latent_proj N = h, K = h_e; nil
// for experts of the hidden width.
func (a *Arch) LatentProjections() []GEMMShape {
	if a.MoE == nil || a.MoE.Latent <= 0 {
		return nil
	}
	l := a.MoE.Latent
	return []GEMMShape{{"fc1_latent_proj", l, a.Hidden}, {"fc2_latent_proj", a.Hidden, l}}
}

// latentWeights is the elements of one MoE layer's latent projections
// (2·h·h_e; 0 without latent experts).
func (a *Arch) latentWeights() int64 {
	var n int64
	for _, g := range a.LatentProjections() {
		n += int64(g.N) * int64(g.K)
	}
	return n
}

// AttnKind is the attention of one decoder layer.
type AttnKind uint8

// Attention kinds.
const (
	// AttnFull attends to the whole context (causal).
	AttnFull AttnKind = iota
	// AttnSliding attends to the last Arch.SlidingWindow tokens only
	// (gpt-oss "sliding_attention" layers); its KV cache holds the window.
	AttnSliding
	// AttnSparse is block-sparse attention (MiniMax-M3): an indexer scores
	// every cached block and the layer attends to Arch.Sparse.KeptTokens()
	// tokens at most; its KV cache holds the whole context plus the
	// indexer's keys.
	AttnSparse
	// AttnMLA is multi-head latent attention (Arch.MLA: DeepSeek, Kimi,
	// GLM-5), dense or, with an indexer, DeepSeek Sparse Attention; its KV
	// cache holds one latent per token.
	AttnMLA
	// AttnLinear is Gated DeltaNet linear attention (Arch.Linear: Qwen3-Next,
	// Qwen3.5, Qwen3.6 "linear_attention" layers): no KV cache, a constant
	// recurrent state per request (Arch.StateBytesPerSequence).
	AttnLinear
	// AttnChunked is chunked local attention (Llama-4's RoPE layers): a query
	// attends to the keys of its own chunk of Arch.AttentionChunk tokens
	// only. vLLM caches the whole context for it by default (the hybrid KV
	// cache manager is off for chunked local attention unless
	// VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE is set), so its KV
	// counts as a full layer's (FullKVLayers).
	AttnChunked
	// AttnCSA, AttnHCA and AttnSWA are DeepSeek-V4's layers (Arch.DSV4) of
	// compress ratio 4 (compressed sparse attention: an indexer picks the
	// compressed entries each query attends to), 128 (heavily compressed
	// attention: every compressed entry) and 0 (the sliding window alone);
	// each also attends to its last Arch.SlidingWindow tokens.
	AttnCSA
	AttnHCA
	AttnSWA
)

// String is "full", "sliding", "sparse", "mla", "linear", "chunked", "csa",
// "hca" or "swa".
func (k AttnKind) String() string {
	switch k {
	case AttnSliding:
		return "sliding"
	case AttnSparse:
		return "sparse"
	case AttnMLA:
		return "mla"
	case AttnLinear:
		return "linear"
	case AttnChunked:
		return "chunked"
	case AttnCSA:
		return "csa"
	case AttnHCA:
		return "hca"
	case AttnSWA:
		return "swa"
	}
	return "full"
}

// LayerKind is the attention and FFN of one decoder layer.
type LayerKind struct {
	Attn AttnKind
	// MoE is true for a mixture-of-experts FFN, false for a dense SwiGLU FFN
	// of Arch.Intermediate.
	MoE bool
	// NoFFN is true for a layer that is its mixer alone, without an FFN
	// (MoE false): Nemotron-H's Mamba-2 and attention layers, whose FFNs
	// are layers of their own (nemotronhconfig.go).
	NoFFN bool
}

// SparseAttention is MiniMax-M3's block-sparse attention
// (text_config.sparse_attention_config). A lightweight indexer (IndexHeads
// query heads of IndexDim against one IndexDim key per token) scores the
// cached blocks of BlockSize tokens; the layer then attends to the TopKBlocks
// best blocks plus InitBlocks at the start and LocalBlocks at the end.
type SparseAttention struct {
	IndexHeads, IndexDim    int
	TopKBlocks, BlockSize   int
	InitBlocks, LocalBlocks int
}

// KeptTokens is the most keys one query attends to in a sparse layer:
// (TopKBlocks + InitBlocks + LocalBlocks) × BlockSize tokens.
func (s *SparseAttention) KeptTokens() int {
	return (s.TopKBlocks + s.InitBlocks + s.LocalBlocks) * s.BlockSize
}

// LayerGroup is a run of Count decoder layers of the same kind (not
// necessarily adjacent: pricing does not depend on the order).
type LayerGroup struct {
	Kind  LayerKind
	Count int
}

// Groups returns the model's layers grouped by kind, in the fixed order
// full, sliding, sparse, MLA, linear, chunked, CSA, HCA, SWA attention and, within each,
// dense before MoE FFN before none;
// kinds without layers are left out. A dense decoder (LayerKinds nil and
// MoE nil) is one group of Layers full-attention dense layers. The slice is
// new on every call.
func (a *Arch) Groups() []LayerGroup {
	if a.LayerKinds == nil {
		return []LayerGroup{{Kind: LayerKind{Attn: AttnFull, MoE: a.MoE != nil}, Count: a.Layers}}
	}
	var out []LayerGroup
	for _, attn := range []AttnKind{AttnFull, AttnSliding, AttnSparse, AttnMLA, AttnLinear, AttnChunked, AttnCSA, AttnHCA, AttnSWA} {
		for _, ffn := range []LayerKind{{}, {MoE: true}, {NoFFN: true}} {
			k := LayerKind{Attn: attn, MoE: ffn.MoE, NoFFN: ffn.NoFFN}
			n := 0
			for _, l := range a.LayerKinds {
				if l == k {
					n++
				}
			}
			if n > 0 {
				out = append(out, LayerGroup{Kind: k, Count: n})
			}
		}
	}
	return out
}

// FFNIntermediate is the intermediate size of a layer's dense GEMM FFN,
// elements: Intermediate for a dense-FFN layer, the shared experts'
// SharedIntermediate for a MoE layer (0: the MoE layer has only routed
// experts), 0 for a layer without FFN.
func (a *Arch) FFNIntermediate(k LayerKind) int {
	if k.NoFFN {
		return 0
	}
	if !k.MoE {
		return a.Intermediate
	}
	if a.MoE == nil {
		return 0
	}
	return a.MoE.SharedIntermediate
}

// IsMoE reports whether the model has mixture-of-experts layers.
func (a *Arch) IsMoE() bool { return a.MoE != nil }

// Hybrid reports whether the model needs the per-layer-kind pricing: a MoE
// model, or one with sliding-window or sparse attention layers. A plain
// dense decoder is not hybrid and is priced exactly as before MoE support.
func (a *Arch) Hybrid() bool { return a.MoE != nil || a.LayerKinds != nil }

// AttentionDtype is the attention projections' weight format: AttnDtype
// when set, else WeightDtype.
func (a *Arch) AttentionDtype() Dtype {
	if a.AttnDtype != "" {
		return a.AttnDtype
	}
	return a.WeightDtype
}

// ExpertDtype is the routed experts' weight format: MoE.Dtype when set,
// else WeightDtype ("" for a dense model).
func (a *Arch) ExpertDtype() Dtype {
	if a.MoE == nil {
		return ""
	}
	if a.MoE.Dtype != "" {
		return a.MoE.Dtype
	}
	return a.WeightDtype
}

// countLayers is the number of layers whose kind satisfies f.
func (a *Arch) countLayers(f func(LayerKind) bool) int {
	if a.LayerKinds == nil {
		if f(LayerKind{Attn: AttnFull, MoE: a.MoE != nil}) {
			return a.Layers
		}
		return 0
	}
	n := 0
	for _, l := range a.LayerKinds {
		if f(l) {
			n++
		}
	}
	return n
}

// MoELayers is the number of layers with a mixture-of-experts FFN.
func (a *Arch) MoELayers() int { return a.countLayers(func(l LayerKind) bool { return l.MoE }) }

// DenseFFNLayers is the number of layers with a dense FFN.
func (a *Arch) DenseFFNLayers() int {
	return a.countLayers(func(l LayerKind) bool { return !l.MoE && !l.NoFFN })
}

// FullKVLayers is the number of layers whose KV cache grows with the whole
// context (full, sparse and MLA attention). Sliding-window layers hold only
// their window (SlidingKVBytesPerSequence), linear-attention layers a
// constant state (StateBytesPerSequence).
func (a *Arch) FullKVLayers() int {
	return a.countLayers(func(l LayerKind) bool { return l.Attn != AttnSliding && l.Attn != AttnLinear })
}

// LinearLayers is the number of linear-attention (Gated DeltaNet) layers.
func (a *Arch) LinearLayers() int {
	return a.countLayers(func(l LayerKind) bool { return l.Attn == AttnLinear })
}

// SlidingLayers is the number of sliding-window attention layers.
func (a *Arch) SlidingLayers() int {
	return a.countLayers(func(l LayerKind) bool { return l.Attn == AttnSliding })
}

// ChunkedLayers is the number of chunked local-attention layers.
func (a *Arch) ChunkedLayers() int {
	return a.countLayers(func(l LayerKind) bool { return l.Attn == AttnChunked })
}

// SparseLayers is the number of block-sparse attention layers.
func (a *Arch) SparseLayers() int {
	return a.countLayers(func(l LayerKind) bool { return l.Attn == AttnSparse })
}

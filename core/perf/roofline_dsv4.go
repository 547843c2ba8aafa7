package perf

import (
	"math"

	"github.com/aisimulate/aisimulate/core/model"
)

// DSV4Core is the roofline of the attention core of one DeepSeek-V4 layer on
// one GPU (model.CompressedAttention; docs/moe.md, "DeepSeek-V4"): what
// vLLM's DeepseekV4Attention runs between its projections — multi-query
// attention of the H = heads/t query heads over one d-wide key/value head,
// each query reading the last W tokens (the window) and the compressed
// entries of its kind, and in a CSA layer the indexer's scores. A query at
// position i attends to
//
//	min(i, W) + c(i),   c(i) = min(i/4, K) (CSA), i/128 (HCA), 0 (window only)
//
// keys (K = index_topk; i/r taken continuous), 4·H·d FLOPs a key (scores
// and values over the same d-wide entry, bf16 math). The cache entries are
// E bytes (model.Arch.DSV4EntryBytes). The CSA indexer scores every
// compressed entry i/4 with IH heads of ID (2·IH·ID FLOPs each, at the fp8
// rate) and reads their I-byte entries. The perf sources share it: the
// roofline prices DeepSeek-V4 layers with it, aic bounds the measured
// modules by it.
type DSV4Core struct {
	h, d, window, ratio, topK float64
	ixHeads, ixDim            float64
	entry, ixEntry            float64
	flops, ixFlops, memBW     float64
}

// NewDSV4Core is the core of a layer of kind k (model.AttnCSA, AttnHCA or
// AttnSWA) of arch at TP tp, with a KV cache of kvBytes per element, priced
// at flops (attention, bf16), ixFlops (the indexer) and memBW.
func NewDSV4Core(arch *model.Arch, k model.AttnKind, tp int, kvBytes, flops, ixFlops, memBW float64) *DSV4Core {
	c := arch.DSV4
	return &DSV4Core{h: float64(arch.Heads / tp), d: float64(arch.HeadDim), window: float64(c.Window),
		ratio: float64(model.CompressRatio(k)), topK: float64(c.Indexer.TopK),
		ixHeads: float64(c.Indexer.Heads), ixDim: float64(c.Indexer.HeadDim),
		entry: arch.DSV4EntryBytes(kvBytes), ixEntry: c.IndexerEntryBytes(),
		flops: flops, ixFlops: ixFlops, memBW: memBW}
}

// csa reports whether the core is a ratio-4 layer's (an indexer, top-k).
func (c *DSV4Core) csa() bool { return c.ratio == 4 }

// compressed is c(i), the compressed entries a query at position i reads.
func (c *DSV4Core) compressed(i float64) float64 {
	switch {
	case c.ratio == 0:
		return 0
	case c.csa():
		return math.Min(i/c.ratio, c.topK)
	}
	return i / c.ratio
}

// compressedPairs is ∫ₚˢ c(i) di: the compressed keys of the queries p..S
// (continuous), c(i) = i/r up to r·K and K beyond for CSA.
func (c *DSV4Core) compressedPairs(p, S float64) float64 {
	if c.ratio == 0 {
		return 0
	}
	F := func(x float64) float64 {
		if c.csa() && x > c.ratio*c.topK {
			return c.ratio*c.topK*c.topK/2 + c.topK*(x-c.ratio*c.topK)
		}
		return x * x / (2 * c.ratio)
	}
	return F(S) - F(p)
}

// ContextSeconds is one prefill chunk of n new tokens after p cached ones
// (S = n + p):
//
//	attention  F = 4·H·d·(WindowPairs(n, p, W) + ∫ₚˢ c),  B = E·(min(S, W + n) + c(S)) + 4·H·d·n
//	indexer    F = 2·IH·ID·(S² − p²)/8,                   B = I·S/4          (CSA)
//
// B: the window's and the chunk's entries and the compressed ones read
// once, the queries and outputs in bf16; the indexer reads every compressed
// entry once.
func (c *DSV4Core) ContextSeconds(n, p float64) float64 {
	if n <= 0 {
		return 0
	}
	S := n + p
	pairs := WindowPairs(n, p, c.window) + c.compressedPairs(p, S)
	t := opSeconds(4*c.h*c.d*pairs, c.entry*(math.Min(S, c.window+n)+c.compressed(S))+4*c.h*c.d*n, c.flops, c.memBW)
	if c.csa() {
		t += opSeconds(2*c.ixHeads*c.ixDim*(S*S-p*p)/(2*c.ratio), c.ixEntry*S/c.ratio, c.ixFlops, c.memBW)
	}
	return t
}

// GenerationSeconds is D decodes, win = Σ min(kv+1, W) the window keys they
// read, all = Σ (kv+1) their lengths and kept = Σ min(kv+1, 4K) (CSA: the
// lengths whose compressed entries a query keeps, ≤ K each):
//
//	attention  keys = win + comp,  F = 4·H·d·keys,  B = E·keys + 4·H·d·D
//	indexer    F = 2·IH·ID·all/4,  B = I·all/4                      (CSA)
//
// comp = kept/4 (CSA), all/128 (HCA), 0 (window only).
func (c *DSV4Core) GenerationSeconds(D, win, all, kept float64) float64 {
	if D <= 0 {
		return 0
	}
	var comp float64
	switch {
	case c.csa():
		comp = kept / c.ratio
	case c.ratio > 0:
		comp = all / c.ratio
	}
	keys := win + comp
	t := opSeconds(4*c.h*c.d*keys, c.entry*keys+4*c.h*c.d*D, c.flops, c.memBW)
	if c.csa() {
		t += opSeconds(2*c.ixHeads*c.ixDim*all/c.ratio, c.ixEntry*all/c.ratio, c.ixFlops, c.memBW)
	}
	return t
}

// KeptLengthWindow is the decode window whose Σ min(kv+1, w) a CSA layer
// reads (GenerationSeconds' kept): 4·index_topk tokens.
func KeptLengthWindow(arch *model.Arch) int { return 4 * arch.DSV4.Indexer.TopK }

// AddDSV4Windows appends a DeepSeek-V4 model's two decode windows to windows
// (AddWindow): the sliding window every layer reads (sliding_window) and
// the CSA layers' kept length (KeptLengthWindow), in that order; it returns
// their indices. The roofline and the AIC model both price the cores from
// these sums.
func AddDSV4Windows(windows *[]int, arch *model.Arch) (win, kept int) {
	win = AddWindow(windows, arch.DSV4.Window)
	kept = AddWindow(windows, KeptLengthWindow(arch))
	return win, kept
}

// MHCBytesPerToken is the memory the manifold-constrained hyper-connections
// of one DeepSeek-V4 layer move for one token (both sites, before and after
// the attention and the FFN; vLLM's mhc_pre and mhc_post kernels), bf16:
//
//	pre   reads the hc streams (hc·h) and writes the sublayer's input (h)
//	post  reads the sublayer's output (h) and the streams (hc·h), writes the streams (hc·h)
//	B = 2 sites · 2 bytes · (3·hc·h + 2·h)
//
// The mixing weights ((2+hc)·hc × hc·h per site) and the Sinkhorn
// iterations on the hc × hc matrix are a few hundred kFLOP a token, left
// out. Flash (h 4,096, hc 4): 4·(49,152 + 8,192) = 229,376 bytes.
func MHCBytesPerToken(arch *model.Arch) float64 {
	h, hc := float64(arch.Hidden), float64(arch.DSV4.HCMult)
	return 2 * 2 * (3*hc*h + 2*h)
}

// Window is the layer's sliding window, tokens.
func (c *DSV4Core) Window() float64 { return c.window }

// KeptLength is the length up to which a CSA query's compressed entries
// all fit its top-k (4·index_topk; 0 for the other kinds).
func (c *DSV4Core) KeptLength() float64 {
	if c.csa() {
		return c.ratio * c.topK
	}
	return 0
}

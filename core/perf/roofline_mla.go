package perf

import (
	"math"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// MLACore is the roofline of the attention core of one multi-head latent
// attention layer on one GPU (model.MLA; docs/moe.md, "MLA"): what vLLM's
// MLAAttention runs between the projections, the prefill up-projection and
// attention or the decode's absorbed batched GEMMs and latent attention
// (ContextSeconds, GenerationSeconds). H = heads/t query heads; P, R, V,
// Lkv the nope, rope, value and latent widths, elements. The perf sources
// share it: the roofline prices MLA layers with it, and aic scales measured
// MLA modules by it where the tables measured another shape.
type MLACore struct {
	h, p, r, v, lkv float64
	// latentBytes is one token's cache entry in one layer, bytes
	// (model.MLA.LatentBytes at the KV dtype)
	latentBytes float64
	// kvb is kv_b_proj (N = H·(P+V), K = Lkv) at the attention weights'
	// format: prefill up-projects the new tokens and the cached context
	kvb    gemmConst
	aBytes float64 // bytes per attention weight
	// DSA: the indexer's heads and width, its cache entry (bytes) and the
	// keys a query keeps; sparse is false for dense MLA
	sparse                  bool
	ixHeads, ixDim, ixBytes float64
	topK                    float64
	// rates: the attention weights' format, bf16 and fp8 FLOP/s, HBM B/s
	flopsW, flopsBF16, flopsFP8, memBW float64
}

// MLARates are the rates an MLACore prices at: FLOP/s of the attention
// weights' format (the prefill up-projection), of bf16 (attention and the
// absorbed GEMMs) and of fp8 (the DSA indexer's scores), and HBM B/s.
type MLARates struct {
	WeightFlops, BF16Flops, FP8Flops, MemBW float64
}

// MLAOutputGateBytes is the memory one token's MLA output gate moves on
// one GPU at TP tp (model.MLA.OutputGate): its sigmoid multiply reads the
// attention output and the gate and writes the product, bf16 (H/t)·V each:
//
//	B = 3 · 2 bytes · (H/t)·V
func MLAOutputGateBytes(arch *model.Arch, tp int) float64 {
	return 6 * float64(arch.Heads/tp*arch.MLA.VDim)
}

// SystemMLARates are a system's peak rates for attention weights of format
// ad, each scaled by compute (FLOP/s) or memory (B/s) efficiency.
func SystemMLARates(sys *hardware.System, ad model.Dtype, compute, memory float64) MLARates {
	return MLARates{WeightFlops: sys.Flops(ad) * compute, BF16Flops: sys.BF16Flops * compute,
		FP8Flops: sys.Flops(model.FP8) * compute, MemBW: sys.MemBW * memory}
}

// NewMLACore is the core of an MLA layer m with heads query heads on the
// GPU, a KV cache of kvBytes per element (2 bf16, 1 fp8), attention weights
// of ad, priced at rt.
func NewMLACore(m *model.MLA, heads int, kvBytes float64, ad model.Dtype, rt MLARates) *MLACore {
	c := &MLACore{h: float64(heads), p: float64(m.NopeDim), r: float64(m.RopeDim), v: float64(m.VDim),
		lkv: float64(m.KVLoraRank), latentBytes: m.LatentBytes(kvBytes), aBytes: ad.Bytes(),
		flopsW: rt.WeightFlops, flopsBF16: rt.BF16Flops, flopsFP8: rt.FP8Flops, memBW: rt.MemBW}
	n := float64(heads * (m.NopeDim + m.VDim))
	c.kvb = gemmConst{n: n, k: c.lkv, nk: n * c.lkv}
	if ix := m.Indexer; ix != nil {
		c.sparse = true
		c.ixHeads, c.ixDim, c.topK = float64(ix.Heads), float64(ix.HeadDim), float64(ix.TopK)
		c.ixBytes = float64(m.IndexerBytes())
	}
	return c
}

// Sparse reports whether the core is DeepSeek Sparse Attention's.
func (c *MLACore) Sparse() bool { return c.sparse }

// TopK is the keys a DSA query keeps (0 for dense MLA).
func (c *MLACore) TopK() float64 { return c.topK }

// mlaRoof is the roofline source's MLA layer: its core and its per-token
// projections and memory-bound ops.
type mlaRoof struct {
	*MLACore
	projections        []gemmConst
	memBytesPerToken   float64 // norms, rope and the cache write of one token
	decodeWindowKeptAt int     // index of TopK in DecodeWindows (DSA)
}

// newMLARoof builds the constants of arch's MLA layers at TP tp, kv bytes
// per cache element kvBytes (2 bf16, 1 fp8), attention weights ad.
func newMLARoof(arch *model.Arch, sys *hardware.System, tp int, ad model.Dtype, kvBytes float64, prm RooflineParams) *mlaRoof {
	m := arch.MLA
	h := float64(arch.Hidden)
	mr := &mlaRoof{MLACore: NewMLACore(m, arch.Heads/tp, kvBytes, ad,
		SystemMLARates(sys, ad, prm.ComputeEfficiency, prm.MemoryEfficiency))}
	for _, g := range arch.MLAProjections(tp) {
		mr.projections = append(mr.projections, gemmConstOf(g))
	}
	// per token: two RMSNorm+residual (8h bytes each), the q_a and kv_a
	// RMSNorms (read and write, bf16), rotary embedding of q_pe and k_pe
	// (read and write), the latent written to the cache (read bf16, write
	// at the cache's format)
	mr.memBytesPerToken = 2*8*h + 4*float64(m.QLoraRank+m.KVLoraRank) + 4*(mr.h+1)*mr.r +
		2*float64(m.LatentDim()) + mr.latentBytes
	return mr
}

// ContextSeconds prices one prefill chunk of sNew new tokens after p cached
// ones (S = p + sNew) in one MLA layer on one GPU. Dense MLA, vLLM's
// compute-friendly path (forward_mha, vllm/model_executor/layers/attention/
// mla_attention.py): kv_b_proj up-projects the latent of every key, new and
// cached, then multi-head attention with query/key heads of P + R and value
// heads of V:
//
//	up    = GEMM(m = S, N = H·(P+V), K = Lkv)              (at the attention weights' format)
//	pairs = Σ_{i=p+1..S} i                                  (causal)
//	F     = 2·pairs·H·(P+R) + 2·pairs·H·V
//	B     = 2·S·H·(P+R+V) + 2·sNew·H·(P+R+V)                (K, V read; Q in, O out, bf16)
//
// DSA (sparse): the data-movement path for every token, as vLLM's sparse
// MLA backends run prefill (FlashMLA sparse): W_UK absorbed into the queries
// (a batched GEMM per head, bf16), multi-query attention over the latent of
// the at most TopK keys each query keeps, W_UV out, plus the indexer scoring
// every cached key for every new query (fp8):
//
//	uk  = (F = 2·sNew·H·P·Lkv,  B = 2·H·P·Lkv + 2·sNew·H·(P + Lkv))
//	mqa = (F = 2·pairs_K·H·(2·Lkv + R),  B = min(S, K + sNew)·b_lat + 2·sNew·H·(2·Lkv + R))
//	uv  = (F = 2·sNew·H·Lkv·V,  B = 2·H·Lkv·V + 2·sNew·H·(Lkv + V))
//	idx = (F = 2·IH·ID·pairs,  B = (S + sNew)·b_idx + 8·pairs)   (keys read and written; fp32 scores)
//
// pairs_K = WindowPairs(sNew, p, K), b_lat and b_idx the cache entries'
// bytes (model.MLA LatentBytes, IndexerBytes). Each term is its own
// kernel: max(F / P, B / W) each, summed.
func (mr *MLACore) ContextSeconds(sNew, p float64) float64 {
	S := p + sNew
	if !mr.sparse {
		up := gemmSeconds(S, mr.kvb, mr.aBytes, mr.flopsW, mr.memBW)
		pairs := WindowPairs(sNew, p, 0)
		w := mr.p + mr.r + mr.v
		return up + opSeconds(2*pairs*mr.h*w, 2*S*mr.h*w+2*sNew*mr.h*w, mr.flopsBF16, mr.memBW)
	}
	pairs := WindowPairs(sNew, p, 0)
	kept := WindowPairs(sNew, p, mr.topK)
	return mr.absorbedSeconds(sNew, kept, math.Min(S, mr.topK+sNew)) +
		opSeconds(2*mr.ixHeads*mr.ixDim*pairs, (S+sNew)*mr.ixBytes+8*pairs, mr.flopsFP8, mr.memBW)
}

// absorbedSeconds is the data-movement path for q queries attending to
// pairs (query, key) pairs in all that read keys distinct keys of the
// latent cache: W_UK, MQA over the latent, W_UV (see ContextSeconds).
func (mr *MLACore) absorbedSeconds(q, pairs, keys float64) float64 {
	uk := opSeconds(2*q*mr.h*mr.p*mr.lkv, 2*mr.h*mr.p*mr.lkv+2*q*mr.h*(mr.p+mr.lkv), mr.flopsBF16, mr.memBW)
	mqa := opSeconds(2*pairs*mr.h*(2*mr.lkv+mr.r), keys*mr.latentBytes+2*q*mr.h*(2*mr.lkv+mr.r), mr.flopsBF16, mr.memBW)
	uv := opSeconds(2*q*mr.h*mr.lkv*mr.v, 2*mr.h*mr.lkv*mr.v+2*q*mr.h*(mr.lkv+mr.v), mr.flopsBF16, mr.memBW)
	return uk + mqa + uv
}

// GenerationSeconds prices the decode batch in one MLA layer on one GPU: D
// requests whose keys, the token being computed included, sum to ctx =
// kvSum + D, of which each keeps min(kv+1, TopK) under DSA (kept, the sum).
// vLLM decodes with the absorbed weights (forward_mqa): W_UK per head,
// multi-query attention over the latent cache, W_UV (absorbedSeconds with
// q = D, pairs = keys = ctx, or kept under DSA), and under DSA the indexer
// over every cached key (F = 2·IH·ID·ctx, B = ctx·b_idx + 8·ctx).
func (mr *MLACore) GenerationSeconds(D, kvSum, kept float64) float64 {
	if D <= 0 {
		return 0
	}
	ctx := kvSum + D
	if !mr.sparse {
		return mr.absorbedSeconds(D, ctx, ctx)
	}
	return mr.absorbedSeconds(D, kept, kept) + opSeconds(2*mr.ixHeads*mr.ixDim*ctx, ctx*mr.ixBytes+8*ctx, mr.flopsFP8, mr.memBW)
}

// projectionSeconds is the MLA layer's per-token projections over x tokens
// (model.Arch.MLAProjections), at the attention weights' format.
func (mr *mlaRoof) projectionSeconds(x float64) float64 {
	var s float64
	for _, g := range mr.projections {
		s += gemmSeconds(x, g, mr.aBytes, mr.flopsW, mr.memBW)
	}
	return s
}

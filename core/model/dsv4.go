package model

import (
	"fmt"
	"math"
)

// CompressedAttention is DeepSeek-V4's attention (Arch.DSV4), as vLLM's
// vllm/models/deepseek_v4/attention.py DeepseekV4Attention builds it: one
// shared key/value head of head_dim (Arch.HeadDim, its last RopeDim
// elements rotary) that every query head reads (multi-query), queries
// through a low rank (fused_wqa_wkv: h → q_lora_rank + head_dim, replicated;
// wq_b: q_lora_rank → H·head_dim, column parallel), a grouped output LoRA
// (wo_a: each of o_groups groups of H/o_groups heads projected to
// o_lora_rank, a batched GEMM over the rank's o_groups/t groups; wo_b:
// o_groups·o_lora_rank → h, row parallel) and a learned sink per head.
// Every layer attends to its last Window tokens (the SWA cache); a layer of
// compress ratio r > 0 also attends to a compressed cache of one entry per
// r tokens made by a compressor (fused_wkv_wgate: h → 2·c·head_dim, bf16,
// replicated; c = 2 for r = 4, whose windows overlap, else 1): r = 4 is
// compressed sparse attention (CSA: an indexer picks the Indexer.TopK best
// compressed entries per query), r = 128 heavily compressed attention (HCA:
// every compressed entry). Dimensions in elements.
type CompressedAttention struct {
	// QLoraRank is q_lora_rank.
	QLoraRank int
	// OLoraRank and OGroups are o_lora_rank and o_groups.
	OLoraRank, OGroups int
	// RopeDim is qk_rope_head_dim.
	RopeDim int
	// Window is sliding_window, tokens.
	Window int
	// Indexer is the CSA layers' indexer (index_n_heads, index_head_dim,
	// index_topk; DeepseekV4Indexer): its query projection (wq_b:
	// q_lora_rank → heads·head_dim, replicated), per-head weights
	// (weights_proj: h → heads, bf16) and its own ratio-4 compressor of
	// head_dim keys.
	Indexer MLAIndexer
	// HCMult and SinkhornIters are hc_mult and hc_sinkhorn_iters: the
	// manifold-constrained hyper-connections keep hc_mult residual streams
	// of h, mixed before and after each attention and FFN (the mHC pre and
	// post kernels, vllm/model_executor/layers/mhc.py).
	HCMult, SinkhornIters int
	// HashLayers is num_hash_layers: the first layers' MoE picks its experts
	// from a table by token id (tid2eid) instead of the router's scores.
	HashLayers int
	// Ratios is compress_ratios of the decoder layers (0, 4 or 128 each).
	Ratios []int

	// expertDtype is config.json's expert_dtype ("fp4", "fp8" or "" when
	// absent), read by dsv4Quant.
	expertDtype string
}

// DSV4 compress ratios and the kinds of their layers.
const (
	dsv4CSARatio = 4
	dsv4HCARatio = 128
)

// dsv4Kind is the attention kind of a layer of compress ratio r.
func dsv4Kind(r int) AttnKind {
	switch r {
	case dsv4CSARatio:
		return AttnCSA
	case dsv4HCARatio:
		return AttnHCA
	}
	return AttnSWA
}

// CompressRatio is the compress ratio of a DeepSeek-V4 layer kind: 4 (CSA),
// 128 (HCA), 0 (the sliding window alone).
func CompressRatio(k AttnKind) int {
	switch k {
	case AttnCSA:
		return dsv4CSARatio
	case AttnHCA:
		return dsv4HCARatio
	}
	return 0
}

// compressorWidth is c·head_dim, the compressor's kv (and score) width at
// ratio r: c = 2 for the overlapping ratio-4 windows, else 1
// (DeepseekCompressor: coff = 1 + (compress_ratio == 4)).
func compressorWidth(r, headDim int) int {
	if r == dsv4CSARatio {
		return 2 * headDim
	}
	return headDim
}

// DSV4Projections returns the weight GEMMs of one DeepSeek-V4 layer of kind
// k on one GPU at tensor parallelism t (H heads, g = o_groups, d = head_dim),
// at the attention weights' format:
//
//	fused_wqa_wkv  N = q_lora + d,        K = h            (replicated)
//	wq_b           N = (H/t)·d,           K = q_lora       (column parallel)
//	wo_a           N = (g/t)·o_lora,      K = H·d/g        (the rank's groups)
//	wo_b           N = h,                 K = (g/t)·o_lora (row parallel)
//	index_wq_b     N = IH·ID,             K = q_lora       (CSA; replicated)
//
// wo_a is a batched GEMM of g/t groups, each (o_lora × H·d/g); it is priced
// as one GEMM of the same FLOPs and weights. The compressors and the
// indexer's weights_proj are bf16 (DSV4BF16Projections).
func (a *Arch) DSV4Projections(tp int, k AttnKind) []GEMMShape {
	c := a.DSV4
	d, h := a.HeadDim, a.Hidden
	lg := c.OGroups / tp
	out := []GEMMShape{
		{"fused_wqa_wkv", c.QLoraRank + d, h},
		{"wq_b", a.Heads / tp * d, c.QLoraRank},
		{"wo_a", lg * c.OLoraRank, a.Heads * d / c.OGroups},
		{"wo_b", h, lg * c.OLoraRank},
	}
	if k == AttnCSA {
		out = append(out, GEMMShape{"index_wq_b", c.Indexer.Heads * c.Indexer.HeadDim, c.QLoraRank})
	}
	return out
}

// DSV4BF16Projections returns the bf16 GEMMs of one DeepSeek-V4 layer of
// kind k, replicated on every GPU (built without the quantization config):
// the compressor's fused_wkv_wgate (N = 2·c·d, K = h) in CSA and HCA layers
// and, in CSA layers, the indexer's weights_proj (N = IH, K = h) and its
// compressor (N = 2·2·ID, K = h); nil for a sliding-window-only layer.
func (a *Arch) DSV4BF16Projections(k AttnKind) []GEMMShape {
	r := CompressRatio(k)
	if r == 0 {
		return nil
	}
	c, h := a.DSV4, a.Hidden
	out := []GEMMShape{{"compressor", 2 * compressorWidth(r, a.HeadDim), h}}
	if k == AttnCSA {
		out = append(out, GEMMShape{"index_weights_proj", c.Indexer.Heads, h},
			GEMMShape{"index_compressor", 2 * compressorWidth(r, c.Indexer.HeadDim), h})
	}
	return out
}

// gemmElems is Σ N·K of shapes.
func gemmElems(shapes []GEMMShape) int64 {
	var n int64
	for _, g := range shapes {
		n += int64(g.N) * int64(g.K)
	}
	return n
}

// dsv4FP8Entry is one token's entry in vLLM's fp8_ds_mla cache of
// DeepSeek-V4 (MLAAttentionSpec.real_page_size_bytes, model_version
// "deepseek_v4"): 448 fp8 rope-less elements, the 64 rotary ones in bf16
// and 8 bytes of UE8M0 scales, 584 bytes.
const dsv4FP8Entry = 584

// DSV4EntryBytes is one cached token (or compressed entry) of head_dim d
// at kvBytes per element: the fp8_ds_mla layout's 584 bytes for an fp8
// cache (vLLM's FlashMLA backends), d·b_kv otherwise.
func (a *Arch) DSV4EntryBytes(kvBytes float64) float64 {
	if kvBytes == 1 {
		return dsv4FP8Entry
	}
	return float64(a.HeadDim) * kvBytes
}

// IndexerEntryBytes is one compressed entry of the CSA indexer's cache:
// index_head_dim fp8 elements and an fp32 scale per 128 (MLA.IndexerBytes;
// DeepseekV4Indexer allocates the same for its fp4 cache), bytes.
func (c *CompressedAttention) IndexerEntryBytes() float64 {
	ix := c.Indexer
	return float64((&MLA{Indexer: &ix}).IndexerBytes())
}

// dsv4SWABlock is the SWA cache's block, tokens (DeepseekV4SWACache:
// block_size 64, to share pages with the ratio-4 layers' blocks).
const dsv4SWABlock = 64

// dsv4StateBytes is one token of a compressor's decode state: kv and score
// states of c·head_dim fp32 each (CompressorStateCache state_dim 2·c·d).
func dsv4StateBytes(r, headDim int) int { return 2 * compressorWidth(r, headDim) * 4 }

// dsv4StateTokens is a compressor state cache's window plus its block,
// tokens (CompressorStateCache: sliding_window c·r, block 4 for r = 4 and 8
// for r = 128).
func dsv4StateTokens(r int) int {
	if r == dsv4CSARatio {
		return 2*r + 4
	}
	return r + 8
}

// dsv4KVBytesPerToken is KVBytesPerToken of DeepSeek-V4: on every GPU (one
// KV head, replicated), the caches that grow with the context,
//
//	⌈ L_csa · (E + I) / 4  +  L_hca · E / 128 ⌉
//
// E the entry (DSV4EntryBytes: 584 bytes at fp8, head_dim·b_kv otherwise), I the
// indexer's entry (IndexerBytes: 132 bytes for index_head_dim 128 in fp8 with
// its scales; vLLM allocates the same with the fp4 indexer cache). The
// sliding windows and the compressors' states are per sequence
// (dsv4WindowBytesPerSequence). DeepSeek-V4-Flash in fp8: 21 CSA layers ·
// (584 + 132) / 4 + 20 HCA layers · 584 / 128 = 3,759 + 91.25 → 3,851 bytes.
func (a *Arch) dsv4KVBytesPerToken(kvBytes float64) int64 {
	e := a.DSV4EntryBytes(kvBytes)
	b := float64(a.countLayers(func(l LayerKind) bool { return l.Attn == AttnCSA }))*(e+a.DSV4.IndexerEntryBytes())/dsv4CSARatio +
		float64(a.countLayers(func(l LayerKind) bool { return l.Attn == AttnHCA }))*e/dsv4HCARatio
	return int64(math.Ceil(b))
}

// dsv4WindowBytesPerSequence is the DeepSeek-V4 cache one running sequence
// holds whatever its length, on every GPU, bytes:
//
//	L · (W + 64) · E                          SWA cache of every layer
//	+ L_csa · 12 · 16·(d + ID)                 ratio-4 compressor states
//	+ L_hca · 136 · 8·d                        ratio-128 compressor states
//
// W the window, 64 the SWA block (vLLM keeps the blocks covering the last W
// tokens and the edge block, as SlidingKVBytesPerSequence), E as
// dsv4KVBytesPerToken; a compressor's state is its kv and score of c·d fp32
// each (dsv4StateBytes: 16·d bytes a token at ratio 4, 8·d at 128) over its
// window and block (dsv4StateTokens: 8 + 4 and 128 + 8 tokens), the CSA
// layers' indexer compressor's likewise at ID. DeepSeek-V4-Flash in fp8:
// 43·192·584 + 21·12·(8,192 + 2,048) + 20·136·4,096 = 4,821,504 + 2,580,480
// + 11,141,120 = 18,543,104 bytes.
func (a *Arch) dsv4WindowBytesPerSequence(kvBytes float64) int64 {
	c := a.DSV4
	b := float64(a.Layers*(c.Window+dsv4SWABlock)) * a.DSV4EntryBytes(kvBytes)
	for _, g := range a.Groups() {
		r := CompressRatio(g.Kind.Attn)
		if r == 0 {
			continue
		}
		s := dsv4StateTokens(r) * dsv4StateBytes(r, a.HeadDim)
		if r == dsv4CSARatio {
			s += dsv4StateTokens(r) * dsv4StateBytes(r, c.Indexer.HeadDim)
		}
		b += float64(g.Count * s)
	}
	return int64(b)
}

// validate checks DeepSeek-V4's dimensions (the fields named as in
// config.json) and that tensor parallelism t splits the output groups
// (vLLM's n_local_groups = o_groups // t; 0 skips that check).
func (c *CompressedAttention) validate(heads, tp int) error {
	for _, f := range []struct {
		field string
		v     int
	}{{"q_lora_rank", c.QLoraRank}, {"o_lora_rank", c.OLoraRank}, {"o_groups", c.OGroups},
		{"qk_rope_head_dim", c.RopeDim}, {"index_n_heads", c.Indexer.Heads}, {"index_head_dim", c.Indexer.HeadDim},
		{"hc_mult", c.HCMult}} {
		if f.v < 1 || f.v > maxMLADim {
			return fmt.Errorf("%s = %d, out of range 1..%d", f.field, f.v, maxMLADim)
		}
	}
	if c.Window < 1 || c.Window > MaxContextTokens {
		return fmt.Errorf("sliding_window = %d, out of range 1..%d", c.Window, MaxContextTokens)
	}
	if c.Indexer.TopK < 1 || c.Indexer.TopK > MaxContextTokens {
		return fmt.Errorf("index_topk = %d, out of range 1..%d", c.Indexer.TopK, MaxContextTokens)
	}
	if heads%c.OGroups != 0 {
		return fmt.Errorf("o_groups = %d does not divide num_attention_heads = %d", c.OGroups, heads)
	}
	if tp > 0 && c.OGroups%tp != 0 {
		return fmt.Errorf("tensor parallel size %d does not divide o_groups = %d (vLLM splits the output groups over the ranks)", tp, c.OGroups)
	}
	return nil
}

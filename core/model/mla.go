package model

import "fmt"

// MLA is multi-head latent attention (DeepSeek-V2/V3/R1, Kimi-K2, GLM-5;
// Arch.MLA): each token's keys and values are cached as one latent vector
// of KVLoraRank elements plus one rotary key of RopeDim elements, shared by
// every head (vLLM MLAAttention: num_kv_heads 1, head_size KVLoraRank +
// RopeDim; vllm/model_executor/layers/attention/mla_attention.py), and the
// heads' keys and values are the latent up-projected per head (kv_b_proj:
// W_UK and W_UV). Prefill runs that up-projection and multi-head attention
// over the heads' P+R-wide keys; decode absorbs W_UK into the query and
// W_UV into the output (two batched GEMMs per head) and attends in the
// latent space, multi-query style. Dimensions in elements.
type MLA struct {
	// QLoraRank is q_lora_rank: the query is projected to this rank and up
	// again (q_a_proj, q_b_proj); 0 when the config has none (q_proj from
	// the hidden state, DeepSeek-V2-Lite).
	QLoraRank int
	// KVLoraRank is kv_lora_rank (Lkv), the latent the cache holds.
	KVLoraRank int
	// NopeDim is qk_nope_head_dim (P): the part of a query/key head without
	// rotary embedding.
	NopeDim int
	// RopeDim is qk_rope_head_dim (R): the rotary part, one key per token
	// shared by every head.
	RopeDim int
	// VDim is v_head_dim (V).
	VDim int
	// Indexer is DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2
	// and GLM-5: index_n_heads, index_head_dim, index_topk): every query
	// scores every cached token and attends to the TopK best; nil for dense
	// MLA.
	Indexer *MLAIndexer
	// OutputGate is true when the attention output is gated per head before
	// o_proj (Kimi-K3's mla_use_output_gate: g_proj, h → H·V, and a sigmoid
	// multiply).
	OutputGate bool
}

// MLAIndexer is DSA's indexer (vLLM deepseek_v2.py Indexer): Heads query
// heads of HeadDim against one HeadDim key per cached token, kept in an fp8
// cache with one fp32 scale per 128 elements; a query attends to the TopK
// tokens it scores highest.
type MLAIndexer struct {
	Heads, HeadDim, TopK int
}

// LatentDim is KVLoraRank + RopeDim: the elements cached per token and
// layer (576 for DeepSeek-V3).
func (m *MLA) LatentDim() int { return m.KVLoraRank + m.RopeDim }

// fp8QuantBlock is the block of elements that share one fp32 scale in
// vLLM's fp8 MLA-sparse and indexer caches (DeepSeek's fp8_ds_mla format and
// DeepseekV32IndexerCache: "value in fp8 and scale in fp32 per
// quant_block_size element", quant_block_size 128).
const fp8QuantBlock = 128

// LatentBytes is the bytes of one token's latent in one MLA layer's
// cache at kvBytes per element (2 bf16, 1 fp8): (Lkv + R) · b_kv. With DSA
// and an fp8 cache vLLM's FlashMLA sparse backend stores DeepSeek's
// fp8_ds_mla format instead: the latent in fp8 with an fp32 scale per 128
// elements and the rotary key in bf16, Lkv + 4·Lkv/128 + 2·R (656 bytes for
// DeepSeek-V3.2: "512B quantized NoPE + 16B scales + 128B RoPE").
func (m *MLA) LatentBytes(kvBytes float64) float64 {
	if m.Indexer != nil && kvBytes == 1 {
		return float64(m.KVLoraRank + 4*m.KVLoraRank/fp8QuantBlock + 2*m.RopeDim)
	}
	return float64(m.LatentDim()) * kvBytes
}

// IndexerBytes is the indexer cache of one token in one DSA layer:
// HeadDim fp8 elements and an fp32 scale per 128 (132 bytes for index_head_dim
// 128; vLLM DeepseekV32IndexerCache, head_dim + head_dim // 128 · 4), at any
// KV cache dtype; 0 without an indexer.
func (m *MLA) IndexerBytes() int {
	if m.Indexer == nil {
		return 0
	}
	d := m.Indexer.HeadDim
	return d + 4*((d+fp8QuantBlock-1)/fp8QuantBlock)
}

// mlaKVBytesPerToken is KVBytesPerToken of an MLA model: on every GPU (the
// latent is not split across TP ranks: one KV head, replicated)
//
//	L · LatentBytes(b_kv) + L · IndexerBytes
//
// L the MLA layers (FullKVLayers: every layer of DeepSeek, Kimi-K3's
// full_attn_layers beside its KDA layers). DeepSeek-V3 in bf16: 61 · 576 · 2
// = 70,272 bytes.
func (a *Arch) mlaKVBytesPerToken(kvBytes float64) int64 {
	m, l := a.MLA, a.FullKVLayers()
	return int64(float64(l)*m.LatentBytes(kvBytes)) + int64(l*m.IndexerBytes())
}

// MLAProjections returns the weight GEMMs of one MLA layer on one GPU that
// run over every token of a pass (N output, K input features), under tensor
// parallelism t with H heads:
//
//	fused_qkv_a  N = q_lora + Lkv + R, K = h      (replicated; with q_lora)
//	q_b          N = (H/t)·(P+R),      K = q_lora (column parallel)
//	q_proj       N = (H/t)·(P+R),      K = h      (without q_lora)
//	kv_a         N = Lkv + R,          K = h      (without q_lora; replicated)
//	o_proj       N = h,                K = (H/t)·V (row parallel)
//	g_proj       N = (H/t)·V,          K = h      (column parallel; with OutputGate)
//
// and for DSA the indexer's, replicated (vLLM's Indexer builds them
// ReplicatedLinear): index_q N = IH·ID, K = q_lora (h without q_lora), and
// index_kw N = ID + IH, K = h (the key projection and the per-head weights,
// fused as vLLM's wk_weights_proj). kv_b_proj (N = (H/t)·(P+V), K = Lkv) is
// not among them: it runs on the prefill tokens and the cached context
// (MLAUpProjection), and decode uses it absorbed. Source:
// vllm/model_executor/layers/mla.py (MultiHeadLatentAttentionWrapper.forward)
// and vllm/model_executor/models/deepseek_v2.py.
func (a *Arch) MLAProjections(tp int) []GEMMShape {
	m := a.MLA
	h, hl := a.Hidden, a.Heads/tp
	var out []GEMMShape
	qIn := h
	if m.QLoraRank > 0 {
		qIn = m.QLoraRank
		out = append(out, GEMMShape{"fused_qkv_a", m.QLoraRank + m.LatentDim(), h},
			GEMMShape{"q_b", hl * (m.NopeDim + m.RopeDim), m.QLoraRank})
	} else {
		out = append(out, GEMMShape{"q_proj", hl * (m.NopeDim + m.RopeDim), h},
			GEMMShape{"kv_a", m.LatentDim(), h})
	}
	out = append(out, GEMMShape{"o_proj", h, hl * m.VDim})
	if m.OutputGate {
		out = append(out, GEMMShape{"g_proj", hl * m.VDim, h})
	}
	if ix := m.Indexer; ix != nil {
		out = append(out, GEMMShape{"index_q", ix.Heads * ix.HeadDim, qIn},
			GEMMShape{"index_kw", ix.HeadDim + ix.Heads, h})
	}
	return out
}

// MLAUpProjection is kv_b_proj on one GPU: N = (H/t)·(P+V) output features
// (every head's nope key and value) from K = Lkv (the latent).
func (a *Arch) MLAUpProjection(tp int) GEMMShape {
	m := a.MLA
	return GEMMShape{"kv_b", a.Heads / tp * (m.NopeDim + m.VDim), m.KVLoraRank}
}

// mlaAttentionWeights is the attention weights of one MLA layer on one GPU,
// elements: MLAProjections' N·K and kv_b's.
func (a *Arch) mlaAttentionWeights(tp int) int64 {
	var w int64
	for _, g := range a.MLAProjections(tp) {
		w += int64(g.N) * int64(g.K)
	}
	kvb := a.MLAUpProjection(tp)
	return w + int64(kvb.N)*int64(kvb.K)
}

// validateMLA checks the MLA dimensions: each positive (q_lora_rank ≥ 0),
// within the bounds of a head_dim, and the indexer's when present.
func (m *MLA) validate() error {
	for _, f := range []struct {
		field string
		v     int
		min   int
	}{{"q_lora_rank", m.QLoraRank, 0}, {"kv_lora_rank", m.KVLoraRank, 1}, {"qk_nope_head_dim", m.NopeDim, 1},
		{"qk_rope_head_dim", m.RopeDim, 1}, {"v_head_dim", m.VDim, 1}} {
		if f.v < f.min || f.v > maxMLADim {
			return fmt.Errorf("%s = %d, out of range %d..%d", f.field, f.v, f.min, maxMLADim)
		}
	}
	if ix := m.Indexer; ix != nil {
		for _, f := range []struct {
			field string
			v     int
		}{{"index_n_heads", ix.Heads}, {"index_head_dim", ix.HeadDim}, {"index_topk", ix.TopK}} {
			if f.v < 1 || f.v > MaxContextTokens {
				return fmt.Errorf("%s = %d, out of range 1..%d", f.field, f.v, MaxContextTokens)
			}
		}
		if ix.HeadDim > maxMLADim || ix.Heads > 4096 {
			return fmt.Errorf("index_n_heads = %d, index_head_dim = %d: out of range (≤ 4096 each)", ix.Heads, ix.HeadDim)
		}
	}
	return nil
}

// maxMLADim bounds an MLA rank or head dimension (DeepSeek-V3: 1,536 at most;
// the head_dim bound of Limits).
const maxMLADim = 1 << 14

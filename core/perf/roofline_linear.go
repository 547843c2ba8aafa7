package perf

import "github.com/aisimulate/aisimulate/core/model"

// GDNChunk is the chunk length of the chunked gated delta rule (the FLA and
// FlashInfer kernels vLLM and SGLang run: chunk_gated_delta_rule, 64).
const GDNChunk = 64

// GDNCore is the roofline of the kernels of one Gated DeltaNet layer on one
// GPU between its projections (model.LinearAttention; docs/moe.md, "Linear
// attention"): the causal convolution (causal_conv1d_fn over a prefill
// chunk, causal_conv1d_update for a decode) and the gated delta rule
// (chunk_gated_delta_rule for prefill, the fused recurrent kernel for
// decode), as vLLM's GatedDeltaNetAttention runs them. Per GPU: Hk = H_k/t
// key heads and H = H_v/t value heads of d_k, d_v; C = (2·Hk·d_k + H·d_v)
// conv channels, K taps; b_s bytes per recurrent state element. For n
// tokens of s sequences, each kernel costs max(F / P, B / W):
//
//	conv   F = 2·K·C·n          B = 4·C·n + 4·(K−1)·C·s
//	       (read the inputs, write the outputs, bf16; read and write each
//	       sequence's conv state)
//	rule   F = n·H·(6·d_k·d_v + 2·c·(d_k + d_v))   (prefill, chunk c = 64:
//	       the output q·S and the state update kᵀ(v − k·S), 2·d_k·d_v
//	       each, plus the intra-chunk attention of the WY form)
//	       F = n·H·6·d_k·d_v                        (decode: no chunks)
//	       B = 2·n·(2·Hk·d_k + 2·H·d_v) + 2·s·H·d_k·d_v·b_s
//	       (q, k, v in and o out, bf16; each sequence's state read and
//	       written once)
//
// A Kimi Delta Attention layer (model.LinearAttention.KDA: H_k = H heads
// of d_k = d_v = d, C = 3·H·d) is priced with the same formulas: its decay
// gate is one factor per key channel instead of one per head, which scales
// the state's d_k rows by different factors at the same d_k·d_v multiplies
// (inside the 6·d_k·d_v) and reads the gate, one fp32 per key channel and
// token (fused_kda_gate's output, vllm/model_executor/layers/fla/ops/kda.py):
//
//	rule   B += 4·n·Hk·d_k
//
// P the bf16 tensor-core rate, W the HBM bandwidth. The perf sources share
// it: the roofline prices linear-attention layers with it, and aic falls
// back to it where the gdn_perf tables have no rows for the model.
//
// A Mamba-2 mixer (model.LinearAttention.Mamba2: G = H_k groups of N = d_k
// state, H heads of P = d_v) has the same convolution, bytes and decode
// (the state update dA·S + dt·B·xᵀ and the output C·S), and in prefill the
// SSD chunked scan of chunk Q (mamba_chunk_scan_combined, Q = chunk_size):
//
//	rule   F = n·(H·(4·N·P + 2·Q·P) + G·2·Q·N)
//	       (the chunk states Bᵀx and the output from them C·S, 2·N·P each
//	       per head; within a chunk C·Bᵀ per group and its product with x
//	       per head)
type GDNCore struct {
	hk, h, dk, dv, c, k, stateBytes float64
	mamba2, kda                     bool
	chunk                           float64
	flops, memBW                    float64
}

// NewGDNCore is the core of linear attention l at tensor parallelism tp,
// priced at flops (bf16 FLOP/s) and memBW (B/s), efficiencies included.
func NewGDNCore(l *model.LinearAttention, tp int, flops, memBW float64) *GDNCore {
	return &GDNCore{hk: float64(l.KeyHeads / tp), h: float64(l.ValueHeads / tp), dk: float64(l.KeyDim), dv: float64(l.ValueDim),
		c: float64(l.ConvChannels(tp)), k: float64(l.ConvKernel), stateBytes: l.StateBytes,
		mamba2: l.Mamba2, kda: l.KDA, chunk: float64(l.Chunk), flops: flops, memBW: memBW}
}

// ConvSeconds is the causal convolution of n tokens of s sequences.
func (g *GDNCore) ConvSeconds(n, s float64) float64 {
	if n <= 0 {
		return 0
	}
	return opSeconds(2*g.k*g.c*n, 4*g.c*n+4*(g.k-1)*g.c*s, g.flops, g.memBW)
}

// RuleSeconds is the gated delta rule over n tokens of s sequences: the
// chunked kernel when prefill is true, the recurrent one otherwise.
func (g *GDNCore) RuleSeconds(n, s float64, prefill bool) float64 {
	if n <= 0 {
		return 0
	}
	perHead := 6 * g.dk * g.dv
	switch {
	case prefill && g.mamba2:
		perHead = 4*g.dk*g.dv + 2*g.chunk*g.dv + 2*g.chunk*g.dk*g.hk/g.h
	case prefill:
		perHead += 2 * GDNChunk * (g.dk + g.dv)
	}
	bytes := 2*n*(2*g.hk*g.dk+2*g.h*g.dv) + 2*s*g.h*g.dk*g.dv*g.stateBytes
	if g.kda {
		bytes += 4 * n * g.hk * g.dk
	}
	return opSeconds(n*g.h*perHead, bytes, g.flops, g.memBW)
}

// ContextSeconds is the layer's kernels for prefill chunks of n new tokens
// in all, s chunks (the cached prefix does not enter: the state carries it).
func (g *GDNCore) ContextSeconds(n, s float64) float64 {
	return g.ConvSeconds(n, s) + g.RuleSeconds(n, s, true)
}

// GenerationSeconds is the layer's kernels for d decodes.
func (g *GDNCore) GenerationSeconds(d float64) float64 {
	return g.ConvSeconds(d, d) + g.RuleSeconds(d, d, false)
}

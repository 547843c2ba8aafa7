package model

import "fmt"

// MaxTP is the largest tensor-parallel degree accepted by Validate, the
// largest node a system may declare (hardware.MaxGPUsPerNode); a
// deployment's limit is its system's node (node.num_gpus_per_node, checked
// where the system is known: core/replay/build.go).
const MaxTP = 1024

// MaxWorkerGPUs bounds a layout's TP × DP GPUs (one vLLM server, possibly
// over several nodes); the spec's bound is the same (config.MaxWorkerGPUs).
const MaxWorkerGPUs = 1024

// Arch is the architecture of a decoder-only LLM, as read from config.json:
// a dense decoder, or a mixture-of-experts model (MoE set) whose layers may
// mix attention kinds (LayerKinds set). All counts are per model (not per
// GPU).
type Arch struct {
	// Name is the model name or path the architecture was loaded as.
	Name string
	// Architecture is the first entry of config.json "architectures",
	// for example "Qwen3ForCausalLM".
	Architecture string
	// Layers is num_hidden_layers (L).
	Layers int
	// Hidden is hidden_size (h), elements.
	Hidden int
	// Heads is num_attention_heads (n).
	Heads int
	// KVHeads is num_key_value_heads (kv); defaults to Heads.
	KVHeads int
	// HeadDim is head_dim (d), elements; defaults to Hidden/Heads.
	HeadDim int
	// Intermediate is intermediate_size (I), elements.
	Intermediate int
	// Vocab is vocab_size (V), tokens.
	Vocab int
	// MaxPositionEmbeddings is max_position_embeddings, tokens.
	MaxPositionEmbeddings int
	// QKNorm is true when the attention applies RMSNorm to q and k per head
	// (Qwen3).
	QKNorm bool
	// QKNormAcrossHeads (with QKNorm): q and k are each normalised over the
	// whole projection, all heads together (MiniMax-M2's qk_norm_type
	// per_layer), so at TP > 1 the per-token variances are summed across
	// the GPUs: vLLM runs a variance kernel, one all-reduce of two fp32 per
	// token and a normalising kernel (MiniMaxText01RMSNormTP, q and k in one
	// all-reduce since vLLM pull request 31493, December 2025).
	QKNormAcrossHeads bool
	// TieEmbeddings is tie_word_embeddings: the logits GEMM reuses the
	// embedding matrix.
	TieEmbeddings bool
	// MTPLayers is the checkpoint's multi-token-prediction layers
	// (num_nextn_predict_layers; Qwen3-Next's and Qwen3.5's
	// mtp_num_hidden_layers): not part of the model's pass, they serve
	// speculative decoding only (0: none).
	MTPLayers int
	// WeightDtype is the checkpoint's GEMM weight format: FP8, FP8Block or
	// NVFP4 from quantization_config (or a ModelOpt hf_quant_config.json),
	// else BF16. In a MoE model it is the format of the attention
	// projections, dense FFNs and shared experts; the routed experts may
	// differ (ExpertDtype).
	WeightDtype Dtype
	// KVDtype is the KV cache format the checkpoint was calibrated for (FP8
	// from kv_cache_quant_algo or kv_cache_scheme), or "" when it names
	// none; vLLM's kv_cache_dtype "auto" serves it (config.json's activation
	// dtype, bf16, otherwise).
	KVDtype Dtype

	// MoE is the mixture-of-experts FFN; nil for a dense decoder.
	MoE *MoE
	// LayerKinds gives each decoder layer's attention and FFN kind, in layer
	// order (len = Layers); nil means every layer is full attention with a
	// MoE FFN when MoE is set, a dense FFN otherwise.
	LayerKinds []LayerKind
	// SlidingWindow is the window of AttnSliding layers, tokens (0: none).
	SlidingWindow int
	// AttentionChunk is the chunk of AttnChunked layers, tokens (Llama-4's
	// attention_chunk_size; 0: none).
	AttentionChunk int
	// Sparse is the block-sparse attention of AttnSparse layers (nil: none).
	Sparse *SparseAttention
	// AttentionSinks is true when each attention head has a learned sink
	// logit (gpt-oss); it adds one key per head, not priced.
	AttentionSinks bool
	// MLA is the multi-head latent attention of every layer (AttnMLA layers:
	// DeepSeek, Kimi, GLM-5); nil for GQA attention. With MLA, KVHeads is
	// Heads and HeadDim the prefill heads' query/key width P + R.
	MLA *MLA
	// DSV4 is DeepSeek-V4's compressed attention of the AttnCSA, AttnHCA and
	// AttnSWA layers (dsv4.go); nil for every other family. With it, KVHeads
	// is 1 and HeadDim the shared key/value head's width.
	DSV4 *CompressedAttention
	// Linear is the Gated DeltaNet linear attention of AttnLinear layers
	// (Qwen3-Next, Qwen3.5); nil for a model without them.
	Linear *LinearAttention
	// AttnOutputGate is true when the full-attention layers gate their output
	// (Qwen3-Next and Qwen3.5's attn_output_gate: q_proj also produces a
	// sigmoid gate per head, doubling its query part).
	AttnOutputGate bool
	// AttnDtype is the attention projections' weight format when it differs
	// from WeightDtype (MLA checkpoints that keep attention in bf16 and
	// quantize the FFNs: ModelOpt NVFP4 DeepSeek, Kimi and GLM-5); ""
	// means WeightDtype (see AttentionDtype).
	AttnDtype Dtype
	// Approximations lists, in plain words, what the simulator prices
	// differently from the checkpoint (a vision tower left out, a weight
	// format priced as a stand-in); the report's perf metadata repeats them.
	Approximations []string

	// nemotronLayout is a Nemotron-H checkpoint's layers as
	// hybrid_override_pattern spells them (M, *, - or E a layer), kept to
	// name its modules (nemotronModules); nil for every other family.
	nemotronLayout []byte
}

// Validate checks the architecture for a tensor-parallel degree tp: every
// count is positive and within Limits, KVHeads divides Heads (grouped-query attention), tp is in
// 1..MaxTP and divides Heads. The error names the field and the values.
func (a *Arch) Validate(tp int) error {
	if a == nil {
		return fmt.Errorf("model: nil architecture")
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"num_hidden_layers", a.Layers},
		{"hidden_size", a.Hidden},
		{"num_attention_heads", a.Heads},
		{"num_key_value_heads", a.KVHeads},
		{"head_dim", a.HeadDim},
		{"intermediate_size", a.Intermediate},
		{"vocab_size", a.Vocab},
	} {
		if f.name == "intermediate_size" && f.v == 0 && a.MoE != nil && a.DenseFFNLayers() == 0 {
			continue // every FFN is a MoE block (Qwen3.5-MoE has no intermediate_size)
		}
		if f.v <= 0 {
			return fmt.Errorf("model %s: %s = %d, want > 0", a.Name, f.name, f.v)
		}
	}
	if a.Heads%a.KVHeads != 0 {
		return fmt.Errorf("model %s: num_key_value_heads = %d does not divide num_attention_heads = %d",
			a.Name, a.KVHeads, a.Heads)
	}
	if err := a.checkLimits("field", false); err != nil {
		return err
	}
	if !a.WeightDtype.Valid() {
		return fmt.Errorf("model %s: unknown weight dtype %q", a.Name, a.WeightDtype)
	}
	if tp < 1 || tp > MaxTP {
		return fmt.Errorf("model %s: tensor parallel size %d out of range 1..%d", a.Name, tp, MaxTP)
	}
	if a.Heads%tp != 0 {
		return fmt.Errorf("model %s: tensor parallel size %d does not divide num_attention_heads = %d",
			a.Name, tp, a.Heads)
	}
	if a.Linear != nil {
		if err := a.Linear.validate(tp); err != nil {
			return fmt.Errorf("model %s: %w", a.Name, err)
		}
	}
	if a.DSV4 != nil {
		if err := a.DSV4.validate(a.Heads, tp); err != nil {
			return fmt.Errorf("model %s: %w", a.Name, err)
		}
	}
	return nil
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// KVHeadsPerGPU is ceil(kv/t): vLLM splits KV heads across TP ranks and
// replicates them when t > kv.
func (a *Arch) KVHeadsPerGPU(tp int) int { return ceilDiv(a.KVHeads, tp) }

// KVBytesPerToken is the KV cache size of one token on one GPU, in bytes:
//
//	ceil(kv/t) · d · L_kv · 2 · b_kv  +  L_sparse · d_idx · 2
//
// kv KV heads, t TP degree, d head_dim (elements), L_kv the layers whose
// cache grows with the context (FullKVLayers: every layer of a dense
// decoder; sliding-window layers are left out, see
// SlidingKVBytesPerSequence), 2 for K and V, b_kv bytes per KV element (2
// for bf16, 1 for fp8). Source: vLLM FullAttentionSpec.page_size_bytes per
// layer, summed over layers; see
// docs/design.md ("The KV capacity"). Block-sparse layers (MiniMax-M3) also cache one indexer key of
// d_idx elements per token, bf16, on every GPU (an approximation: the
// indexer's key layout is not in config.json). Qwen3-32B, bf16, t = 1:
// 8·128·64·2·2 = 262,144 bytes. An MLA model's is mlaKVBytesPerToken, a
// DeepSeek-V4 model's dsv4KVBytesPerToken (its compressed caches). tp must
// be ≥ 1 (see Validate).
func (a *Arch) KVBytesPerToken(tp int, kvBytes float64) int64 {
	if a.MLA != nil {
		return a.mlaKVBytesPerToken(kvBytes)
	}
	if a.DSV4 != nil {
		return a.dsv4KVBytesPerToken(kvBytes)
	}
	b := a.LayersKVBytesPerToken(tp, a.FullKVLayers(), kvBytes)
	if a.Sparse != nil {
		b += int64(a.SparseLayers() * a.Sparse.IndexDim * 2)
	}
	return b
}

// LayersKVBytesPerToken is one token's K and V in layers attention layers
// on one GPU, bytes: ceil(kv/t) · d · layers · 2 · b_kv (KVBytesPerToken's
// term for a model without MLA).
func (a *Arch) LayersKVBytesPerToken(tp, layers int, kvBytes float64) int64 {
	return int64(float64(a.KVHeadsPerGPU(tp)*a.HeadDim*layers*2) * kvBytes)
}

// SlidingKVBytesPerSequence is the KV cache one running sequence holds in
// the sliding-window layers on one GPU, bytes:
//
//	ceil(kv/t) · d · L_sliding · 2 · b_kv · (W + B)
//
// W the window (tokens), B the block size (tokens): vLLM's sliding-window
// KV manager keeps the blocks that cover the last W tokens, the partly
// filled edge block included, and frees the rest (SlidingWindowSpec). 0 for
// a model without sliding layers. DeepSeek-V4's every layer has its window,
// and its compressors their states (dsv4WindowBytesPerSequence).
func (a *Arch) SlidingKVBytesPerSequence(tp int, kvBytes float64, blockSize int) int64 {
	if a.DSV4 != nil {
		return a.dsv4WindowBytesPerSequence(kvBytes)
	}
	l := a.SlidingLayers()
	if l == 0 {
		return 0
	}
	return int64(float64(a.KVHeadsPerGPU(tp)*a.HeadDim*l*2*(a.SlidingWindow+blockSize)) * kvBytes)
}

// GEMMShape is one weight GEMM of a decoder layer on one GPU: the output
// features N and the input features K (elements); the weight matrix is N×K.
type GEMMShape struct {
	Name string
	N, K int
}

// LayerGEMMs returns the four weight GEMMs of one decoder layer on one GPU
// under tensor parallelism t (docs/design.md, "The measured tables and the dense-decoder arithmetic"):
//
//	qkv:     N = (g·n/t + 2·ceil(kv/t))·d, K = h (column parallel)
//	o_proj:  N = h, K = (n/t)·d                  (row parallel)
//	gate_up: N = 2·ceil(I/t), K = h              (column parallel)
//	down:    N = h, K = ceil(I/t)                (row parallel)
//
// With t dividing kv this is the table's (n + 2kv)·d/t; when t > kv the KV
// heads are replicated, as vLLM's QKVParallelLinear does. g is 2 when the
// attention gates its output (AttnOutputGate: Qwen3NextAttention's q_proj
// yields a query and a gate per head), else 1.
func (a *Arch) LayerGEMMs(tp int) [4]GEMMShape {
	inter := ceilDiv(a.Intermediate, tp)
	q := a.Heads / tp
	if a.AttnOutputGate {
		q *= 2
	}
	return [4]GEMMShape{
		{"qkv", (q + 2*a.KVHeadsPerGPU(tp)) * a.HeadDim, a.Hidden},
		{"o_proj", a.Hidden, a.Heads / tp * a.HeadDim},
		{"gate_up", 2 * inter, a.Hidden},
		{"down", a.Hidden, inter},
	}
}

// WeightBytesPerGPU is the weight memory of one GPU under tensor parallelism
// t, in bytes (docs/design.md, "The KV capacity"):
//
//	L · Σ_GEMM N·K · b_w  +  ceil(V/t)·h·2 (embedding)  +  ceil(V/t)·h·2 (logits)
//
// N, K the per-GPU shapes of LayerGEMMs, b_w the weight dtype's bytes per
// element, V vocab, h hidden. The embedding and the logits (lm_head) stay
// bf16 in fp8 checkpoints; with tied embeddings they are one matrix and
// count once. Norm weights (a few h per layer) are ignored.
// Qwen3-32B-FP8 at t = 1: 64·487,587,840·1 + 2·151,936·5,120·2 = 34,317,271,040.
func (a *Arch) WeightBytesPerGPU(tp int) int64 {
	var perLayer int64
	for _, g := range a.LayerGEMMs(tp) {
		perLayer += int64(g.N) * int64(g.K)
	}
	gemm := int64(float64(perLayer*int64(a.Layers)) * a.WeightDtype.Bytes())
	embed := int64(ceilDiv(a.Vocab, tp)) * int64(a.Hidden) * 2
	if a.TieEmbeddings {
		return gemm + embed
	}
	return gemm + 2*embed
}

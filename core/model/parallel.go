package model

import "fmt"

// Parallel is how one serving instance spreads a model over its GPUs, in
// vLLM's terms: TP tensor-parallel ranks per data-parallel rank, DP
// data-parallel ranks (--data-parallel-size: each with its own scheduler
// and KV cache, attention replicated), and EP (--enable-expert-parallel):
// the routed experts of a MoE layer are spread whole over all TP×DP GPUs
// instead of each expert being split TP×DP ways. Source: vLLM
// FusedMoEParallelConfig.make (the MoE layer's TP size is TP×DP without EP;
// with EP its EP size is TP×DP and its TP size 1).
//
// MoEEPSize splits the routed experts both ways, as TensorRT-LLM's
// moe_expert_parallel_size below its tp_size does (tensorrt_llm/mapping.py,
// Mapping: moe_tp_size × moe_ep_size = tp_size, moe_tp_size = tp_size /
// moe_ep_size when only the latter is given): with EP, the experts are
// spread over MoEEPSize GPUs and each split TP×DP / MoEEPSize ways; 0 (or
// TP×DP): spread over all of them.
type Parallel struct {
	TP, DP    int
	EP        bool
	MoEEPSize int
}

// GPUs is TP × DP.
func (p Parallel) GPUs() int { return p.TP * p.DP }

// MoETP is the tensor-parallel size of the routed experts: TP × DP without
// EP, else TP × DP / MoEEP (1 unless split both ways; the silicon tables'
// moe_tp_size).
func (p Parallel) MoETP() int {
	if p.EP {
		return p.GPUs() / p.MoEEP()
	}
	return p.TP * p.DP
}

// MoEEP is the expert-parallel size of the routed experts: with EP,
// MoEEPSize when given, else TP × DP; 1 without EP (the silicon tables'
// moe_ep_size).
func (p Parallel) MoEEP() int {
	switch {
	case !p.EP:
		return 1
	case p.MoEEPSize > 0:
		return p.MoEEPSize
	}
	return p.TP * p.DP
}

// String is "TP4", "TP2 DP2", "TP4 EP4" or "TP1 DP4 EP4".
func (p Parallel) String() string {
	s := fmt.Sprintf("TP%d", p.TP)
	if p.DP > 1 {
		s += fmt.Sprintf(" DP%d", p.DP)
	}
	if p.EP {
		s += fmt.Sprintf(" EP%d", p.MoEEP())
	}
	return s
}

// ValidateParallel checks a layout for this model the way vLLM checks it at
// start-up, on top of Validate(p.TP): DP ≥ 1 and TP×DP at most MaxWorkerGPUs
// (the data-parallel ranks may span nodes; TP within one node is the
// perf sources' check, which know the system); expert
// parallelism only for a MoE model, with no more EP ranks than experts;
// and, for routed experts in a block-quantized format (fp8_block), the
// per-GPU expert intermediate size I_e / moe_tp divisible by the 128-wide
// weight block (vLLM Fp8MoEMethod.create_weights raises "The output_size of
// gate's and up's weight = … is not divisible by weight quantization
// block_n = 128"; the fix vLLM's recipes give is --enable-expert-parallel).
// TensorRT-LLM's FP8 block-scale MoE kernels (TRT-LLM-gen, CUTLASS,
// DeepGEMM) need the same (NVIDIA/TensorRT-LLM pull request 14613: MiniMax-M2.5
// FP8 at TP 8, 1536 / 8 = 192, fails their assert; its 8-GPU runs use EP 8
// with attention DP), and so do SGLang's (QwenLM/Qwen3 issue 1485:
// Qwen3-235B-A22B-FP8 does not load at TP 8). Errors name the field and the
// values.
func (a *Arch) ValidateParallel(p Parallel) error {
	if err := a.Validate(p.TP); err != nil {
		return err
	}
	if p.DP < 1 {
		return fmt.Errorf("model %s: data_parallel_size = %d, want ≥ 1", a.Name, p.DP)
	}
	if p.GPUs() > MaxWorkerGPUs {
		return fmt.Errorf("model %s: tensor parallel size %d × data_parallel_size %d = %d GPUs, more than %d",
			a.Name, p.TP, p.DP, p.GPUs(), MaxWorkerGPUs)
	}
	if p.EP && a.MoE == nil {
		return fmt.Errorf("model %s: enable_expert_parallel needs a mixture-of-experts model", a.Name)
	}
	if p.EP && p.MoEEPSize > 0 && (p.MoEEPSize > p.GPUs() || p.GPUs()%p.MoEEPSize != 0) {
		return fmt.Errorf("model %s: %d expert-parallel ranks do not divide the %d GPUs (moe_tp_size × moe_ep_size must be the tp_size)",
			a.Name, p.MoEEPSize, p.GPUs())
	}
	if a.MoE == nil {
		return nil
	}
	if p.MoEEP() > a.MoE.Experts {
		return fmt.Errorf("model %s: %d expert-parallel ranks for %d experts", a.Name, p.MoEEP(), a.MoE.Experts)
	}
	if a.ExpertDtype() == FP8Block {
		const blockN = 128
		if per := a.MoE.Intermediate / p.MoETP(); a.MoE.Intermediate%p.MoETP() != 0 || per%blockN != 0 {
			return fmt.Errorf("model %s: moe_intermediate_size %d over %d GPUs is %d per GPU, not divisible by the fp8 weight block (%d), as vLLM's, SGLang's and TensorRT-LLM's fp8 block MoE kernels require; use enable_expert_parallel (experts whole on each GPU) or a smaller tensor × data parallel size",
				a.Name, a.MoE.Intermediate, p.MoETP(), a.MoE.Intermediate/p.MoETP(), blockN)
		}
	}
	return nil
}

// attentionWeights is the attention projection weights of one layer on one
// GPU, elements: QKV (n/t + 2·ceil(kv/t))·d·h plus output h·(n/t)·d
// (LayerGEMMs' first two), plus for a block-sparse layer its indexer's
// query and key projections, h·(IndexHeads + 1)·IndexDim, replicated; an
// MLA layer's projections (mlaAttentionWeights); a linear-attention layer's
// (linearAttentionWeights); a DeepSeek-V4 layer's DSV4Projections (its bf16
// compressors and indexer weights are counted apart, at 2 bytes).
func (a *Arch) attentionWeights(tp int, kind AttnKind) int64 {
	if kind == AttnLinear {
		return a.linearAttentionWeights(tp)
	}
	sparse := kind == AttnSparse
	if a.MLA != nil {
		return a.mlaAttentionWeights(tp)
	}
	if a.DSV4 != nil {
		return gemmElems(a.DSV4Projections(tp, kind))
	}
	g := a.LayerGEMMs(tp)
	w := int64(g[0].N)*int64(g[0].K) + int64(g[1].N)*int64(g[1].K)
	if sparse && a.Sparse != nil {
		w += int64(a.Hidden) * int64(a.Sparse.IndexHeads+1) * int64(a.Sparse.IndexDim)
	}
	return w
}

// WeightBytesPerGPUParallel is the weight memory of one GPU of a layout p,
// bytes. A dense decoder is WeightBytesPerGPU(p.TP) (DP replicates it). A
// MoE model sums over layers (TP t, MoE sizes moe_tp × moe_ep = t·DP):
//
//	attention     (n/t + 2·ceil(kv/t))·d·h + h·(n/t)·d            × b_w
//	dense FFN     3·h·ceil(I/t)                                     × b_w
//	MoE layer     ceil(E/moe_ep) · 3·h_e·ceil(I_e/moe_tp)               × b_e   routed experts
//	              + E·h · 2                                                   router (bf16, replicated)
//	              + 3·h·ceil(I_s/t)                                 × b_w   shared experts
//	              + 2·h·h_e (latent experts only, replicated)       × b_w   latent projections
//	once          ceil(V/t)·h·2 (embedding) + ceil(V/t)·h·2 (lm_head, unless tied)
//
// h_e = ExpertHidden() (h unless the experts are latent: MoE.Latent).
// b_w = WeightDtype.Bytes(), b_e = ExpertDtype().Bytes() (scales
// included). Every expert counts, used or not: vLLM loads them all.
// Norms, biases and attention sinks (a few h per layer) are left out, so
// are multi-token-prediction modules (loaded only for speculative decoding)
// and a multimodal model's vision tower (see Approximations).
func (a *Arch) WeightBytesPerGPUParallel(p Parallel) int64 {
	if !a.Hybrid() {
		return a.WeightBytesPerGPU(p.TP)
	}
	tp := p.TP
	h := int64(a.Hidden)
	bw, be, ba := a.WeightDtype.Bytes(), a.ExpertDtype().Bytes(), a.AttentionDtype().Bytes()
	var wElems, eElems, bf16Elems, aElems float64
	attnElems := &wElems // in WeightDtype's sum unless of their own format
	if ba != bw {
		attnElems = &aElems
	}
	for _, g := range a.Groups() {
		n := float64(g.Count)
		*attnElems += n * float64(a.attentionWeights(tp, g.Kind.Attn))
		if a.DSV4 != nil {
			bf16Elems += n * float64(gemmElems(a.DSV4BF16Projections(g.Kind.Attn)))
		}
		if !g.Kind.MoE {
			wElems += n * float64(3*h*int64(ceilDiv(a.FFNIntermediate(g.Kind), tp)))
			continue
		}
		m := a.MoE
		local := ceilDiv(m.Experts, p.MoEEP())
		eElems += n * float64(int64(local)*3*int64(a.ExpertHidden())*int64(ceilDiv(m.Intermediate, p.MoETP())))
		bf16Elems += n * float64(int64(m.Experts)*h)
		wElems += n * float64(a.latentWeights())
		if m.SharedIntermediate > 0 {
			wElems += n * float64(3*h*int64(ceilDiv(m.SharedIntermediate, tp)))
		}
	}
	embed := int64(ceilDiv(a.Vocab, tp)) * h * 2
	total := int64(wElems*bw) + int64(eElems*be) + int64(bf16Elems*2) + embed + int64(aElems*ba)
	if !a.TieEmbeddings {
		total += embed
	}
	return total
}

// Params is the model's parameter count (elements), every expert included:
// WeightBytesPerGPUParallel's terms at TP 1 without the byte sizes. A
// checkpoint's advertised size (gpt-oss-120b "117 B", Qwen3-235B-A22B
// "235 B") should match it within the left-out norms and biases.
func (a *Arch) Params() int64 {
	h := int64(a.Hidden)
	var n int64
	for _, g := range a.Groups() {
		c := int64(g.Count)
		n += c * a.attentionWeights(1, g.Kind.Attn)
		if a.DSV4 != nil {
			n += c * gemmElems(a.DSV4BF16Projections(g.Kind.Attn))
		}
		if !g.Kind.MoE {
			n += c * 3 * h * int64(a.FFNIntermediate(g.Kind))
			continue
		}
		m := a.MoE
		n += c * (int64(m.Experts)*3*int64(a.ExpertHidden())*int64(m.Intermediate) + int64(m.Experts)*h +
			3*h*int64(m.SharedIntermediate) + a.latentWeights())
	}
	embed := int64(a.Vocab) * h
	if a.TieEmbeddings {
		return n + embed
	}
	return n + 2*embed
}

// ActiveParams is the parameters one token goes through (elements): every
// layer's attention and dense FFN or router, top-k routed experts and the
// shared experts, and the embedding and lm_head. Used to pair a MoE model
// with a dense model of the same active size (make bench).
func (a *Arch) ActiveParams() int64 {
	if a.MoE == nil {
		return a.Params()
	}
	m := a.MoE
	inactive := int64(a.MoELayers()) * int64(m.Experts-m.TopK) * 3 * int64(a.ExpertHidden()) * int64(m.Intermediate)
	return a.Params() - inactive
}

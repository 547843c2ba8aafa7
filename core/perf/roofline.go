package perf

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// RooflineName is the Name of the roofline model. Bump the version when a
// formula below changes (docs/design.md, "Perf models").
const RooflineName = "roofline-v3"

// RooflineParams are the knobs that calibration fits. Every field must be
// given: the spec's values and their defaults (core/config/defaults.go) reach
// NewRoofline through the replay.
type RooflineParams struct {
	// ComputeEfficiency is the fraction of the peak tensor-core FLOP/s that
	// GEMMs and attention reach, in (0, 1].
	ComputeEfficiency float64
	// MemoryEfficiency is the fraction of HBM bandwidth that memory-bound ops
	// reach, in (0, 1].
	MemoryEfficiency float64
	// PassOverheadUs is a fixed cost per pass (scheduling, input preparation,
	// sampling, launch gaps), µs, ≥ 0.
	PassOverheadUs float64
	// SequenceOverheadUs is the cost per sequence scheduled in a pass (each
	// decode and each prefill chunk: input preparation, sampling and output
	// handling grow with the batch), µs, ≥ 0.
	SequenceOverheadUs float64
	// AllReduceLatencyUs is the fixed cost of one TP all-reduce on a system
	// without a measured all-reduce (hardware.System.AllReduce), µs, ≥ 0.
	AllReduceLatencyUs float64
	// LayerLatencyUs is the fixed GPU time of one decoder layer's kernels
	// beyond their roofline (launch, ramp-up and tail of the four GEMMs,
	// the attention kernel and the norm/activation kernels), µs per layer
	// per non-empty pass, ≥ 0. The all-reduces carry AllReduceLatencyUs.
	LayerLatencyUs float64
	// MoELatencyUs is the fixed GPU time of one MoE block's kernels beyond
	// their roofline, µs per MoE layer per non-empty pass, ≥ 0 (mixture-of-
	// experts models only; config.DefaultMoELatencyUs).
	MoELatencyUs float64
}

// CustomAllReduceLatencyUs is the fixed latency of one TP all-reduce in vLLM's
// CUDA-graph custom all-reduce, µs: the h200_sxm custom all-reduce table gives
// 0.0044 ms for 128 elements on 2 GPUs, a latency-only message. The replay
// sets RooflineParams.AllReduceLatencyUs to it (it is a property of the
// kernel, not a spec field).
const CustomAllReduceLatencyUs = 5.0

// Validate checks the ranges documented on each field; the error names the
// field and the value.
func (p RooflineParams) Validate() error {
	if !(p.ComputeEfficiency > 0 && p.ComputeEfficiency <= 1) {
		return fmt.Errorf("perf: roofline compute_efficiency = %g, want in (0, 1]", p.ComputeEfficiency)
	}
	if !(p.MemoryEfficiency > 0 && p.MemoryEfficiency <= 1) {
		return fmt.Errorf("perf: roofline memory_efficiency = %g, want in (0, 1]", p.MemoryEfficiency)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"pass_overhead_us", p.PassOverheadUs}, {"per_sequence_overhead_us", p.SequenceOverheadUs},
		{"allreduce_latency_us", p.AllReduceLatencyUs}, {"layer_latency_us", p.LayerLatencyUs},
		{"moe_latency_us", p.MoELatencyUs}} {
		if err := CheckCost("perf: roofline ", c.name, c.v); err != nil {
			return err
		}
	}
	return nil
}

// RooflineOptions configure NewRoofline.
type RooflineOptions struct {
	// TP is the tensor-parallel degree t (1..8, divides the head count).
	TP int
	// WeightDtype is the GEMM weight format; "" uses the checkpoint's
	// (model.Arch.WeightDtype). The logits GEMM is always bf16.
	WeightDtype model.Dtype
	// KVDtype is the KV cache format, bfloat16 or fp8; "" means bfloat16.
	KVDtype model.Dtype
	// Params are the efficiencies and overheads (Validate's ranges; the zero
	// value is refused: efficiencies must be > 0).
	Params RooflineParams
	// OverlapCPU runs the engine step's CPU work beside the kernels instead
	// of after them (vLLM async scheduling; Breakdown.PassNs).
	OverlapCPU bool
	// DP is the data-parallel size (0 or 1: none) and EP whether the routed
	// experts are expert-parallel (model.Parallel); both matter only for a
	// mixture-of-experts model, whose MoE layers span TP × DP GPUs. MoEEP,
	// with EP, splits the experts both ways (model.Parallel.MoEEPSize; 0:
	// spread over all TP × DP GPUs).
	DP    int
	EP    bool
	MoEEP int
	// CUDAGraphMaxTokens is the largest CUDA-graph capture size, tokens
	// (CUDAGraphMaxTokens of the scheduler's limits; 0: no CUDA graphs). A
	// MoE layer computes a pass's tokens padded to the next capture size
	// (CUDAGraphTokens).
	CUDAGraphMaxTokens int
	// CUDAGraphs, when given, is the vLLM release's capture rule: the MoE
	// layers compute the tokens padded to its graphs (PadBatch), and
	// CUDAGraphMaxTokens is taken as their largest (CUDAGraphs.Max).
	CUDAGraphs VLLMGraphs
	// All2AllBackend is vLLM's --all2all-backend (All2All*; "" = the
	// all-gather and reduce-scatter); with DP > 1 and EP a point-to-point
	// backend (IsAll2All) prices the MoE layers' dispatch and combine (A2A).
	All2AllBackend string
	// All2AllBF16Dispatch: the engine dispatches bf16 hidden states
	// whatever the experts' format (TensorRT-LLM's WideEPMoE over DeepEP).
	All2AllBF16Dispatch bool
	// All2AllMaxTokens (0: none) is the most tokens of a pass, summed over
	// the DP ranks, the point-to-point all2all carries; above it the
	// all-gather and reduce-scatter run (TensorRT-LLM's
	// WideEPMoE.can_use_alltoall, moe_max_num_tokens; as aic.Options').
	All2AllMaxTokens int
}

// gemmConst is one weight GEMM on one GPU: N output and K input features.
type gemmConst struct{ n, k, nk float64 }

// gemmConstOf is the constants of one GEMM shape (N, K and N·K).
func gemmConstOf(g model.GEMMShape) gemmConst {
	return gemmConst{n: float64(g.N), k: float64(g.K), nk: float64(g.N) * float64(g.K)}
}

// Roofline prices a pass of a dense decoder (Llama, Qwen2, Qwen3, Mistral)
// on one TP group from peak FLOP/s and HBM bandwidth (docs/design.md,
// "The measured tables and the dense-decoder arithmetic"). Every op costs
//
//	T_op = max(F / (P · e_c), B / (W · e_m))
//
// F FLOPs and B HBM bytes of the op on one GPU, P peak FLOP/s for the op's
// dtype, W HBM bandwidth (B/s), e_c and e_m the efficiencies. Per layer
// (× L): two RMSNorm+residual, Qwen3 q/k norms and the SwiGLU activation
// (memory only), the QKV, output, gate/up and down GEMMs over all x tokens of
// the pass, context attention per prefill chunk, generation attention over
// the decode batch, and two all-reduces when t > 1. Once per pass: the
// embedding and its all-reduce, the logits GEMM over the s sampling
// sequences, and the fixed pass overhead. Ops run back to back (no overlap).
//
// Each layer also costs LayerLatencyUs of fixed kernel time (launch,
// ramp-up and tail that no roofline term has) whenever the pass computes any
// token.
//
// Not modelled: rotary embedding, residual adds fused into norms, the
// logits all-gather and sampling kernels; the efficiencies and the overheads
// absorb them.
//
// A Roofline memoises the pass terms fixed by a token count, a sampler count
// and a decode count as it prices (PassTime writes its memo tables): one per
// replay, not for concurrent use.
type Roofline struct {
	layers float64
	gemms  [4]gemmConst
	logits gemmConst

	flopsW    float64 // P·e_c at the weight dtype, FLOP/s
	flopsBF16 float64 // P·e_c at bf16 (attention, logits), FLOP/s
	memBW     float64 // W·e_m, B/s
	wBytes    float64 // bytes per weight (and GEMM input) element

	memOpBytesPerToken float64 // per layer, norms + q/k norm + activation
	embedBytesPerToken float64
	nd                 float64 // query heads per GPU × head_dim
	kvBytesTokenLayer  float64 // K and V of one token in one layer, bytes
	qoBytesPerToken    float64 // read Q, write O, one token, bf16

	hy     *hybrid  // MoE and mixed-attention models; nil for a dense decoder
	approx []string // the model's Approximations (perf metadata notes)

	numAllReduce   float64 // 2L + 1 when t > 1, else 0
	arFixedS       float64 // latency of one all-reduce, s
	arSPerToken    float64 // ring transfer time per token of one all-reduce, s
	arBusBW        float64 // bus bandwidth of the all-reduce, B/s
	arMeasured     bool    // arFixedS and arBusBW are the system's measured all-reduce
	arNodes        int     // nodes the TP group spans (multiNodeAllReduce); 1 within one
	passOverheadNs float64
	seqOverheadNs  float64
	layerLatencyNs float64
	params         RooflineParams
	overlapCPU     bool

	// byTokens memoises the terms of a pass that depend only on its token
	// count x (tokenTerms), by x: a replay prices millions of passes over a
	// few thousand distinct x, and the four GEMMs alone cost eight divisions.
	byTokens []tokenTerms
	// byLogits memoises LogitsNs by the number of sampling sequences.
	byLogits []memoNs
	// byDecodes memoises, for a pass of n decodes that all sample (a
	// replay's steady passes), tokenTerms(n) and the logits of n sequences
	// in one entry, by n.
	byDecodes []decodeTerms
}

// decodeTerms are tokenTerms(n) and logitsNs(n) of a pass of n decodes.
type decodeTerms struct {
	tokenTerms
	logits float64
}

// memoNs is one memoised price, ns.
type memoNs struct {
	ns  float64
	set bool
}

// tokenTerms are the parts of Breakdown fixed by the pass's tokens x (GEMMs,
// memory ops, embedding, all-reduce), ns, computed as Breakdown computes them.
type tokenTerms struct {
	gemm, mem, embed, allReduce float64
	set                         bool
}

// memoTokens bounds the token counts whose terms are memoised (larger passes
// are priced directly): 16 Ki entries of 40 bytes.
const memoTokens = 1 << 14

var _ Model = (*Roofline)(nil)

// NewRoofline precomputes the per-(model, system, TP) constants. Errors: a
// nil arch or sys, an arch that fails Validate(TP), an unknown weight dtype,
// a KV dtype other than bfloat16 or fp8, a system without positive MemBW and
// BF16Flops (and IntraNodeBW when TP > 1), a TP over several nodes that is
// not a multiple of GPUsPerNode or on a system without InterNodeBW
// (multiNodeAllReduce), or params out of range.
func NewRoofline(arch *model.Arch, sys *hardware.System, opt RooflineOptions) (*Roofline, error) {
	if arch == nil || sys == nil {
		return nil, fmt.Errorf("perf: roofline needs a model and a system")
	}
	if opt.CUDAGraphMaxTokens < 0 {
		return nil, fmt.Errorf("perf: roofline CUDA-graph max tokens = %d, want ≥ 0", opt.CUDAGraphMaxTokens)
	}
	tp := opt.TP
	par := model.Parallel{TP: tp, DP: max(opt.DP, 1), EP: opt.EP, MoEEPSize: opt.MoEEP}
	if err := arch.ValidateParallel(par); err != nil {
		return nil, fmt.Errorf("perf: roofline: %w", err)
	}
	wd, kd, err := ResolveDtypes(arch, opt.WeightDtype, opt.KVDtype)
	if err != nil {
		return nil, fmt.Errorf("perf: roofline: %w", err)
	}
	p := opt.Params
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !(sys.MemBW > 0) || !(sys.BF16Flops > 0) {
		return nil, fmt.Errorf("perf: roofline: system %s needs MemBW > 0 and BF16Flops > 0 (have %g, %g)",
			sys.Name, sys.MemBW, sys.BF16Flops)
	}
	if tp > 1 && !(sys.IntraNodeBW > 0) {
		return nil, fmt.Errorf("perf: roofline: system %s needs IntraNodeBW > 0 for TP %d", sys.Name, tp)
	}

	h := float64(arch.Hidden)
	d := float64(arch.HeadDim)
	qHeads := float64(arch.Heads / tp)
	kvHeads := float64(arch.KVHeadsPerGPU(tp))
	inter := float64((arch.Intermediate + tp - 1) / tp)
	vocab := float64((arch.Vocab + tp - 1) / tp)

	r := &Roofline{
		layers:    float64(arch.Layers),
		flopsW:    sys.Flops(wd) * p.ComputeEfficiency,
		flopsBF16: sys.BF16Flops * p.ComputeEfficiency,
		memBW:     sys.MemBW * p.MemoryEfficiency,
		wBytes:    wd.Bytes(),
		logits:    gemmConst{n: vocab, k: h, nk: vocab * h},

		// Two RMSNorm+residual (≈ 8h bytes per token each: read x and the
		// residual, write both, bf16) and the SwiGLU activation (read 2·I/t,
		// write I/t, bf16: 6·I/t bytes).
		memOpBytesPerToken: 2*8*h + 6*inter,
		// Embedding: gather a row and write the output, bf16: 4h bytes.
		embedBytesPerToken: 4 * h,
		nd:                 qHeads * d,
		kvBytesTokenLayer:  2 * kvHeads * d * kd.Bytes(),
		qoBytesPerToken:    2 * 2 * qHeads * d,
		passOverheadNs:     p.PassOverheadUs * 1e3,
		seqOverheadNs:      p.SequenceOverheadUs * 1e3,
		layerLatencyNs:     p.LayerLatencyUs * 1e3,
		params:             p,
		overlapCPU:         opt.OverlapCPU,
	}
	if arch.QKNorm {
		// Qwen3 per-head RMSNorm on q and k: read and write both, bf16.
		r.memOpBytesPerToken += 2 * 2 * (qHeads + kvHeads) * d
	}
	for i, g := range arch.LayerGEMMs(tp) {
		r.gemms[i] = gemmConstOf(g)
	}
	if tp > 1 {
		t := float64(tp)
		r.numAllReduce = 2*r.layers + 1
		// All-reduce of x·h bf16 elements: each GPU sends and receives
		// 2(t−1)/t of the message. A built-in system carries what its
		// measured all-reduce reaches (hardware.AllReduceLink); a YAML system
		// runs the ring at the link's nominal rate with the kernel latency.
		r.arFixedS, r.arBusBW, r.arMeasured = p.AllReduceLatencyUs*1e-6, sys.IntraNodeBW, false
		if l, ok := sys.AllReduceFor(tp); ok {
			r.arFixedS, r.arBusBW, r.arMeasured = l.LatencyS, l.BusBW, true
		}
		r.arSPerToken = 2 * (t - 1) / t * h * 2 / r.arBusBW
		if sys.Nodes(tp) > 1 {
			if err := r.multiNodeAllReduce(sys, tp, h, p.AllReduceLatencyUs*1e-6); err != nil {
				return nil, err
			}
		}
	}
	if arch.Hybrid() {
		if r.hy, err = newHybrid(arch, sys, par, p, kd.Bytes()); err != nil {
			return nil, err
		}
		if par.DP > 1 && par.EP && IsAll2All(opt.All2AllBackend) {
			if r.hy.a2a, err = NewA2A(opt.All2AllBackend, arch, par, sys); err != nil {
				return nil, err
			}
			if opt.All2AllBF16Dispatch {
				r.hy.a2a.DispatchBytes = 2
			}
			r.hy.a2aMaxX = float64(opt.All2AllMaxTokens)
		}
		r.hy.cgTop = opt.CUDAGraphMaxTokens
		if r.hy.cg = GraphsOf(opt.CUDAGraphs); r.hy.cg != nil {
			r.hy.cgTop = r.hy.cg.Max()
		}
		r.approx = append([]string(nil), arch.Approximations...)
	}
	return r, nil
}

// Name is "roofline-v3" (v2 added the per-layer kernel latency, v3 the
// system's measured all-reduce).
func (r *Roofline) Name() string { return RooflineName }

// Metadata is the report's perf metadata: the parameters in effect (the
// engine.perf field names; µs and fractions).
func (r *Roofline) Metadata() map[string]any {
	p := r.params
	params := map[string]float64{
		"compute_efficiency": p.ComputeEfficiency, "memory_efficiency": p.MemoryEfficiency,
		"pass_overhead_us": p.PassOverheadUs, "per_sequence_overhead_us": p.SequenceOverheadUs,
		"allreduce_latency_us": p.AllReduceLatencyUs, "layer_latency_us": p.LayerLatencyUs,
	}
	md := map[string]any{"params": params}
	if r.overlapCPU {
		md["cpu_overlap"] = true
	}
	if r.numAllReduce > 0 {
		src := "nominal link (node.intra_node_bw) and the kernel latency"
		if r.arMeasured {
			src = "measured on this system (custom_allreduce_perf fit, scripts/fit_allreduce.py)"
		}
		if r.arNodes > 1 {
			src = fmt.Sprintf("across %d nodes: within each node a reduce-scatter and an all-gather (%s), between them a ring all-reduce of each GPU's share at node.inter_node_bw; bus_bw_gb_s is the whole's", r.arNodes, src)
		}
		md["allreduce"] = map[string]any{"latency_us": r.arFixedS * 1e6, "bus_bw_gb_s": r.arBusBW / 1e9, "source": src}
	}
	if r.hy == nil {
		return md
	}
	if r.hy.moeLayers > 0 {
		params["moe_latency_us"] = p.MoELatencyUs
	}
	md["notes"] = append([]string{"routed experts priced at uniform routing: the expected distinct experts a pass's tokens reach (perf.ExpectedDistinctExperts)"}, r.approx...)
	return md
}

// opSeconds is the roofline of one op: max(flops / flopsRate, bytes / bw),
// seconds; flopsRate in FLOP/s and bw in B/s already include efficiencies.
// (The builtin max follows math.Max's rules for NaN and ±0 and is inlined.)
func opSeconds(flops, bytes, flopsRate, bw float64) float64 {
	return max(flops/flopsRate, bytes/bw)
}

// gemmSeconds prices a GEMM of m tokens against an N×K weight matrix:
//
//	F = 2·m·N·K                     (one multiply-add per output element per k)
//	B = b_w·N·K + b_w·m·K + 2·m·N   (weights and input at the weight dtype —
//	                                 fp8 GEMMs quantize their input — output bf16)
//
// docs/design.md ("Roofline bounds"). m ≤ 0 costs nothing (the GEMM does not
// run).
func gemmSeconds(m float64, g gemmConst, wBytes, flopsRate, bw float64) float64 {
	if m <= 0 {
		return 0
	}
	return opSeconds(2*m*g.nk, wBytes*g.nk+m*(wBytes*g.k+2*g.n), flopsRate, bw)
}

// contextAttentionSeconds prices causal attention of one prefill chunk of
// sNew new tokens after a cached prefix of p tokens (S = p + sNew), one
// layer, one GPU:
//
//	pairs = Σ_{i=p+1..S} i = sNew·(S + p + 1)/2   (query–key pairs, causal)
//	F = 4 · (n/t)·d · pairs                       (QKᵀ and PV, 2 FLOP per MAC)
//	B = 2·kv·d·b_kv · (S + sNew) + 4·(n/t)·d·sNew (read K,V of S tokens, write
//	                                                the new ones; Q in, O out, bf16)
//
// F ≈ 2·(S² − p²)·(n/t)·d, the bound in docs/design.md ("Roofline bounds"); attention math is
// bf16.
func (r *Roofline) contextAttentionSeconds(sNew, p float64) float64 {
	S := p + sNew
	pairs := sNew * (S + p + 1) / 2
	return opSeconds(4*r.nd*pairs, r.kvBytesTokenLayer*(S+sNew)+r.qoBytesPerToken*sNew, r.flopsBF16, r.memBW)
}

// generationAttentionSeconds prices decode attention for D requests whose
// KV lengths (excluding the token being computed) sum to kvSum, one layer,
// one GPU. Each attends over kv_i + 1 tokens; ctx = kvSum + D:
//
//	F = 4 · (n/t)·d · ctx
//	B = 2·kv·d·b_kv · (ctx + D) + 4·(n/t)·d·D   (read all K,V, write the new
//	                                            token's; Q in, O out)
//
// Memory bound for GQA (F/B ≈ n/kv FLOP per byte at bf16 KV).
func (r *Roofline) generationAttentionSeconds(D, kvSum float64) float64 {
	if D <= 0 {
		return 0
	}
	ctx := kvSum + D
	return opSeconds(4*r.nd*ctx, r.kvBytesTokenLayer*(ctx+D)+r.qoBytesPerToken*D, r.flopsBF16, r.memBW)
}

// Breakdown is the pass time by op family, in ns (float, before rounding),
// summed over layers.
type Breakdown struct {
	// GEMMNs: QKV, output, gate/up and down GEMMs, all layers.
	GEMMNs float64
	// ContextAttentionNs: attention of every prefill chunk, all layers.
	ContextAttentionNs float64
	// GenerationAttentionNs: attention of the decode batch, all layers.
	GenerationAttentionNs float64
	// MemoryOpsNs: norms, q/k norms and activation, all layers.
	MemoryOpsNs float64
	// AllReduceNs: 2L + 1 TP all-reduces (0 at TP 1).
	AllReduceNs float64
	// EmbeddingNs: the token embedding lookup.
	EmbeddingNs float64
	// LogitsNs: the logits GEMM over the sampling sequences.
	LogitsNs float64
	// OverheadNs: the pass overhead outside the kernels (fixed plus per
	// scheduled sequence).
	OverheadNs float64
	// HostLaunchNs: the host's launch of an eager pass's kernels
	// (Batch.HostLaunchNs; not part of TotalNs: PassNs bounds the kernels by
	// it).
	HostLaunchNs float64
	// KernelLatencyNs: the layers' fixed kernel latency (roofline
	// LayerLatencyUs × layers; 0 for sources whose measured kernel times
	// include it).
	KernelLatencyNs float64
	// ExpertsNs: the routed experts of every MoE layer (0 for a dense
	// decoder; the roofline includes MoELatencyUs per MoE layer).
	ExpertsNs float64
	// DispatchNs: the MoE layers' token all-gather and reduce-scatter
	// across data-parallel ranks (0 without data parallelism).
	DispatchNs float64
	// DraftNs: speculative decoding's draft steps (Batch.DraftSteps,
	// DraftNs); 0 without.
	DraftNs float64
}

// TotalNs is the sum of all parts, ns.
func (b Breakdown) TotalNs() float64 {
	return b.GEMMNs + b.ContextAttentionNs + b.GenerationAttentionNs + b.MemoryOpsNs +
		b.AllReduceNs + b.EmbeddingNs + b.LogitsNs + b.OverheadNs + b.KernelLatencyNs +
		b.ExpertsNs + b.DispatchNs + b.DraftNs
}

// PassNs is the pass duration, ns: the kernels and the engine step's CPU work
// (OverheadNs) one after the other, TotalNs, or, when overlapCPU, side by side:
//
//	T = max(T_kernels, T_cpu),   T_kernels = TotalNs − OverheadNs
//
// vLLM's async scheduling (EngineCore.step_with_batch_queue, on by default
// from vLLM 0.14.0) schedules and prepares pass k+1 on the CPU while pass k's
// kernels run on the GPU, so the CPU work costs time only when it is the
// longer of the two. Evidence (../shared/data/real/llmservingsim, vLLM
// 0.19.0, RTX PRO 6000): decode-only steps at 128 sequences take 55.6–62.5 ms
// (Qwen3-32B, TP 2) and ~30 ms (Llama-3.1-8B), the kernel time of the aic
// tables alone, where the sum with the 1 ms + 40 µs/sequence CPU cost would be
// 6 ms longer.
//
// An eager pass (HostLaunchNs H > 0) cannot end before the host has launched
// its last kernel: the kernels run as they are launched, so they take
// max(T_kernels, H). The launch is the CPU's too, after it has formed the
// pass, so under overlapCPU the CPU's part is T_cpu + H:
//
//	T = max(T_kernels, T_cpu + H)            (overlapCPU)
//	T = T_cpu + max(T_kernels, H)            (otherwise)
//
// With H = 0 both are the formulas above, to the bit.
func (b Breakdown) PassNs(overlapCPU bool) float64 {
	total := b.TotalNs()
	if !overlapCPU {
		return total + max(b.HostLaunchNs-(total-b.OverheadNs), 0)
	}
	return max(total-b.OverheadNs, b.OverheadNs+b.HostLaunchNs)
}

// Breakdown prices the pass op family by op family (see Roofline); it
// allocates only to grow its memo of the terms fixed by the token count
// (tokenTerms). x = prompt tokens computed + decoding requests; an empty
// pass costs only the overhead.
func (r *Roofline) Breakdown(b *Batch) Breakdown {
	if r.hy != nil {
		// one batch stands for every DP rank (GroupPassTime prices them apart)
		return r.hybridBreakdown(b, DPMoETokens(r.hy.dp, PadBatch(r.hy.cg, b, r.hy.cgTop)))
	}
	var out Breakdown
	out.OverheadNs, out.HostLaunchNs = OverheadNs(r.passOverheadNs, r.seqOverheadNs, b), b.HostLaunchNs

	var ctxS, prefill float64
	for i := range b.Prefill {
		c := &b.Prefill[i]
		if c.NewTokens <= 0 {
			continue
		}
		n := float64(c.NewTokens)
		prefill += n
		ctxS += r.contextAttentionSeconds(n, float64(c.PrefixTokens))
	}
	kvSum := float64(b.DecodeKVSum) // Batch.DecodeKVSum: the same float as a sum over the requests
	D := float64(b.Decodes)
	x := prefill + D
	if b.SpecTokens > 0 {
		x += float64(b.SpecTokens)
	}
	if x <= 0 {
		return out
	}

	tt := r.tokenTerms(x)
	L := r.layers
	out.GEMMNs = tt.gemm
	out.ContextAttentionNs = L * ctxS * 1e9
	out.GenerationAttentionNs = L * r.generationAttentionSeconds(D, kvSum) * 1e9
	out.MemoryOpsNs = tt.mem
	out.EmbeddingNs = tt.embed
	out.AllReduceNs = tt.allReduce
	out.LogitsNs = r.logitsNs(b.Samplers)
	out.KernelLatencyNs = L * r.layerLatencyNs
	out.DraftNs = DraftNs(b, L, r.Breakdown)
	return out
}

// tokenTerms returns the terms of a pass of x tokens (an integer ≥ 1) that
// depend on x alone, memoised for x < memoTokens.
func (r *Roofline) tokenTerms(x float64) tokenTerms {
	i := int(x)
	memo := float64(i) == x && i < memoTokens
	if memo && i < len(r.byTokens) && r.byTokens[i].set {
		return r.byTokens[i]
	}
	var gemmS float64
	for i := range r.gemms {
		gemmS += gemmSeconds(x, r.gemms[i], r.wBytes, r.flopsW, r.memBW)
	}
	L := r.layers
	tt := tokenTerms{
		gemm:      L * gemmS * 1e9,
		mem:       L * x * r.memOpBytesPerToken / r.memBW * 1e9,
		embed:     x * r.embedBytesPerToken / r.memBW * 1e9,
		allReduce: r.numAllReduce * (r.arFixedS + x*r.arSPerToken) * 1e9,
		set:       true,
	}
	if memo {
		r.byTokens = memoGrown(r.byTokens, i)
		r.byTokens[i] = tt
	}
	return tt
}

// logitsNs is the logits GEMM over n sampling sequences, ns, memoised for
// 0 ≤ n < memoTokens.
func (r *Roofline) logitsNs(n int) float64 {
	memo := n >= 0 && n < memoTokens
	if memo && n < len(r.byLogits) && r.byLogits[n].set {
		return r.byLogits[n].ns
	}
	ns := gemmSeconds(float64(n), r.logits, 2, r.flopsBF16, r.memBW) * 1e9
	if memo {
		r.byLogits = memoGrown(r.byLogits, n)
		r.byLogits[n] = memoNs{ns, true}
	}
	return ns
}

// memoGrown returns memo with index i (< memoTokens) in it: itself when it
// is, else a copy grown to twice its length (at least 256 and i+1, at most
// memoTokens).
func memoGrown[T any](memo []T, i int) []T {
	if i < len(memo) {
		return memo
	}
	grown := make([]T, min(memoTokens, max(2*len(memo), i+1, 256)))
	copy(grown, memo)
	return grown
}

// PassTime is PassNs(Breakdown(b).PassNs(OverlapCPU)): rounded, in [1, clock.MaxSpan].
// It allocates only as Breakdown does; its cost is linear in the number of prefill chunks
// and independent of the number of decodes.
func (r *Roofline) PassTime(b *Batch) int64 {
	if r.hy == nil && len(b.Prefill) == 0 && b.Decodes > 0 && b.SpecTokens == 0 && b.DraftSteps == 0 && b.HostLaunchNs == 0 {
		return PassNs(r.decodePassNs(b))
	}
	return PassNs(r.Breakdown(b).PassNs(r.overlapCPU))
}

// decodePassNs is Breakdown(b).PassNs(r.overlapCPU) for a dense decoder's
// pass of decodes only (no prefill chunk, Decodes ≥ 1; most passes of a
// replay): the same float operations in the same order, less the terms that
// are zero there (a context attention of 0, no experts, no dispatch), for
// x + 0 = x. No Breakdown is built and copied. TestRooflineDecodePassTime
// checks it against Breakdown.
func (r *Roofline) decodePassNs(b *Batch) float64 {
	ov := OverheadNs(r.passOverheadNs, r.seqOverheadNs, b)
	n := b.Decodes
	D := float64(n)
	var dt decodeTerms
	if n == b.Samplers && n < len(r.byDecodes) && r.byDecodes[n].set {
		dt = r.byDecodes[n]
	} else {
		dt = decodeTerms{r.tokenTerms(D), r.logitsNs(b.Samplers)}
		if n == b.Samplers && n < memoTokens {
			r.byDecodes = memoGrown(r.byDecodes, n)
			r.byDecodes[n] = dt
		}
	}
	L := r.layers
	gen := L * r.generationAttentionSeconds(D, float64(b.DecodeKVSum)) * 1e9
	// TotalNs's order: GEMM, (context attention), generation attention,
	// memory ops, all-reduce, embedding, logits, overhead, kernel latency
	total := dt.gemm + gen + dt.mem + dt.allReduce + dt.embed + dt.logits + ov + L*r.layerLatencyNs
	if !r.overlapCPU {
		return total
	}
	return max(total-ov, ov)
}

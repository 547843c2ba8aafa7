package perf

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// hybrid holds what the roofline needs beyond a dense decoder: per layer
// group its FFN and attention kind, and the MoE layer's constants.
type hybrid struct {
	groups []hyGroup
	layers float64 // all layers (for the per-layer latency)

	// routed experts of one MoE layer on one GPU
	moeLayers    float64
	experts      int
	topk         int
	moeEP        int
	localExperts float64   // ceil(E / moe_ep)
	expertW      float64   // weight elements of one expert on one GPU: 3·h_e·ceil(I_e/moe_tp)
	expertInter  float64   // ceil(I_e/moe_tp)
	expertBytes  float64   // b_e
	flopsE       float64   // P·e_c at the experts' dtype
	router       gemmConst // m = x, N = E, K = h, bf16
	moeLatencyNs float64
	// expS[X] is expertsSeconds(X) for X ≤ len−1, tabulated at build time
	// so that a pass does not evaluate the distinct-experts power law
	expS []float64

	// data parallelism: all-gather and reduce-scatter of X·h bf16 elements
	// over dp GPUs per MoE layer
	dp           int
	dpFixedS     float64 // latency of one collective, s
	dpSPerToken  float64 // ring transfer time per gathered token, s
	window       float64 // sliding window, tokens
	chunk        float64 // chunked local attention's chunk, tokens (0: none)
	chunkIdx     int     // its decode window's index (DecodeWindows: −chunk)
	kept         float64 // sparse attention: keys a query attends to
	idxHeads     float64 // sparse indexer query heads
	idxDim       float64 // sparse indexer key width
	hidden       float64
	actBytesTok  float64 // expert activations per (token, expert) pair, bytes
	sliding      bool
	sparseLayers bool
	cgTop        int         // RooflineOptions.CUDAGraphMaxTokens
	cg           *CUDAGraphs // RooflineOptions.CUDAGraphs' graphs (nil: CUDAGraphTokens under cgTop)
	// decodeWindows: the windows whose Σ min(kv+1, W) a pass reads
	// (DecodeWindows): the sliding window at winIdx, the kept keys at
	// keptIdx, each present only for a model with such layers
	decodeWindows   []int
	winIdx, keptIdx int
	// qkNormARs: all-reduces of the per-token q/k variances per pass
	// (model.Arch.QKNormAcrossHeads at TP > 1, one per layer), 8 bytes a
	// token each
	qkNormARs float64
	// mla: the multi-head latent attention layers' constants (nil: none)
	mla *mlaRoof
	// dsv4: DeepSeek-V4's attention cores by layer kind (nil: none), the
	// window's and the CSA layers' kept lengths' DecodeWindows indices
	dsv4                    map[model.AttnKind]*DSV4Core
	dsv4WinIdx, dsv4KeptIdx int
	// a2a: a point-to-point all2all backend (nil: the all-gather and
	// reduce-scatter over the DP ranks); a2aMaxX > 0: the MoE tokens X above
	// which the all-gather and reduce-scatter run instead
	// (RooflineOptions.All2AllMaxTokens)
	a2a     *A2A
	a2aMaxX float64
	// gdn: the linear-attention layers' kernels (nil: none); attention
	// projections of their own format (model.Arch.AttnDtype): aBytes,
	// flopsA, attnOwn (false: the weights' format)
	gdn            *GDNCore
	aBytes, flopsA float64
	attnOwn        bool
}

// hyGroup is a group of layers of one kind.
type hyGroup struct {
	n    float64
	attn model.AttnKind
	moe  bool
	// ffn: the dense FFN's gate_up and down GEMMs, or a MoE layer's shared
	// experts' (nk = 0: none)
	ffn [2]gemmConst
	// idx: a sparse layer's indexer projections (q, k)
	idx [2]gemmConst
	// proj: a linear-attention layer's projections (model.Arch.
	// LinearProjections), in place of the QKV and output GEMMs
	proj []gemmConst
	// latent: a MoE layer's projections into and out of the latent experts'
	// width (model.Arch.LatentProjections, replicated; nil: none)
	latent []gemmConst
	// bf16: a DeepSeek-V4 layer's bf16 projections (model.Arch.
	// DSV4BF16Projections: compressors, the indexer's weights_proj)
	bf16 []gemmConst
	// memory-bound bytes per token: norms, q/k norm, dense/shared activation
	memBytesPerToken float64
}

// newHybrid builds the per-group constants of a MoE or mixed-attention
// model for layout p (Parallel.TP = the roofline's TP).
func newHybrid(arch *model.Arch, sys *hardware.System, p model.Parallel, prm RooflineParams, kvBytes float64) (*hybrid, error) {
	tp := p.TP
	h := float64(arch.Hidden)
	d := float64(arch.HeadDim)
	qHeads := float64(arch.Heads / tp)
	kvHeads := float64(arch.KVHeadsPerGPU(tp))
	hy := &hybrid{layers: float64(arch.Layers), hidden: h, dp: p.DP, window: float64(arch.SlidingWindow)}
	if arch.AttnDtype != "" && arch.MLA == nil {
		ad := arch.AttentionDtype()
		hy.attnOwn, hy.aBytes, hy.flopsA = true, ad.Bytes(), sys.Flops(ad)*prm.ComputeEfficiency
	}
	for _, g := range arch.Groups() {
		gr := hyGroup{n: float64(g.Count), attn: g.Kind.Attn, moe: g.Kind.MoE}
		gr.memBytesPerToken = 2 * 8 * h
		if g.Kind.Attn == model.AttnLinear {
			// no q/k norm or rotary embedding; the gated RMSNorm reads the
			// core's output and the gate z and writes the result (bf16)
			l := arch.Linear
			gr.memBytesPerToken += 6 * float64(l.ValueHeads*l.ValueDim/tp)
			for _, f := range arch.LinearProjections(tp) {
				gr.proj = append(gr.proj, gemmConstOf(f))
			}
			if hy.gdn == nil {
				hy.gdn = NewGDNCore(l, tp, sys.BF16Flops*prm.ComputeEfficiency, sys.MemBW*prm.MemoryEfficiency)
			}
		} else if arch.QKNorm {
			gr.memBytesPerToken += 2 * 2 * (qHeads + kvHeads) * d
			if arch.QKNormAcrossHeads && tp > 1 {
				// the variance kernel reads q and k once more
				gr.memBytesPerToken += 2 * (qHeads + kvHeads) * d
				hy.qkNormARs += float64(g.Count)
			}
		}
		if inter := arch.FFNIntermediate(g.Kind); inter > 0 {
			i := float64((inter + tp - 1) / tp)
			gr.ffn = [2]gemmConst{{n: 2 * i, k: h, nk: 2 * i * h}, {n: h, k: i, nk: h * i}}
			gr.memBytesPerToken += 6 * i
		}
		if g.Kind.MoE {
			for _, f := range arch.LatentProjections() {
				gr.latent = append(gr.latent, gemmConstOf(f))
			}
		}
		if g.Kind.Attn == model.AttnSparse {
			s := arch.Sparse
			qn := float64(s.IndexHeads * s.IndexDim)
			kn := float64(s.IndexDim)
			gr.idx = [2]gemmConst{{n: qn, k: h, nk: qn * h}, {n: kn, k: h, nk: kn * h}}
			hy.kept = float64(s.KeptTokens())
			hy.idxHeads, hy.idxDim = float64(s.IndexHeads), kn
			hy.sparseLayers = true
		}
		if g.Kind.Attn == model.AttnSliding {
			hy.sliding = true
		}
		if g.Kind.Attn == model.AttnChunked {
			hy.chunk = float64(arch.AttentionChunk)
		}
		if arch.DSV4 != nil {
			// DeepSeek-V4: its projections in place of QKV and output, the
			// mHC streams and the q/kv norms (read and write q_lora + d bf16
			// elements) beside the residual norms
			for _, f := range arch.DSV4Projections(tp, g.Kind.Attn) {
				gr.proj = append(gr.proj, gemmConstOf(f))
			}
			for _, f := range arch.DSV4BF16Projections(g.Kind.Attn) {
				gr.bf16 = append(gr.bf16, gemmConstOf(f))
			}
			gr.memBytesPerToken += MHCBytesPerToken(arch) + 4*float64(arch.DSV4.QLoraRank+arch.HeadDim)
			if hy.dsv4 == nil {
				hy.dsv4 = map[model.AttnKind]*DSV4Core{}
			}
			hy.dsv4[g.Kind.Attn] = NewDSV4Core(arch, g.Kind.Attn, tp, kvBytes, sys.BF16Flops*prm.ComputeEfficiency,
				sys.Flops(model.FP8)*prm.ComputeEfficiency, sys.MemBW*prm.MemoryEfficiency)
		}
		if g.Kind.Attn == model.AttnMLA {
			if hy.mla == nil {
				hy.mla = newMLARoof(arch, sys, tp, arch.AttentionDtype(), kvBytes, prm)
			}
			// norms, the q_a and kv_a norms, rope and the cache write
			// replace the GQA layer's
			gr.memBytesPerToken += hy.mla.memBytesPerToken - 2*8*h
			if arch.MLA.OutputGate {
				// the output gate's sigmoid multiply
				gr.memBytesPerToken += MLAOutputGateBytes(arch, tp)
			}
		}
		hy.groups = append(hy.groups, gr)
	}
	if hy.sliding {
		hy.winIdx = AddWindow(&hy.decodeWindows, arch.SlidingWindow)
	}
	if hy.sparseLayers {
		hy.keptIdx = AddWindow(&hy.decodeWindows, arch.Sparse.KeptTokens())
	}
	if hy.chunk > 0 {
		hy.chunkIdx = AddWindow(&hy.decodeWindows, -arch.AttentionChunk)
	}
	if hy.mla != nil && hy.mla.sparse {
		hy.mla.decodeWindowKeptAt = AddWindow(&hy.decodeWindows, arch.MLA.Indexer.TopK)
	}
	if hy.dsv4 != nil {
		hy.dsv4WinIdx, hy.dsv4KeptIdx = AddDSV4Windows(&hy.decodeWindows, arch)
	}
	if m := arch.MoE; m != nil {
		ed := arch.ExpertDtype()
		he := float64(arch.ExpertHidden())
		hy.moeLayers = float64(arch.MoELayers())
		hy.experts, hy.topk, hy.moeEP = m.Experts, m.TopK, p.MoEEP()
		hy.localExperts = float64((m.Experts + p.MoEEP() - 1) / p.MoEEP())
		hy.expertInter = float64((m.Intermediate + p.MoETP() - 1) / p.MoETP())
		hy.expertW = 3 * he * hy.expertInter
		hy.expertBytes = ed.Bytes()
		hy.flopsE = sys.Flops(ed) * prm.ComputeEfficiency
		e := float64(m.Experts)
		hy.router = gemmConst{n: e, k: h, nk: e * h}
		hy.moeLatencyNs = prm.MoELatencyUs * 1e3
		// per (token, expert) pair: read the token (bf16), write the
		// gate/up output and read it back (2·I_g each way, bf16), write
		// the expert's output (bf16): 2·(2h_e + 4·I_g) bytes
		hy.actBytesTok = 2 * (2*he + 4*hy.expertInter)
		hy.expS = make([]float64, tabulatedMoETokens*p.DP+1)
		for X := range hy.expS {
			hy.expS[X] = hy.expertsSecondsAt(float64(X), sys.MemBW*prm.MemoryEfficiency)
		}
	}
	if p.DP > 1 {
		if !(sys.IntraNodeBW > 0) {
			return nil, fmt.Errorf("perf: roofline: system %s needs IntraNodeBW > 0 for data parallelism", sys.Name)
		}
		dp := float64(p.DP)
		hy.dpFixedS = prm.AllReduceLatencyUs * 1e-6
		// ring all-gather (or reduce-scatter) of X·h bf16 elements over dp
		// GPUs: each GPU moves (dp−1)/dp of the whole message, at the ring's
		// slowest link (the network when the ranks span nodes); the tokens
		// are gathered at the experts' width h_e (latent experts project
		// them before dispatch)
		hy.dpSPerToken = (dp - 1) / dp * float64(arch.ExpertHidden()) * 2 / sys.CollectiveBW(p.GPUs())
	}
	return hy, nil
}

// WindowPairs is Σ_{i=p+1..S} min(i, w): the query–key pairs of a causal
// chunk of queries p+1..S when each attends to at most w keys (w ≤ 0: no
// limit, sNew·(S + p + 1)/2).
func WindowPairs(sNew, p, w float64) float64 {
	S := p + sNew
	if w <= 0 || S <= w {
		return sNew * (S + p + 1) / 2
	}
	var pairs float64
	if hi := math.Min(S, w); hi >= p+1 { // queries whose keys all fit the window
		pairs += (hi - p) * (p + 1 + hi) / 2
	}
	lo := math.Max(p+1, w+1)
	pairs += (S - lo + 1) * w
	return pairs
}

// ChunkPairs is Σ_{i=p+1..p+sNew} ((i−1) mod c + 1): the query–key pairs of
// a causal chunk of queries p+1..p+sNew in chunked local attention, each
// query attending to the keys of its own chunk of c tokens up to itself:
// F(S) − F(p) with F(S) = ⌊S/c⌋·c(c+1)/2 + r(r+1)/2, r = S mod c.
func ChunkPairs(sNew, p, c float64) float64 {
	f := func(s float64) float64 {
		q := math.Floor(s / c)
		r := s - q*c
		return q*c*(c+1)/2 + r*(r+1)/2
	}
	return f(p+sNew) - f(p)
}

// contextAttn prices the attention of one prefill chunk in a layer of kind
// k (see contextAttentionSeconds for the full-attention formula):
//   - sliding: queries see at most W keys, pairs = WindowPairs(sNew, p, W),
//     and the chunk reads the K,V of min(S, W + sNew) tokens;
//   - chunked: pairs = ChunkPairs(sNew, p, c), and the chunk reads the K,V
//     from the start of its first query's chunk, S − ⌊p/c⌋·c tokens;
//   - sparse: the attention sees at most K = KeptTokens keys the same way,
//     and the indexer scores every cached key for every new query:
//     F = 2·H_idx·d_idx·pairs_full, B = 2·d_idx·(S + sNew) (bf16 keys read
//     and the new ones written).
func (r *Roofline) contextAttn(k model.AttnKind, sNew, p float64) float64 {
	hy := r.hy
	switch k {
	case model.AttnSliding:
		S := p + sNew
		return opSeconds(4*r.nd*WindowPairs(sNew, p, hy.window),
			r.kvBytesTokenLayer*(math.Min(S, hy.window+sNew)+sNew)+r.qoBytesPerToken*sNew, r.flopsBF16, r.memBW)
	case model.AttnChunked:
		S := p + sNew
		return opSeconds(4*r.nd*ChunkPairs(sNew, p, hy.chunk),
			r.kvBytesTokenLayer*(S-math.Floor(p/hy.chunk)*hy.chunk+sNew)+r.qoBytesPerToken*sNew, r.flopsBF16, r.memBW)
	case model.AttnSparse:
		S := p + sNew
		attn := opSeconds(4*r.nd*WindowPairs(sNew, p, hy.kept),
			r.kvBytesTokenLayer*(math.Min(S, hy.kept+sNew)+sNew)+r.qoBytesPerToken*sNew, r.flopsBF16, r.memBW)
		idx := opSeconds(2*hy.idxHeads*hy.idxDim*WindowPairs(sNew, p, 0), 2*hy.idxDim*(S+sNew), r.flopsBF16, r.memBW)
		return attn + idx
	}
	return r.contextAttentionSeconds(sNew, p)
}

// generationAttn prices decode attention of a layer of kind k for the
// decode batch: full attention over kv+1 keys each; sliding over min(kv+1,
// W); sparse over min(kv+1, K) plus the indexer over all kv+1 keys
// (F = 2·H_idx·d_idx·ctx, B = 2·d_idx·(ctx + D)); chunked over
// kv mod c + 1. kvFull, ctxWin, ctxKept, ctxChunk are the sums of the keys
// each decode attends to.
func (r *Roofline) generationAttn(k model.AttnKind, D, kvSum, ctxWin, ctxKept, ctxChunk float64) float64 {
	if D <= 0 {
		return 0
	}
	hy := r.hy
	keys := func(ctx float64) float64 {
		return opSeconds(4*r.nd*ctx, r.kvBytesTokenLayer*(ctx+D)+r.qoBytesPerToken*D, r.flopsBF16, r.memBW)
	}
	switch k {
	case model.AttnSliding:
		return keys(ctxWin)
	case model.AttnChunked:
		return keys(ctxChunk)
	case model.AttnSparse:
		ctx := kvSum + D
		return keys(ctxKept) + opSeconds(2*hy.idxHeads*hy.idxDim*ctx, 2*hy.idxDim*(ctx+D), r.flopsBF16, r.memBW)
	}
	return r.generationAttentionSeconds(D, kvSum)
}

// expertsSeconds prices the routed experts of one MoE layer on one GPU
// when X tokens enter it (uniform routing):
//
//	A = X·k / moe_ep                          (token, expert) pairs on this GPU
//	D = ceil(E/moe_ep) · (1 − (1 − k/E)^X)     distinct local experts read
//	F = 2 · A · 3·h_e·I_g                      (gate, up and down GEMMs)
//	B = b_e · D · 3·h_e·I_g  +  A · 2·(2h_e + 4·I_g)
//	T = max(F / (P_e·e_c), B / (W·e_m))
//
// I_g = ceil(I_e / moe_tp), h_e the experts' width (model.Arch.
// ExpertHidden: h, or a latent expert's moe_latent_size), b_e the experts' bytes per weight (scales
// included), P_e the peak of their dtype (sys.Flops; weight-only formats
// such as MXFP4 compute in bf16). Only the experts the pass's tokens touch
// are read (ExpectedDistinctExperts), and only active pairs are computed.
func (hy *hybrid) expertsSeconds(X float64, memBW float64) float64 {
	if i := int(X); float64(i) == X && i < len(hy.expS) {
		return hy.expS[i]
	}
	return hy.expertsSecondsAt(X, memBW)
}

// tabulatedMoETokens is the MoE token count per DP rank up to which the
// experts' time is tabulated (vLLM's default max_num_batched_tokens).
const tabulatedMoETokens = 8192

// expertsSecondsAt evaluates expertsSeconds' formula.
func (hy *hybrid) expertsSecondsAt(X float64, memBW float64) float64 {
	if X <= 0 {
		return 0
	}
	A := MoEAssignments(X, hy.topk, hy.moeEP)
	D := hy.localExperts * ExpectedDistinctExperts(X, hy.experts, hy.topk) / float64(hy.experts)
	return opSeconds(2*A*hy.expertW, hy.expertBytes*D*hy.expertW+A*hy.actBytesTok, hy.flopsE, memBW)
}

// hybridBreakdown prices one DP rank's pass b of a hybrid model whose MoE
// layers see X tokens (X = b.Tokens() without data parallelism; the padded
// gathered batch with it, DPMoETokens). Per layer group (n layers):
// memory ops, QKV and output GEMMs (and a sparse layer's indexer
// projections) and the attention of its kind over this rank's x tokens;
// a dense FFN, or a MoE FFN: router GEMM and shared experts on x, routed
// experts on X (expertsSeconds) plus MoELatencyUs (and latent experts'
// projections on x), and with DP an all-gather and a reduce-scatter of
// X·h_e over the DP ranks. Then the TP
// all-reduces, embedding, logits, overhead and the per-layer latency as for
// a dense decoder.
func (r *Roofline) hybridBreakdown(b *Batch, X float64) Breakdown {
	hy := r.hy
	var out Breakdown
	out.OverheadNs, out.HostLaunchNs = OverheadNs(r.passOverheadNs, r.seqOverheadNs, b), b.HostLaunchNs

	var prefill, chunks, kvSum, ctxWin, ctxKept, ctxChunk float64
	var ctxS [model.AttnSWA + 1]float64 // per attention kind, one layer
	for i := range b.Prefill {
		c := &b.Prefill[i]
		if c.NewTokens <= 0 {
			continue
		}
		n, p := float64(c.NewTokens), float64(c.PrefixTokens)
		prefill, chunks = prefill+n, chunks+1
		ctxS[model.AttnFull] += r.contextAttentionSeconds(n, p)
		if hy.sliding {
			ctxS[model.AttnSliding] += r.contextAttn(model.AttnSliding, n, p)
		}
		if hy.sparseLayers {
			ctxS[model.AttnSparse] += r.contextAttn(model.AttnSparse, n, p)
		}
		if hy.chunk > 0 {
			ctxS[model.AttnChunked] += r.contextAttn(model.AttnChunked, n, p)
		}
		if hy.mla != nil {
			ctxS[model.AttnMLA] += hy.mla.ContextSeconds(n, p)
		}
		for k, c := range hy.dsv4 {
			ctxS[k] += c.ContextSeconds(n, p)
		}
	}
	kvSum = float64(b.DecodeKVSum) // the same float as a sum over the requests (Batch)
	if hy.sliding {
		ctxWin = b.WindowSum(hy.winIdx) // Σ min(kv+1, W), exact (Batch)
	}
	if hy.sparseLayers {
		ctxKept = b.WindowSum(hy.keptIdx)
	}
	if hy.chunk > 0 {
		ctxChunk = b.WindowSum(hy.chunkIdx)
	}
	D := float64(b.Decodes)
	x := prefill + D
	if b.SpecTokens > 0 {
		x += float64(b.SpecTokens)
	}
	if x <= 0 {
		return out
	}
	gemm := func(m float64, g gemmConst) float64 { return gemmSeconds(m, g, r.wBytes, r.flopsW, r.memBW) }
	attnGEMM := gemm
	if hy.attnOwn {
		attnGEMM = func(m float64, g gemmConst) float64 { return gemmSeconds(m, g, hy.aBytes, hy.flopsA, r.memBW) }
	}
	qkvO := attnGEMM(x, r.gemms[0]) + attnGEMM(x, r.gemms[1])
	var linCtx, linGen float64
	if hy.gdn != nil {
		linCtx, linGen = hy.gdn.ContextSeconds(prefill, chunks), hy.gdn.GenerationSeconds(D)
		ctxS[model.AttnLinear] = linCtx
	}
	var gemmS, ctxAll, genAll, memS, expS, dispS float64
	var mlaProj, mlaKept float64
	if hy.mla != nil {
		mlaProj = hy.mla.projectionSeconds(x)
		if hy.mla.sparse {
			mlaKept = b.WindowSum(hy.mla.decodeWindowKeptAt)
		}
	}
	for _, g := range hy.groups {
		attn := qkvO
		switch g.attn {
		case model.AttnMLA:
			attn = mlaProj
		case model.AttnLinear, model.AttnCSA, model.AttnHCA, model.AttnSWA:
			attn = 0
			for _, f := range g.proj {
				attn += attnGEMM(x, f)
			}
			for _, f := range g.bf16 {
				attn += gemmSeconds(x, f, 2, r.flopsBF16, r.memBW)
			}
		}
		s := attn + gemm(x, g.ffn[0]) + gemm(x, g.ffn[1]) + gemm(x, g.idx[0]) + gemm(x, g.idx[1])
		if g.moe {
			s += gemmSeconds(x, hy.router, 2, r.flopsBF16, r.memBW)
			routed := hy.expertsSeconds(X, r.memBW) + hy.moeLatencyNs*1e-9
			expS += g.n * routed
			// latent experts: the projections around dispatch and combine
			// on this rank's tokens (serial: not hidden under the shared
			// experts, as the table pricing does)
			for _, f := range g.latent {
				s += gemm(x, f)
			}
			if g.ffn[0].nk > 0 && x <= SharedExpertsStreamTokens {
				// the shared experts run beside the routed ones (their own
				// CUDA stream): the shorter of the two is hidden
				s -= math.Min(gemm(x, g.ffn[0])+gemm(x, g.ffn[1]), routed)
			}
			switch {
			case hy.a2a != nil && (hy.a2aMaxX == 0 || X <= hy.a2aMaxX):
				dispS += g.n * hy.a2a.Seconds(X/float64(hy.dp))
			case hy.dp > 1:
				dispS += g.n * 2 * (hy.dpFixedS + X*hy.dpSPerToken)
			}
		}
		gemmS += g.n * s
		ctxAll += g.n * ctxS[g.attn]
		switch g.attn {
		case model.AttnMLA:
			genAll += g.n * hy.mla.GenerationSeconds(D, kvSum, mlaKept)
		case model.AttnLinear:
			genAll += g.n * linGen
		case model.AttnCSA, model.AttnHCA, model.AttnSWA:
			genAll += g.n * hy.dsv4[g.attn].GenerationSeconds(D, b.WindowSum(hy.dsv4WinIdx), kvSum+D, b.WindowSum(hy.dsv4KeptIdx))
		default:
			genAll += g.n * r.generationAttn(g.attn, D, kvSum, ctxWin, ctxKept, ctxChunk)
		}
		memS += g.n * x * g.memBytesPerToken / r.memBW
	}
	out.GEMMNs = gemmS * 1e9
	out.ContextAttentionNs = ctxAll * 1e9
	out.GenerationAttentionNs = genAll * 1e9
	out.MemoryOpsNs = memS * 1e9
	out.ExpertsNs = expS * 1e9
	out.DispatchNs = dispS * 1e9
	out.EmbeddingNs = x * r.embedBytesPerToken / r.memBW * 1e9
	out.AllReduceNs = (r.numAllReduce*(r.arFixedS+x*r.arSPerToken) +
		hy.qkNormARs*(r.arFixedS+x*r.arSPerToken*4/hy.hidden)) * 1e9
	out.LogitsNs = gemmSeconds(float64(b.Samplers), r.logits, 2, r.flopsBF16, r.memBW) * 1e9
	out.KernelLatencyNs = hy.layers * r.layerLatencyNs
	out.DraftNs = DraftNs(b, hy.layers, r.Breakdown)
	return out
}

// GroupPassTime prices the lockstep pass of the DP ranks of one worker
// (one batch per rank; an empty batch is an idle rank running vLLM's dummy
// batch): every rank's MoE layers compute X = DP × max_r x_r tokens, and
// the pass ends with the slowest rank. Without data parallelism it is
// PassTime of the one batch.
func (r *Roofline) GroupPassTime(bs []Batch) int64 {
	cgTop, cg := 0, (*CUDAGraphs)(nil)
	if r.hy != nil {
		cgTop, cg = r.hy.cgTop, r.hy.cg
	}
	return groupPassTime(bs, r.dp(), cg, cgTop, r.PassTime, func(b *Batch, X float64) float64 {
		return r.hybridBreakdown(b, X).PassNs(r.overlapCPU)
	})
}

// dp is the roofline's data-parallel size (1 for a dense decoder).
func (r *Roofline) dp() int {
	if r.hy == nil {
		return 1
	}
	return r.hy.dp
}

// groupPassTime is GroupPassTime for any source: rankNs(b, X) prices rank
// b's pass when the MoE layers see X tokens (every rank padded to the
// largest, then to its CUDA-graph size: PadGroup).
func groupPassTime(bs []Batch, dp int, cg *CUDAGraphs, cgTop int, single func(*Batch) int64, rankNs func(*Batch, float64) float64) int64 {
	if dp <= 1 && len(bs) == 1 {
		return single(&bs[0])
	}
	maxX := 1 // an idle rank's dummy batch is one token
	for i := range bs {
		maxX = max(maxX, bs[i].Tokens())
	}
	X := DPMoETokens(dp, PadGroup(cg, bs, maxX, cgTop))
	var worst float64
	for i := range bs {
		worst = math.Max(worst, rankNs(&bs[i], X))
	}
	return PassNs(worst)
}

// DecodeWindows returns the windows whose Σ min(kv+1, W) the model's pass
// reads (perf.WindowUser): the sliding window and the sparse layers' kept
// keys, those the model has; nil for a dense or full-attention model.
func (r *Roofline) DecodeWindows() []int {
	if r.hy == nil {
		return nil
	}
	return r.hy.decodeWindows
}

package aic

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// hybrid is what the aic source needs beyond a dense decoder: per layer
// group its attention kind and FFN, the routed experts' curve, the
// sliding-window attention grids and the data-parallel collectives, with
// the per-token costs tabulated.
type hybrid struct {
	groups []aicGroup
	par    model.Parallel

	ctxW, genW   *attnGrid // sliding-window grids (window rows, or the full grids at min(S, W))
	windowed     bool      // ctxW/genW are the tables' window rows
	window, kept float64
	idxHeads     float64
	idxDim       float64

	moe       *moeCurve
	moeLayers float64
	// dg: the routed experts on vLLM 0.11.1–0.12's padded DeepGEMM path
	// (deepgemm_moe.go), in place of the moe curve; nil otherwise
	dg      *deepGEMMExperts
	gather  collective // DP all-gather of X·h_e before the experts (nccl.go; netCollective across nodes)
	scatter collective // DP reduce-scatter of X·h_e after them
	// expertHidden: h_e, the routed experts' width (model.Arch.ExpertHidden:
	// the hidden size, or latent experts' moe_latent_size)
	expertHidden float64
	routerN      float64
	// qkNormARs is the all-reduces of the per-token q/k variances per pass
	// (model.Arch.QKNormAcrossHeads at TP > 1: one per layer), each of two
	// fp32 per token, priced as 4 bf16 elements on the TP all-reduce curve
	qkNormARs  float64
	anySliding bool
	anySparse  bool
	// chunk: chunked local attention's chunk, tokens (0: none), its decode
	// window at chunkIdx (DecodeWindows: −chunk)
	chunk    float64
	chunkIdx int
	// decodeWindows: the windows whose Σ min(kv+1, W) a pass reads
	// (DecodeWindows): the sliding window (at winIdx) when priced with the
	// full-attention grid, the sparse layers' kept keys (at keptIdx)
	decodeWindows   []int
	winIdx, keptIdx int

	// mla: the MLA layers' measured cores (mla.go); nil without MLA
	mla *mlaGrids
	// dsv4: DeepSeek-V4's measured cores and mHC (dsv4.go); nil without
	dsv4 *dsv4Grids
	// gdn: the linear-attention layers' kernels (gdn.go); nil without them
	gdn *gdnCosts

	// tabulated ns by the rank's tokens x (0..maxTokens): GEMMs, memory
	// ops; by the MoE tokens X (0..DP·maxTokens): experts, DP collectives
	gemmNs, memNs []float64
	expNs, dispNs []float64
	// a2a: a point-to-point all2all backend's dispatch and combine
	// (all2all.go); nil for the all-gather and reduce-scatter. a2aMaxX > 0:
	// the MoE tokens X above which the all-gather and reduce-scatter (gather,
	// scatter) run instead (Options.All2AllMaxTokens)
	a2a     *a2aCurve
	a2aMaxX float64
	// sharedNs: one MoE layer's shared experts by the rank's tokens, ns, up
	// to perf.SharedExpertsStreamTokens, when they run on their own stream
	// (shared_overlap.go); nil otherwise
	sharedNs []float64
	// fusedShared: the shared expert's GEMMs when SGLang runs it inside the
	// routed experts' kernel (shared_fusion.go); nil otherwise
	fusedShared []model.GEMMShape
}

// aicGroup is a group of layers of one kind.
type aicGroup struct {
	n   float64
	k   model.LayerKind
	ffn []model.GEMMShape // dense FFN or shared experts (gate_up, down)
	// attn: an MLA layer's projections (model.Arch.MLAProjections, at the
	// attention weights' format); empty for a DeepSeek-V4 layer (its module
	// rows hold them); nil for a GQA layer (QKV and o_proj)
	attn []model.GEMMShape
	idx  []model.GEMMShape // sparse indexer projections
	// memory-bound bytes per token and kernels per layer
	memBytes, memOps float64
}

// setupHybrid builds the hybrid part of m for a MoE or mixed-attention
// model at layout par (after the dense part of New has built the GEMM and
// full-attention grids and the all-reduce curve). Errors name the table.
func (m *Model) setupHybrid(arch *model.Arch, sys *hardware.System, par model.Parallel, sysDir string,
	opt Options, kd model.Dtype, find func(string) (string, error)) error {
	tp := par.TP
	hy := &hybrid{par: par, window: float64(arch.SlidingWindow)}
	wd, _, _ := perf.ResolveDtypes(arch, opt.WeightDtype, opt.KVDtype)
	fused := sglangFusedSharedExperts(arch, opt.Backend, par, sys.SMVersion, wd)
	h := float64(arch.Hidden)
	qk := float64(arch.Heads/tp+arch.KVHeadsPerGPU(tp)) * float64(arch.HeadDim)
	for _, g := range arch.Groups() {
		gr := aicGroup{n: float64(g.Count), k: g.Kind, memBytes: 2*8*h + 4*qk, memOps: 4}
		if g.Kind.Attn == model.AttnLinear {
			// two residual norms and the gated RMSNorm (read the core's
			// output and the gate z, write: 6·H_v·d_v/t bytes) in place of
			// the rotary embedding; no q/k norm. The projections are its own.
			l := arch.Linear
			gr.memBytes = 2*8*h + 6*float64(l.ValueHeads*l.ValueDim/tp)
			gr.attn = arch.LinearProjections(tp)
		} else if arch.QKNorm {
			gr.memBytes += 4 * qk
			gr.memOps++
			if arch.QKNormAcrossHeads && tp > 1 {
				gr.memOps++ // the variance kernel before the all-reduce
				hy.qkNormARs += float64(g.Count)
			}
		}
		inter := arch.FFNIntermediate(g.Kind)
		if fused && g.Kind.MoE {
			inter = 0 // the shared expert runs inside the experts' kernel
		}
		if inter > 0 {
			i := (inter + tp - 1) / tp
			gr.ffn = []model.GEMMShape{{Name: "gate_up", N: 2 * i, K: arch.Hidden}, {Name: "down", N: arch.Hidden, K: i}}
			gr.memBytes += 6 * float64(i)
		} else {
			gr.memOps-- // no SiLU-and-mul outside the experts
		}
		if g.Kind.MoE {
			// latent experts' projections into and out of their width
			// (replicated, the weights' format), on the rank's tokens
			gr.ffn = append(gr.ffn, arch.LatentProjections()...)
		}
		switch g.Kind.Attn {
		case model.AttnMLA:
			// the MLA module holds its norms, rotary embedding and cache
			// write: the two residual norms remain (and the FFN's activation)
			gr.memBytes -= 4 * qk
			gr.memOps--
			gr.attn = arch.MLAProjections(tp)
			if arch.MLA.OutputGate {
				// the output gate's sigmoid multiply
				gr.memBytes += perf.MLAOutputGateBytes(arch, tp)
				gr.memOps++
			}
		case model.AttnSparse:
			s := arch.Sparse
			gr.idx = []model.GEMMShape{{Name: "index_q", N: s.IndexHeads * s.IndexDim, K: arch.Hidden}, {Name: "index_k", N: s.IndexDim, K: arch.Hidden}}
			hy.kept, hy.idxHeads, hy.idxDim = float64(s.KeptTokens()), float64(s.IndexHeads), float64(s.IndexDim)
			hy.anySparse = true
		case model.AttnSliding:
			hy.anySliding = true
		case model.AttnChunked:
			hy.chunk = float64(arch.AttentionChunk)
		case model.AttnCSA, model.AttnHCA, model.AttnSWA:
			// the module holds its projections, norms, rotary embedding and
			// cache writes (dsv4Core; the mHC kernels: dsv4Grids.mhc)
			gr.memBytes -= 4 * qk
			gr.memOps--
			gr.attn = []model.GEMMShape{}
		}
		hy.groups = append(hy.groups, gr)
	}
	if hy.anySliding {
		if err := m.slidingGrids(arch, sys, hy, kd); err != nil {
			return err
		}
		if !hy.windowed {
			hy.winIdx = perf.AddWindow(&hy.decodeWindows, arch.SlidingWindow)
		}
	}
	if hy.anySparse {
		hy.keptIdx = perf.AddWindow(&hy.decodeWindows, arch.Sparse.KeptTokens())
	}
	if hy.chunk > 0 {
		// no table times chunked local attention: the full-attention grids
		// over the keys of each query's chunk, a stand-in of those layers
		hy.chunkIdx = perf.AddWindow(&hy.decodeWindows, -arch.AttentionChunk)
		n := arch.ChunkedLayers()
		m.fallback(OpContextAttention, n, fmt.Sprintf(
			"chunked local attention (%d-token chunks) priced with the full-attention grids over each query's chunk (no table times it)", arch.AttentionChunk))
		m.fallbacks[OpGenerationAttention] += n
	}
	if arch.MLA != nil {
		var err error
		if hy.mla, err = m.mlaSetup(arch, sys, tp, kd, sysDir, opt); err != nil {
			return err
		}
	}
	if arch.DSV4 != nil {
		if err := m.dsv4Setup(arch, sys, tp, kd, sysDir, opt, hy); err != nil {
			return err
		}
	}
	if arch.Linear != nil {
		var err error
		if hy.gdn, err = m.gdnSetup(arch, sys, tp, sysDir, opt); err != nil {
			return err
		}
	}
	if arch.MoE != nil {
		hy.moeLayers = float64(arch.MoELayers())
		hy.routerN = float64(arch.MoE.Experts)
		hy.expertHidden = float64(arch.ExpertHidden())
		if fused {
			hy.fusedShared = fusedSharedGEMMs(arch, tp)
			m.notes = append(m.notes, "SGLang fuses the shared expert into the routed experts' kernel (deepseek_v2.py determine_num_fused_shared_experts): priced inside the experts without kernels of its own")
		}
		if err := m.moeCurveFor(arch, sys, par, sysDir, opt, hy); err != nil {
			return err
		}
		if wd, _, err := perf.ResolveDtypes(arch, opt.WeightDtype, opt.KVDtype); err == nil &&
			deepGEMMPadded(opt, sys.SMVersion, arch.ExpertDtype(), wd, par) {
			hy.dg = newDeepGEMMExperts(arch, par)
			m.notes = append(m.notes, deepGEMMNote(opt.Version, hy.dg))
		}
		switch {
		case par.DP > 1 && par.EP && perf.IsAll2All(opt.All2AllBackend):
			if err := m.a2aSetup(arch, sys, par, opt, sysDir, hy); err != nil {
				return err
			}
			// passes of more tokens than the all2all carries gather them
			if hy.a2aMaxX = float64(opt.All2AllMaxTokens); hy.a2aMaxX > 0 && par.DP*opt.MaxTokens > opt.All2AllMaxTokens {
				if err := m.dpCollectives(sys, par, sysDir, hy); err != nil {
					return err
				}
			}
		case par.DP > 1:
			if err := m.dpCollectives(sys, par, sysDir, hy); err != nil {
				return err
			}
		}
	}
	m.hy = hy
	return nil
}

// slidingGrids builds the sliding-window attention grids from the
// attention tables' rows measured with window_size = W (a bf16 KV cache's
// for an fp8 one the table lacks). When either table has no such rows (or
// is missing), both price a sliding layer with the full-attention grids over
// at most W keys: a fallback for both ops, noted.
func (m *Model) slidingGrids(arch *model.Arch, sys *hardware.System, hy *hybrid, kd model.Dtype) error {
	heads, kvHeads := int64(arch.Heads/hy.par.TP), int64(arch.KVHeadsPerGPU(hy.par.TP))
	var why []string
	for _, a := range []struct {
		table string
		kind  attnKind
		dst   **attnGrid
	}{{TableContextAttention, contextKind, &hy.ctxW}, {TableGenerationAttention, generationKind, &hy.genW}} {
		var p string
		for _, s := range m.sources {
			if s.Table == a.table {
				p = s.Path
			}
		}
		if p == "" {
			why = append(why, a.table+" is missing")
			continue
		}
		rows, err := loadAttention(p)
		if err != nil {
			return err
		}
		sel := attnSelect{kind: a.kind, heads: heads, kvHeads: kvHeads, headDim: int64(arch.HeadDim),
			kvDtype: string(kd), kvBytes: kd.Bytes(), flops: sys.BF16Flops, memBW: sys.MemBW, window: int64(arch.SlidingWindow),
			capByLarger: m.capAttention}
		g, err := newAttnGrid(rows, sel)
		if err != nil && kd != model.BF16 {
			sel.kvDtype = string(model.BF16)
			g, err = newAttnGrid(rows, sel)
		}
		if err != nil {
			why = append(why, fmt.Sprintf("%s has no window_size %d rows (%v)", a.table, arch.SlidingWindow, err))
			continue
		}
		*a.dst = g
	}
	hy.windowed = hy.ctxW != nil && hy.genW != nil
	if !hy.windowed {
		hy.ctxW, hy.genW = nil, nil
		note := fmt.Sprintf("%s; sliding layers priced with the full-attention grid over at most %d keys",
			strings.Join(why, "; "), arch.SlidingWindow)
		m.fallback(OpContextAttention, arch.SlidingLayers(), note)
		m.fallbacks[OpGenerationAttention] += arch.SlidingLayers()
	}
	return nil
}

// moeCurveFor finds the routed experts' curve: the model's dtype, shape
// and layout (moe_tp, moe_ep) in the nearest table version that measured
// it plausibly; else, in the nearest version with that dtype and layout,
// the nearest measured shape scaled by the roofline ratio (a fallback); a
// dtype or layout no version measured falls back further (moeFallback).
func (m *Model) moeCurveFor(arch *model.Arch, sys *hardware.System, par model.Parallel, sysDir string, opt Options, hy *hybrid) error {
	ed := arch.ExpertDtype()
	label := moeDtypeLabel(ed, opt.Backend, sys.SMVersion, opt.MoEBackend)
	routing := resolveMoERouting(opt.MoERouting, arch.Architecture)
	mo := arch.MoE
	shape := moeShape{h: int64(arch.ExpertHidden()), inter: int64(mo.Intermediate), k: int64(mo.TopK), e: int64(mo.Experts),
		tp: int64(par.MoETP()), ep: int64(par.MoEEP())}
	if flashInferCutlassFP8(opt, sys.SMVersion, ed, par) {
		ok, err := m.flashInferCutlassCurve(opt.Version, routing, shape, label, ed, sys, sysDir, hy)
		if err != nil || ok {
			return err
		}
		m.fallback(OpMoE, int(hy.moeLayers), fmt.Sprintf("%s (trtllm): no %s rows of %s for this shape and layout "+
			"(vLLM %s runs FlashInfer's CUTLASS fused MoE); the vLLM table's Triton experts used", TableMoE, label, cutlassMoEKernel, opt.Version))
	}
	exclude := map[string]string{}
	var standIn *moeCurve
	var standInSrc Source
	var standInShape moeShape
	var first Source
	var firstRows []moeRow
	kernelNoted := false
	for {
		src, err := locateExcept(sysDir, m.system, opt.Backend, opt.Version, TableMoE, exclude)
		if err != nil {
			break
		}
		rows, err := loadMoE(src.Path)
		if err != nil {
			return err
		}
		if firstRows == nil {
			first, firstRows = src, rows
		}
		if kr := moeKernelRows(rows, opt.MoEBackend); len(kr) < len(rows) {
			// the kernel vLLM's --moe-backend asks for, where this version
			// timed it for the shape and layout
			if c, ok := moeRouted(kr, label, shape, sys, ed, routing); ok && moeImplausible(kr, c, label) == "" {
				src.Table = TableMoE + " (" + routedLabel(label, c) + ", " + opt.MoEBackend + ")"
				m.sources = append(m.sources, src)
				hy.moe = c
				return nil
			}
			// the kernel's rows of another shape or layout, scaled by the
			// roofline ratio: its efficiency, not another kernel's
			if near, ok := nearestMoEShape(kr, label, shape, true, routing); ok {
				if c, ok := moeRouted(kr, label, near, sys, ed, routing); ok {
					src.Table = TableMoE + " (" + routedLabel(label, c) + ", " + opt.MoEBackend + ", stand-in shape)"
					m.sources = append(m.sources, src)
					m.fallback(OpMoE, int(hy.moeLayers), fmt.Sprintf("%s (%s): the %s kernel (moe_backend) is timed for %s experts of hidden %d × %d, %d experts top-%d at moe_tp %d, moe_ep %d only; scaled by the roofline ratio",
						TableMoE, src.ReadFrom, opt.MoEBackend, label, near.h, near.inter, near.e, near.k, near.tp, near.ep))
					hy.moe = newMoEStandIn(c, shape, sys, ed)
					return nil
				}
			}
			if !kernelNoted {
				kernelNoted = true
				m.fallback(OpMoE, int(hy.moeLayers), fmt.Sprintf("%s (%s): no %s rows of the %s kernel (moe_backend) for this shape and layout; the table's other kernel used",
					TableMoE, src.ReadFrom, label, opt.MoEBackend))
			}
		}
		if c, ok := moeRouted(rows, label, shape, sys, ed, routing); ok {
			if why := moeImplausible(rows, c, label); why != "" {
				exclude[src.ReadFrom] = why
				continue
			}
			src.Table = TableMoE + " (" + routedLabel(label, c) + ")"
			m.sources = append(m.sources, src)
			hy.moe = c
			return nil
		}
		exclude[src.ReadFrom] = fmt.Sprintf("no %s curve for hidden %d, experts %d × %d, top-%d at moe_tp %d, moe_ep %d",
			label, shape.h, shape.e, shape.inter, shape.k, shape.tp, shape.ep)
		if standIn == nil {
			if near, ok := nearestMoEShape(rows, label, shape, false, routing); ok {
				if c, ok := moeRouted(rows, label, near, sys, ed, routing); ok && moeImplausible(rows, c, label) == "" {
					standIn, standInSrc, standInShape = c, src, near
				}
			}
		}
	}
	if standIn != nil {
		standInSrc.Table = TableMoE + " (" + routedLabel(label, standIn) + ", stand-in shape)"
		m.sources = append(m.sources, standInSrc)
		m.fallback(OpMoE, int(hy.moeLayers), fmt.Sprintf("%s: no version measured %s experts of hidden %d × %d, %d experts top-%d at moe_tp %d, moe_ep %d; the nearest measured shape (hidden %d × %d, %d experts top-%d) scaled by the roofline ratio",
			TableMoE, label, shape.h, shape.inter, shape.e, shape.k, shape.tp, shape.ep,
			standInShape.h, standInShape.inter, standInShape.e, standInShape.k))
		hy.moe = newMoEStandIn(standIn, shape, sys, ed)
		return nil
	}
	return m.moeFallback(shape, label, ed, routing, first, firstRows, versionsTried(exclude), sys, hy)
}

// moeFallback prices the routed experts when no table version measured the
// model's dtype and layout (moeCurveFor): from the nearest version's table
// (rows; nil when there is no MoE table), the nearest measured shape and
// layout of the same dtype, else of bf16, else of any other dtype, its times
// scaled by the roofline ratio at saturation (newMoEStandIn, which carries
// the weight bytes and peak of each dtype); else the roofline itself
// (rooflineMoECurve). Each is a fallback of every MoE layer.
func (m *Model) moeFallback(shape moeShape, label string, ed model.Dtype, routing string, src Source, rows []moeRow, tried string,
	sys *hardware.System, hy *hybrid) error {
	want := fmt.Sprintf("%s experts of hidden %d × %d, %d experts top-%d at moe_tp %d, moe_ep %d",
		label, shape.h, shape.inter, shape.e, shape.k, shape.tp, shape.ep)
	labels := []string{label, string(model.BF16)}
	var others []string
	seen := map[string]bool{label: true, string(model.BF16): true}
	for i := range rows {
		if l := rows[i].Dtype; !seen[l] {
			seen[l] = true
			others = append(others, l)
		}
	}
	sort.Strings(others)
	for _, l := range append(labels, others...) {
		d, ok := moeLabelDtype(l)
		if !ok {
			continue
		}
		near, ok := nearestMoEShape(rows, l, shape, true, routing)
		if !ok {
			continue
		}
		c, ok := moeRouted(rows, l, near, sys, d, routing)
		if !ok || moeImplausible(rows, c, l) != "" {
			continue
		}
		src.Table = TableMoE + " (" + routedLabel(l, c) + ", stand-in for " + label + ")"
		m.sources = append(m.sources, src)
		m.fallback(OpMoE, int(hy.moeLayers), fmt.Sprintf("%s: no version measured %s (versions tried: %s); %s experts of hidden %d × %d, %d experts top-%d at moe_tp %d, moe_ep %d (%s) scaled by the roofline ratio",
			TableMoE, want, tried, l, near.h, near.inter, near.e, near.k, near.tp, near.ep, src.ReadFrom))
		hy.moe = newMoEStandIn(c, shape, sys, ed)
		return nil
	}
	m.fallback(OpMoE, int(hy.moeLayers), fmt.Sprintf("%s: no version measured %s or any stand-in (versions tried: %s); priced by the roofline with the system's memory model",
		TableMoE, want, tried))
	hy.moe = rooflineMoECurve(shape, sys, ed)
	return nil
}

// versionsTried lists the versions a table search passed over, each reason
// once after the versions that gave it, in version order:
// "0.14.0, 0.18.0: no nvfp4 curve …; 0.24.0: …" ("none" when empty).
func versionsTried(why map[string]string) string {
	vs := make([]string, 0, len(why))
	for v := range why {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool {
		a, errA := parseVersion(vs[i])
		b, errB := parseVersion(vs[j])
		if errA != nil || errB != nil {
			return vs[i] < vs[j]
		}
		return b.newer(a)
	})
	var reasons []string
	byReason := map[string][]string{}
	for _, v := range vs {
		r := why[v]
		if _, seen := byReason[r]; !seen {
			reasons = append(reasons, r)
		}
		byReason[r] = append(byReason[r], v)
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = strings.Join(byReason[r], ", ") + ": " + r
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// dpCollectives reads the NCCL all-gather and reduce-scatter over the DP
// ranks (vLLM's default all2all backend for data parallelism,
// allgather_reducescatter: the hidden states of every rank are gathered
// before the experts and the expert outputs reduce-scattered after). Ranks
// that span nodes are priced by NCCL's cost model (perf.NCCLNet: the table
// measures one node), a fallback of every MoE layer. A missing table, or
// one that did not measure the GPU count, falls back to a ring at
// node.intra_node_bw with the nearest measured count's smallest message
// time as its latency (ncclFallback).
func (m *Model) dpCollectives(sys *hardware.System, par model.Parallel, sysDir string, hy *hybrid) error {
	want := sys.NCCLVersion
	gpus := int64(par.DP)
	nodes := sys.Nodes(par.GPUs())
	if net, ok := m.netNCCL(sys, par.DP, par.GPUs()); ok {
		hy.gather = &netCollective{net: net, op: perf.NCCLAllGather}
		hy.scatter = &netCollective{net: net, op: perf.NCCLReduceScatter}
		m.fallback(OpNCCL, int(2*hy.moeLayers), fmt.Sprintf("the %d DP ranks of %d GPUs span %d nodes (%d GPUs each), which %s does not measure; all_gather and reduce_scatter priced by %s",
			gpus, par.GPUs(), nodes, sys.GPUsPerNode, TableNCCL, net.Note()))
		return nil
	}
	src, err := locateNewestIfEmpty(sysDir, m.system, want)
	var rows []ncclRow
	if err == nil {
		if rows, err = loadNCCL(src.Path); err != nil {
			return err
		}
		m.sources = append(m.sources, src)
	}
	bw := sys.CollectiveBW(par.GPUs())
	for _, c := range []struct {
		op  string
		dst *collective
	}{{"all_gather", &hy.gather}, {"reduce_scatter", &hy.scatter}} {
		var curve *allReduceCurve
		var err error
		if nodes == 1 {
			curve, err = newNCCLCurve(rows, c.op, gpus, bw)
		}
		if curve == nil {
			why := TableNCCL + " is missing"
			switch {
			case nodes > 1:
				why = fmt.Sprintf("the %d DP ranks of %d GPUs span %d nodes (%d GPUs each), which %s does not measure", gpus, par.GPUs(), nodes, sys.GPUsPerNode, TableNCCL)
			case rows != nil:
				why = fmt.Sprintf("%s: %v", src.Path, err)
			}
			curve = ncclFallback(rows, c.op, gpus, bw)
			m.fallback(OpNCCL, int(hy.moeLayers), fmt.Sprintf("%s; %s over %d GPUs priced as a ring at %.0f GB/s plus %.1f µs",
				why, c.op, gpus, bw/1e9, curve.sec[0]*1e6))
		}
		*c.dst = curve
	}
	return nil
}

// ncclFallback is the stand-in of an NCCL collective the table did not
// measure over gpus GPUs: a ring (linearCollective) at bw whose latency is
// the smallest message's time over the nearest measured GPU count (in log2;
// ties to the larger), or 10 µs without any row of op. A ring all-gather or
// reduce-scatter moves (t−1)/t of the message once (one phase); a ring
// all-reduce is both in turn, two phases (nccl-tests doc/PERFORMANCE.md: busBw =
// algBw·2(n−1)/n for all-reduce, (n−1)/n for the others).
func ncclFallback(rows []ncclRow, op string, gpus int64, bw float64) *allReduceCurve {
	best, bestD := int64(0), math.Inf(1)
	for i := range rows {
		r := &rows[i]
		if r.Op != op {
			continue
		}
		d := math.Abs(math.Log2(float64(r.NumGPUs) / float64(gpus)))
		if d < bestD || (d == bestD && r.NumGPUs > best) {
			best, bestD = r.NumGPUs, d
		}
	}
	lat, smallest := 10e-6, int64(math.MaxInt64)
	for i := range rows {
		r := &rows[i]
		if r.Op == op && r.NumGPUs == best && r.MessageSize < smallest {
			smallest, lat = r.MessageSize, r.Latency*1e-3
		}
	}
	phases := 1.0
	if op == "all_reduce" {
		phases = 2
	}
	return linearCollective(gpus, phases, lat, bw)
}

// locateNewestIfEmpty locates the NCCL table of the system's NCCL version
// (nearest), or the newest when the system names none.
func locateNewestIfEmpty(sysDir, system, want string) (Source, error) {
	if want == "" {
		return locateNewest(sysDir, system, ncclBackend, TableNCCL, "the system names no NCCL version; the newest table used")
	}
	return locate(sysDir, system, ncclBackend, want, TableNCCL)
}

// locateNewest locates the newest version of a table that no version the
// user gave selects (NCCL of a system that names none, DeepEP's kernels):
// the Source requests no version (so no backend_version warning names one)
// and note says why the newest is read.
func locateNewest(sysDir, system, backend, table, note string) (Source, error) {
	src, err := locate(sysDir, system, backend, "", table)
	src.Note = joinNote(src.Note, note)
	return src, err
}

// newestVersion is above every release: the nearest to it is the newest.
const newestVersion = "999.0.0"

// hybridTokenCosts prices what depends on the rank's token count x alone,
// ns: per group the QKV and output GEMMs, the dense FFN or shared experts,
// the router (bf16, N = E) and a sparse layer's indexer projections; the
// memory-bound ops (bytes / (W·s) + c per kernel, as setMemoryOps); the TP
// all-reduces and the embedding.
func (m *Model) hybridTokenCosts(x float64) (gemmNs, memNs, arNs, embedNs float64) {
	if x <= 0 {
		return 0, 0, 0, 0
	}
	hy := m.hy
	attn := m.gemmW.Seconds(x, float64(m.gemms[0].N), float64(m.gemms[0].K)) +
		m.gemmW.Seconds(x, float64(m.gemms[1].N), float64(m.gemms[1].K))
	var g, mem float64
	for _, gr := range hy.groups {
		s := attn
		if gr.attn != nil {
			s = 0
			for _, f := range gr.attn {
				s += m.gemmA.Seconds(x, float64(f.N), float64(f.K))
			}
		}
		for _, f := range gr.ffn {
			s += m.gemmW.Seconds(x, float64(f.N), float64(f.K))
		}
		for _, f := range gr.idx {
			s += m.gemmW.Seconds(x, float64(f.N), float64(f.K))
		}
		if gr.k.MoE {
			s += m.gemmBF16.Seconds(x, hy.routerN, m.hidden)
		}
		g += gr.n * s
		mem += gr.n * (x*gr.memBytes/m.memBW + gr.memOps*m.memLatencyS)
	}
	if hy.dsv4 != nil {
		mem += m.layers * hy.dsv4.mhc.Seconds(x)
	}
	gemmNs, memNs = g*1e9, mem*1e9
	embedNs = (x*m.embedBytesPerToken/m.memBW + m.memLatencyS) * 1e9
	if m.allReduce != nil {
		arNs = (m.numAR*m.arSeconds(x, x*m.hidden) + hy.qkNormARs*m.arSeconds(x, x*4)) * 1e9
	}
	return gemmNs, memNs, arNs, embedNs
}

// moeTokenCosts prices what depends on the MoE tokens X alone, ns: the
// routed experts of every MoE layer (moeCurve.Seconds) plus its top-k
// selection (topKSeconds) and, with data parallelism, each MoE layer's
// all-gather and reduce-scatter of X·h_e bf16 elements over the DP ranks
// (h_e the experts' width: latent experts are dispatched projected).
func (m *Model) moeTokenCosts(X float64) (expNs, dispNs float64) {
	hy := m.hy
	if X <= 0 || hy.moe == nil {
		return 0, 0
	}
	experts := hy.moe.Seconds(X)
	if hy.dg != nil {
		experts = m.deepGEMMSeconds(X)
	}
	experts += m.fusedSharedSeconds(X)
	expNs = hy.moeLayers * (experts + m.topKSeconds(X)) * 1e9
	if hy.a2a != nil && (hy.gather == nil || X <= hy.a2aMaxX) {
		dispNs = hy.moeLayers * hy.a2a.Seconds(X/float64(hy.par.DP)) * 1e9
	} else if hy.gather != nil {
		e := X * hy.expertHidden
		dispNs = hy.moeLayers * (hy.gather.Seconds(e) + hy.scatter.Seconds(e)) * 1e9
	}
	return expNs, dispNs
}

// topKSeconds prices one MoE layer's expert selection over X tokens: one
// memory-bound kernel (the system's memory-op model: bytes / (W·s) + c,
// as setMemoryOps) that reads each token's E router logits (bf16) and
// writes its k expert ids and weights (int32 and fp32). The fused-MoE
// tables do not contain it: AIConfigurator's collector times vLLM's
// fused_experts on precomputed top-k ids and weights, while a served MoE
// layer selects them first (FusedMoE.select_experts: the fused top-k
// softmax kernel, or top-k over sigmoid scores plus a correction bias).
func (m *Model) topKSeconds(X float64) float64 {
	k := m.hy.fusedSharedTopK(float64(m.hy.moe.shape.k))
	return X*(2*m.hy.routerN+8*k)/m.memBW + m.memLatencyS
}

// tabulateHybrid fills the per-x and per-X tables (running maximum: a
// bigger pass is never cheaper).
func (m *Model) tabulateHybrid(maxTokens int) {
	hy := m.hy
	m.tabulate(maxTokens, m.hybridTokenCosts)
	if hy.moe == nil {
		return
	}
	nX := hy.par.DP*maxTokens + 1
	hy.expNs, hy.dispNs = make([]float64, nX), make([]float64, nX)
	for X := 1; X < nX; X++ {
		hy.expNs[X], hy.dispNs[X] = m.moeTokenCosts(float64(X))
		hy.expNs[X] = math.Max(hy.expNs[X], hy.expNs[X-1])
		hy.dispNs[X] = math.Max(hy.dispNs[X], hy.dispNs[X-1])
	}
}

// windowContext prices one layer's context attention of the prefill chunks
// over at most w keys per query, with grids ctx (measured at that window
// when the tables have it, else the full-attention grid):
//
//	A = C(k, S_rms) · Σ pairs_w(chunk) / Σ pairs_w(whole S)
//
// pairs_w the windowed query–key pairs (perf windowPairs: Σ min(i, w));
// with the full grid and a window, C is looked up at min(S_rms, w)-long
// keys and the ratio counts pairs against min(S, w)·S.
func (m *Model) windowContext(b *perf.Batch, grid *attnGrid, w float64, measuredWindow bool) float64 {
	var whole float64
	k, sumS2, work := prefillPairs(b, func(n, p float64) float64 {
		whole += perf.WindowPairs(n+p, 0, w)
		return perf.WindowPairs(n, p, w)
	})
	if k == 0 || whole == 0 {
		return 0
	}
	sRMS := math.Sqrt(sumS2 / k)
	if measuredWindow {
		return grid.Seconds(k, sRMS) * work / whole
	}
	// full-attention kernel over min(S, w) keys: its S_rms² pairs scale to
	// the windowed pairs
	full := grid.Seconds(k, sRMS) / (sRMS * (sRMS + 1) / 2)
	return full * work / k
}

// chunkContext prices one layer's chunked local attention of the prefill
// chunks (chunks of c tokens: each query attends to its own chunk): the
// full-attention grid's time per pair at the chunks' root-mean-square
// length (as windowContext prices a window over the full grid) times the
// chunked pairs, Σ perf.ChunkPairs.
func (m *Model) chunkContext(b *perf.Batch, grid *attnGrid, c float64) float64 {
	k, sumS2, work := prefillPairs(b, func(n, p float64) float64 { return perf.ChunkPairs(n, p, c) })
	if k == 0 {
		return 0
	}
	sRMS := math.Sqrt(sumS2 / k)
	return grid.Seconds(k, sRMS) / (sRMS * (sRMS + 1) / 2) * work / k
}

// prefillPairs walks the pass's prefill chunks: their count k, Σ S² (S
// the chunk's new and cached tokens) and Σ pairs(new, cached), in order.
func prefillPairs(b *perf.Batch, pairs func(n, p float64) float64) (k, sumS2, work float64) {
	for i := range b.Prefill {
		c := &b.Prefill[i]
		if c.NewTokens <= 0 {
			continue
		}
		S := float64(c.NewTokens + c.PrefixTokens)
		k++
		sumS2 += S * S
		work += pairs(float64(c.NewTokens), float64(c.PrefixTokens))
	}
	return k, sumS2, work
}

// DecodeWindows returns the windows whose Σ min(kv+1, W) the model's pass
// reads (perf.WindowUser): the sliding window when its layers are priced
// with the full-attention grid (a measured window grid is read at the mean
// context, Σ (kv+1) / D, from the KV sum), and the sparse layers' kept keys;
// nil for a dense or full-attention model.
func (m *Model) DecodeWindows() []int {
	if m.hy == nil {
		return nil
	}
	return m.hy.decodeWindows
}

// windowGeneration prices one layer's decode attention for keys = Σ over the
// decodes of the keys each reads: the generation grid at their mean.
func (m *Model) windowGeneration(b *perf.Batch, grid *attnGrid, keys float64) float64 {
	D := b.Decodes
	if D == 0 {
		return 0
	}
	return grid.Seconds(float64(D), keys/float64(D))
}

// indexerSeconds prices a sparse layer's indexer for the pass: every new
// query scores every cached key with H_idx heads of d_idx (2·H·d FLOPs per
// pair, bf16) and reads the keys (2·d_idx bytes per key per sequence), at
// the roofline of the system's memory-op model; not in the tables.
func (m *Model) indexerSeconds(b *perf.Batch) float64 {
	hy := m.hy
	var pairs, keys float64
	for i := range b.Prefill {
		c := &b.Prefill[i]
		if c.NewTokens <= 0 {
			continue
		}
		pairs += perf.WindowPairs(float64(c.NewTokens), float64(c.PrefixTokens), 0)
		keys += float64(c.NewTokens + c.PrefixTokens)
	}
	// Σ (kv+1) over the decodes: an integer below 2^53, so the same float as
	// the sum taken request by request
	dec := float64(b.DecodeKVSum + int64(b.Decodes))
	pairs += dec
	keys += dec
	if pairs == 0 {
		return 0
	}
	return math.Max(2*hy.idxHeads*hy.idxDim*pairs/m.gemmBF16.flops, 2*hy.idxDim*keys/m.memBW) + m.memLatencyS
}

// hybridBreakdown prices one DP rank's pass b of a hybrid model whose MoE
// layers see X tokens (see perf.Roofline.hybridBreakdown for the op list;
// here every op is measured: GEMMs, attention of each kind, custom
// all-reduce, the fused-MoE table and the NCCL collectives).
func (m *Model) hybridBreakdown(b *perf.Batch, X int) perf.Breakdown {
	hy := m.hy
	out, ok := m.tokenBreakdown(b, m.hybridTokenCosts)
	if !ok {
		return out
	}
	if X < len(hy.expNs) {
		out.ExpertsNs, out.DispatchNs = hy.expNs[X], hy.dispNs[X]
	} else {
		out.ExpertsNs, out.DispatchNs = m.moeTokenCosts(float64(X))
	}
	if hy.sharedNs != nil {
		out.GEMMNs -= hy.sharedHiddenNs(b.Tokens(), out.ExpertsNs)
	}
	var fullCtx, fullGen, winCtx, winGen, sparseCtx, sparseGen, idx, mlaCtx, mlaGen, linCtx, linGen, chCtx, chGen float64
	if hy.chunk > 0 {
		chCtx, chGen = m.chunkContext(b, m.ctx, hy.chunk), m.windowGeneration(b, m.gen, b.WindowSum(hy.chunkIdx))
	}
	if hy.gdn != nil {
		var n, chunks float64
		for i := range b.Prefill {
			if c := b.Prefill[i].NewTokens; c > 0 {
				n, chunks = n+float64(c), chunks+1
			}
		}
		linCtx, linGen = hy.gdn.contextSeconds(n, chunks), hy.gdn.generationSeconds(float64(b.Decodes))
	}
	if hy.mla != nil {
		mlaCtx, mlaGen = m.mlaContextSeconds(b), generationOn(b, hy.mla.gen)+hy.mla.bmm.seconds(float64(b.Decodes+b.SpecTokens))
	} else if hy.dsv4 == nil {
		fullCtx, fullGen = m.contextSeconds(b), m.generationSeconds(b)
	}
	if hy.anySliding {
		if hy.windowed {
			all := float64(b.DecodeKVSum + int64(b.Decodes)) // Σ (kv+1), exact
			winCtx, winGen = m.windowContext(b, hy.ctxW, hy.window, true), m.windowGeneration(b, hy.genW, all)
		} else {
			winCtx, winGen = m.windowContext(b, m.ctx, hy.window, false), m.windowGeneration(b, m.gen, b.WindowSum(hy.winIdx))
		}
	}
	if hy.anySparse {
		sparseCtx, sparseGen = m.windowContext(b, m.ctx, hy.kept, false), m.windowGeneration(b, m.gen, b.WindowSum(hy.keptIdx))
		idx = m.indexerSeconds(b)
	}
	for _, g := range hy.groups {
		switch g.k.Attn {
		case model.AttnSliding:
			out.ContextAttentionNs += g.n * winCtx * 1e9
			out.GenerationAttentionNs += g.n * winGen * 1e9
		case model.AttnSparse:
			out.ContextAttentionNs += g.n * sparseCtx * 1e9
			out.GenerationAttentionNs += g.n * (sparseGen + idx) * 1e9
		case model.AttnMLA:
			out.ContextAttentionNs += g.n * mlaCtx * 1e9
			out.GenerationAttentionNs += g.n * mlaGen * 1e9
		case model.AttnLinear:
			out.ContextAttentionNs += g.n * linCtx * 1e9
			out.GenerationAttentionNs += g.n * linGen * 1e9
		case model.AttnChunked:
			out.ContextAttentionNs += g.n * chCtx * 1e9
			out.GenerationAttentionNs += g.n * chGen * 1e9
		case model.AttnCSA, model.AttnHCA, model.AttnSWA:
			out.ContextAttentionNs += g.n * m.dsv4ContextSeconds(b, g.k.Attn) * 1e9
			out.GenerationAttentionNs += g.n * generationOn(b, hy.dsv4.gen[g.k.Attn]) * 1e9
		default:
			out.ContextAttentionNs += g.n * fullCtx * 1e9
			out.GenerationAttentionNs += g.n * fullGen * 1e9
		}
	}
	out.DraftNs = perf.DraftNs(b, m.layers, m.Breakdown)
	return out
}

// GroupPassTime prices the lockstep pass of a worker's DP ranks (one batch
// per rank, an idle rank's batch empty): the MoE layers see X = DP × max_r
// x_r tokens (perf.DPMoETokens), the pass ends with the slowest rank.
func (m *Model) GroupPassTime(bs []perf.Batch) int64 {
	if m.dp() <= 1 && len(bs) == 1 {
		return m.PassTime(&bs[0])
	}
	if m.hy == nil { // a dense model's ranks do not wait for each other
		var worst int64
		for i := range bs {
			worst = max(worst, m.PassTime(&bs[i]))
		}
		return worst
	}
	maxX := 1
	for i := range bs {
		maxX = max(maxX, bs[i].Tokens())
	}
	X := int(perf.DPMoETokens(m.dp(), perf.PadGroup(m.cg, bs, maxX, m.cgTop)))
	var worst float64
	for i := range bs {
		worst = math.Max(worst, m.hybridBreakdown(&bs[i], X).PassNs(m.overlapCPU))
	}
	return perf.PassNs(worst)
}

func (m *Model) dp() int {
	if m.hy == nil {
		return 1
	}
	return m.hy.par.DP
}

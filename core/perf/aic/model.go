package aic

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Name is the Name of the aic model. Bump the version when a formula
// changes (docs/design.md, "Perf models"); the parity goldens pin it.
const Name = "aic-v1"

// MaxTabulatedTokens bounds the precomputed table (five float64 arrays):
// 2^20 tokens, 40 MB. A larger MaxTokens (max_num_batched_tokens of 2^62
// asked for exabytes) tabulates this many and prices larger passes on the fly.
const MaxTabulatedTokens = 1 << 20

// Options configure New.
type Options struct {
	// Database is the root of the tables: the AIConfigurator systems folder
	// (holding data/<system>/...) or its parent.
	Database string
	// Backend is the serving framework folder, "vllm" (required).
	Backend string
	// Version is the backend version wanted, for example "0.24.0"; each
	// table uses the nearest version that has it (Sources says which).
	Version string
	// TP is the tensor-parallel degree (1..8, divides the head count).
	TP int
	// WeightDtype is the GEMM weight format; "" uses the checkpoint's. The
	// logits GEMM is always bf16.
	WeightDtype model.Dtype
	// KVDtype is the KV cache format, bfloat16 or fp8; "" means bfloat16.
	KVDtype model.Dtype
	// MaxTokens is the largest pass (tokens) precomputed, ≥ 1 (at most
	// MaxTabulatedTokens are tabulated); larger passes are priced on the fly.
	// The replay gives the engine's max_num_batched_tokens, the largest pass
	// it forms.
	MaxTokens int
	// PassOverheadUs is a fixed cost per pass (CPU scheduling, input
	// preparation, sampling), µs, ≥ 0.
	PassOverheadUs float64
	// SequenceOverheadUs is the cost per sequence scheduled in a pass (each
	// decode and each prefill chunk), µs, ≥ 0.
	SequenceOverheadUs float64
	// OverlapCPU runs the engine step's CPU work beside the kernels instead
	// of after them (vLLM async scheduling; perf.Breakdown.PassNs).
	OverlapCPU bool
	// DP is the data-parallel size (0 or 1: none) and EP whether the routed
	// experts are expert-parallel; both matter only for a mixture-of-experts
	// model (model.Parallel). The MoE tables are read at moe_tp = TP×DP
	// (EP off) or moe_ep = TP×DP (EP on); with DP > 1 the NCCL tables of the
	// system's misc.nccl_version price the token all-gather and
	// reduce-scatter. MoEEP, with EP, splits the experts both ways
	// (model.Parallel.MoEEPSize: the tables read at moe_tp = TP×DP / MoEEP,
	// moe_ep = MoEEP; 0: moe_ep = TP×DP).
	DP    int
	EP    bool
	MoEEP int
	// CUDAGraphMaxTokens is the largest CUDA-graph capture size, tokens
	// (perf.CUDAGraphMaxTokens of the scheduler's limits; 0: no CUDA graphs).
	// A MoE layer computes a pass's tokens padded to the next capture size
	// (perf.CUDAGraphTokens).
	CUDAGraphMaxTokens int
	// CUDAGraphs, when given, is the vLLM release's capture rule: the MoE
	// layers compute the tokens padded to its graphs (perf.PadBatch), and
	// CUDAGraphMaxTokens is taken as their largest (perf.CUDAGraphs.Max).
	CUDAGraphs perf.VLLMGraphs
	// MoEBackend is vLLM's --moe-backend ("" or "auto": the kernel the
	// tables list first for the dtype; "marlin", "triton",
	// "flashinfer_cutlass", "flashinfer_trtllm", "flashinfer_trtllm_afp8":
	// that kernel's rows where the tables time it, moe.go moeKernelRows;
	// flashinfer_trtllm_afp8 also reads MXFP4 experts' w4a8_mxfp4_mxfp8
	// rows on Blackwell, moeDtypeLabel).
	MoEBackend string
	// MoERouting is the routing the routed experts are priced at (moe.go:
	// MoERoutingBalanced, the tables' balanced rows corrected to uniform
	// routing, also for ""; MoERoutingPowerLaw101 or MoERoutingPowerLaw12,
	// that power-law's rows as measured; MoERoutingAuto, MoERoutingFor the
	// model's architecture).
	MoERouting string
	// All2AllBackend is vLLM's --all2all-backend ("" or
	// perf.All2AllAgRs: the all-gather and reduce-scatter; perf.IsAll2All
	// backends: all2all.go); it matters with DP > 1 and EP only.
	All2AllBackend string
	// All2AllBF16Dispatch: the engine dispatches the tokens' bf16 hidden
	// states whatever the experts' format (TensorRT-LLM's WideEPMoE over
	// DeepEP quantizes after the dispatch, NVFP4 aside), not fp8 as the
	// DeepEP tables were timed: the bandwidth model's difference is added.
	All2AllBF16Dispatch bool
	// All2AllMaxTokens (0: none) is the most tokens of a pass, summed over
	// the DP ranks, the point-to-point all2all carries; above it the MoE
	// layer runs in chunks over the all-gather and reduce-scatter
	// (TensorRT-LLM's WideEPMoE.can_use_alltoall, moe_max_num_tokens).
	All2AllMaxTokens int
}

// Model prices a pass of a dense decoder from measured kernel tables
// (docs/design.md, "The measured tables and the dense-decoder arithmetic"). Per pass
//
//	T = L · (Σ_g G_g(x) + A_ctx + A_gen(D, k̄) + M(x) + 2·R(x·h))
//	    + E(x) + R(x·h) + G_logits(s) + overhead
//
// x tokens of the pass (prompt tokens computed + decodes), s sequences that
// sample, L layers, h hidden size; G_g the measured time of the QKV, output,
// gate/up and down GEMMs at m = x (gemm_perf); A_ctx the context attention
// of the prefill chunks (context_attention_perf, see contextSeconds);
// A_gen the generation attention of the D decodes at their mean KV length k̄
// (generation_attention_perf); R the CUDA-graph custom all-reduce of x·h
// elements when TP > 1 (custom_allreduce_perf); M the memory-bound ops of a
// layer and E the embedding, priced analytically (memOpSeconds). Every
// lookup interpolates inside the measured axes and keeps the nearest
// measured efficiency against the roofline outside them, never going below
// the roofline.
//
// The costs that depend only on x (GEMMs, memory ops, all-reduces,
// embedding) and on s (logits) are tabulated for x, s ≤ MaxTokens by New
// (made non-decreasing in x: a running maximum over the tile-edge dips), so
// PassTime does two attention lookups and a few array reads; it does not
// allocate. A Model is immutable after New and safe for concurrent use.
type Model struct {
	cgTop     int              // Options.CUDAGraphMaxTokens, or the largest of cg
	cg        *perf.CUDAGraphs // Options.CUDAGraphs' graphs (nil: perf.CUDAGraphTokens under cgTop)
	layers    float64
	hidden    float64
	gemms     [4]model.GEMMShape
	logitsN   float64
	gemmW     *gemmGrid // weight dtype
	gemmA     *gemmGrid // attention weights' dtype (model.Arch.AttentionDtype; MLA layers)
	gemmBF16  *gemmGrid // logits
	ctx, gen  *attnGrid
	allReduce collective // nil at TP 1 (allreduce_nodes.go when TP spans nodes)
	// allReduceEager is the all-reduce of a pass that runs without a CUDA
	// graph (more tokens than cgTop): the table's eager rows (vllm_eager);
	// nil when the table has none or no pass runs eagerly (arSeconds)
	allReduceEager collective
	numAR          float64 // 2L + 1 at TP > 1, else 0

	// memory-bound ops: bytes per token per layer and op count per layer;
	// embedding bytes per token; rate and fixed latency
	memBytesPerToken, memOpsPerLayer, embedBytesPerToken float64
	memBW, memLatencyS                                   float64

	// tabulated ns by token count (index x or s, 0..maxTokens)
	gemmNs, memNs, arNs, embedNs, logitsNs []float64
	overheadNs, seqOverheadNs              float64
	overlapCPU                             bool

	// hy: MoE and mixed-attention models (hybrid.go); nil for a dense decoder
	hy     *hybrid
	system string
	// noNVLS: the engine turns NCCL's NVLink SHARP off (netNCCL)
	noNVLS bool
	// capAttention: the attention tables' cells are bounded by the larger
	// problems measured (attnGrid.capByLarger; TensorRT-LLM's tables)
	capAttention bool

	sources []Source
	notes   []string
	// fallbacks counts, per op, the op instances of a pass priced by a
	// stand-in (fallback.go)
	fallbacks map[string]int
	// a2a: a point-to-point all2all backend and what priced it (metadata)
	a2a map[string]any
}

var _ perf.Model = (*Model)(nil)

// New loads the four tables of sys (cached per process), restricts them to
// arch at opt.TP and tabulates the per-token costs. Errors name the option
// or the table: a nil arch or sys, an arch that fails Validate(TP), an
// unknown dtype, a missing table or database folder, or no rows for the
// model's head_dim / KV dtype.
func New(arch *model.Arch, sys *hardware.System, opt Options) (*Model, error) {
	if arch == nil || sys == nil {
		return nil, fmt.Errorf("aic: needs a model and a system")
	}
	par := model.Parallel{TP: opt.TP, DP: max(opt.DP, 1), EP: opt.EP, MoEEPSize: opt.MoEEP}
	if err := arch.ValidateParallel(par); err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	if opt.Database == "" {
		return nil, fmt.Errorf("aic: database is required")
	}
	if opt.Backend == "" {
		return nil, fmt.Errorf("aic: backend is required")
	}
	wd, kd, err := perf.ResolveDtypes(arch, opt.WeightDtype, opt.KVDtype)
	if err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	if err := perf.CheckCost("aic: ", "pass_overhead_us", opt.PassOverheadUs); err != nil {
		return nil, err
	}
	if err := perf.CheckCost("aic: ", "per_sequence_overhead_us", opt.SequenceOverheadUs); err != nil {
		return nil, err
	}
	if opt.MaxTokens < 1 {
		return nil, fmt.Errorf("aic: max tokens = %d, want ≥ 1", opt.MaxTokens)
	}
	if opt.CUDAGraphMaxTokens < 0 || opt.CUDAGraphMaxTokens > opt.MaxTokens {
		return nil, fmt.Errorf("aic: CUDA-graph max tokens = %d, want 0..%d (max tokens)", opt.CUDAGraphMaxTokens, opt.MaxTokens)
	}
	if !(sys.MemBW > 0 && sys.BF16Flops > 0) {
		return nil, fmt.Errorf("aic: system %s needs MemBW > 0 and BF16Flops > 0", sys.Name)
	}
	sysDir, err := systemDir(opt.Database, sys.Name)
	if err != nil {
		return nil, err
	}
	m := &Model{
		system: sys.Name, cgTop: opt.CUDAGraphMaxTokens, cg: perf.GraphsOf(opt.CUDAGraphs),
		layers: float64(arch.Layers), hidden: float64(arch.Hidden), gemms: arch.LayerGEMMs(opt.TP),
		logitsN:    float64((arch.Vocab + opt.TP - 1) / opt.TP),
		overheadNs: opt.PassOverheadUs * 1e3, seqOverheadNs: opt.SequenceOverheadUs * 1e3,
		overlapCPU: opt.OverlapCPU, noNVLS: opt.Backend == sglangBackend,
		capAttention: opt.Backend == trtllmBackend,
	}
	if m.cg != nil {
		if m.cgTop = m.cg.Max(); m.cgTop > opt.MaxTokens {
			return nil, fmt.Errorf("aic: the largest CUDA graph, %d tokens, is above max tokens %d", m.cgTop, opt.MaxTokens)
		}
	}
	find := func(table string) (string, error) {
		src, err := locate(sysDir, sys.Name, opt.Backend, opt.Version, table)
		if err != nil {
			return "", err
		}
		m.sources = append(m.sources, src)
		return src.Path, nil
	}

	// GEMMs
	p, err := find(TableGEMM)
	if err != nil {
		return nil, err
	}
	grows, err := loadGEMM(p)
	if err != nil {
		return nil, err
	}
	if m.gemmBF16, err = m.gemmGridFor(grows, model.BF16, sys, p); err != nil {
		return nil, err
	}
	if wd == model.FP8 && opt.Backend == trtllmBackend {
		if grows, err = m.staticScaleRows(grows, find); err != nil {
			return nil, err
		}
	}
	if wd == model.BF16 {
		m.gemmW = m.gemmBF16
	} else if m.gemmW, err = m.lowPrecisionGrid(grows, p, wd, sys, sysDir, opt); err != nil {
		return nil, err
	}
	switch ad := arch.AttentionDtype(); {
	case arch.AttnDtype == "" || ad == wd:
		m.gemmA = m.gemmW
	case ad == model.BF16:
		m.gemmA = m.gemmBF16
	default:
		if m.gemmA, err = m.lowPrecisionGrid(grows, p, ad, sys, sysDir, opt); err != nil {
			return nil, err
		}
	}

	// attention
	heads, kvHeads := int64(arch.Heads/opt.TP), int64(arch.KVHeadsPerGPU(opt.TP))
	em := newEmpiricalMemory(sys)
	gqa := []struct {
		table string
		kind  attnKind
		dst   **attnGrid
	}{{TableContextAttention, contextKind, &m.ctx}, {TableGenerationAttention, generationKind, &m.gen}}
	if arch.MLA != nil || arch.DSV4 != nil {
		gqa = nil // MLA and DeepSeek-V4 layers read their own tables (mla.go, dsv4.go)
	}
	for _, a := range gqa {
		var rows []attnRow
		p, err := find(a.table)
		if err == nil {
			if rows, err = loadAttention(p); err != nil {
				return nil, err
			}
		}
		sel := attnSelect{kind: a.kind, heads: heads, kvHeads: kvHeads, headDim: int64(arch.HeadDim),
			kvDtype: string(kd), kvBytes: kd.Bytes(), flops: sys.BF16Flops, memBW: sys.MemBW, capByLarger: m.capAttention}
		g := m.attentionGrid(rows, sel, a.table, p, arch.Layers-arch.SlidingLayers()-arch.LinearLayers(), em)
		*a.dst = g
	}

	// all-reduce
	if opt.TP > 1 {
		if !(sys.IntraNodeBW > 0) {
			return nil, fmt.Errorf("aic: system %s needs IntraNodeBW > 0 for TP %d", sys.Name, opt.TP)
		}
		m.numAR = 2*m.layers + 1
		if sys.Nodes(opt.TP) > 1 {
			if err := m.multiNodeAllReduce(sys, sysDir, int64(opt.TP)); err != nil {
				return nil, err
			}
		} else if err := m.nodeAllReduce(sys, int64(opt.TP), find); err != nil {
			return nil, err
		}
	}

	m.setMemoryOps(arch, sys, opt.TP)
	if arch.Hybrid() {
		if err := m.setupHybrid(arch, sys, par, sysDir, opt, kd, find); err != nil {
			return nil, err
		}
		m.tabulateHybrid(min(opt.MaxTokens, MaxTabulatedTokens))
		m.setupSharedOverlap(arch, opt.TP, opt.Version)
		m.notes = append(m.notes, arch.Approximations...)
		return m, nil
	}
	m.tabulate(min(opt.MaxTokens, MaxTabulatedTokens), m.tokenCosts)
	return m, nil
}

// lowPrecisionGrid builds the fp8 or fp8_block grid of the weights from the
// nearest GEMM table whose rows of that dtype are plausible: a table whose
// low-precision GEMMs are not faster than its own bf16 GEMMs on
// compute-bound shapes (lowPrecisionRatio ≥ MaxLowPrecisionRatio) is
// skipped, the next nearest version stands in, and the sources list and notes
// say so. rows and path are the nearest table's (already loaded). When no
// version is plausible the nearest is kept, with a note; a table without rows
// of wd falls back to bf16 (gemmGridFor).
func (m *Model) lowPrecisionGrid(rows []gemmRow, path string, wd model.Dtype, sys *hardware.System,
	sysDir string, opt Options) (*gemmGrid, error) {
	first, err := m.gemmGridFor(rows, wd, sys, path)
	if err != nil || first.dtype != string(wd) {
		return first, err
	}
	curFrom := ""
	for _, s := range m.sources {
		if s.Path == path {
			curFrom = s.ReadFrom
		}
	}
	exclude := map[string]string{}
	g, moved := first, false
	nearestRows, nearestPath, firstFrom := rows, path, curFrom
	for {
		why := implausibleLowPrecision(g, rows, wd, sys)
		if why == "" {
			if moved {
				m.notes = append(m.notes, fmt.Sprintf("%s %s GEMMs read from %s", TableGEMM, wd, path))
			}
			return g, nil
		}
		exclude[curFrom] = why
		for {
			next, err := locateExcept(sysDir, sys.Name, opt.Backend, opt.Version, TableGEMM, exclude)
			if err != nil {
				g8, g8Path, ok, err := m.fp8BlockStandInNearest(nearestRows, nearestPath, firstFrom, wd, sys, sysDir, opt)
				if err != nil {
					return nil, err
				}
				if ok {
					m.fallback(OpGEMM, int(m.layers), fmt.Sprintf(
						"%s: no version with plausible %s GEMMs (%s); priced as %s's per-tensor fp8 GEMMs, the same fp8 tensor-core work (the block scales and the input's per-group quantization not priced)",
						TableGEMM, wd, exclude[m.sources[0].ReadFrom], g8Path))
					return g8, nil
				}
				m.notes = append(m.notes, fmt.Sprintf("%s: no version with plausible %s GEMMs; the nearest kept (%s)",
					TableGEMM, wd, exclude[m.sources[0].ReadFrom]))
				return first, nil
			}
			if rows, err = loadGEMM(next.Path); err != nil {
				return nil, err
			}
			cand, err := newGEMMGrid(rows, string(wd), sys.Flops(wd), sys.MemBW, wd.Bytes())
			if err != nil {
				exclude[next.ReadFrom] = fmt.Sprintf("no %s rows", wd)
				continue
			}
			next.Table = TableGEMM + " (" + string(wd) + ")"
			m.sources = append(m.sources, next)
			g, curFrom, path, moved = cand, next.ReadFrom, next.Path, true
			break
		}
	}
}

// implausibleLowPrecision says why the low-precision grid g of dtype wd is
// not a tuned kernel's time ("" when plausible), against the bf16 grid of the
// same table's rows: not faster than bf16 on compute-bound shapes
// (lowPrecisionRatio ≥ MaxLowPrecisionRatio), or more than
// MaxLowPrecisionMemoryRatio × bf16 at one token (memoryBoundRatio).
func implausibleLowPrecision(g *gemmGrid, rows []gemmRow, wd model.Dtype, sys *hardware.System) string {
	ref, err := newGEMMGrid(rows, string(model.BF16), sys.BF16Flops, sys.MemBW, 2)
	if err != nil {
		return ""
	}
	if ratio, ok := lowPrecisionRatio(g, ref); ok && ratio >= MaxLowPrecisionRatio {
		return fmt.Sprintf("its %s GEMMs take %.2f× its bfloat16 time on compute-bound shapes (implausible, want < %.2g)",
			wd, ratio, MaxLowPrecisionRatio)
	}
	if r, ok := memoryBoundRatio(g, ref); ok && r > MaxLowPrecisionMemoryRatio {
		return fmt.Sprintf("its %s GEMMs take %.2f× its bfloat16 time at one token (implausible, want ≤ %.2g)",
			wd, r, MaxLowPrecisionMemoryRatio)
	}
	return ""
}

// fp8BlockStandInNearest is fp8BlockStandIn of the nearest version whose
// per-tensor fp8 GEMMs are plausible, when no version's fp8_block GEMMs are
// (lowPrecisionGrid): first the nearest table's rows (rows, read from
// version from at path), then each next nearest version's. A stand-in read
// from another version joins the sources ("gemm_perf (fp8, stand-in for
// fp8_block)"). Without it every version would price its own implausible
// rows: gb200 vLLM 0.14.0's fp8_block GEMMs take 2.97× its bf16 time on
// compute-bound shapes and ~0.3 ms at any m ≤ 8192 for MiniMax-M2.5's
// projections (0.19.0's: 1.09× and 12–14 µs; 0.24.0's: 0.59× but 22× bf16
// at one token), and neither 0.14.0's nor 0.19.0's per-tensor fp8 rows are
// plausible (2.20×, 1.20×): both versions now price 0.24.0's per-tensor fp8
// GEMMs (docs/moe.md). ok is false when no version has plausible fp8 rows.
func (m *Model) fp8BlockStandInNearest(rows []gemmRow, path, from string, wd model.Dtype, sys *hardware.System,
	sysDir string, opt Options) (*gemmGrid, string, bool, error) {
	if wd != model.FP8Block {
		return nil, "", false, nil
	}
	tried := map[string]string{}
	var src *Source
	for {
		if g, ok := fp8BlockStandIn(rows, wd, sys); ok {
			if src != nil {
				src.Table = TableGEMM + " (" + string(model.FP8) + ", stand-in for " + string(wd) + ")"
				m.sources = append(m.sources, *src)
			}
			return g, path, true, nil
		}
		tried[from] = "no plausible fp8 GEMMs"
		next, err := locateExcept(sysDir, sys.Name, opt.Backend, opt.Version, TableGEMM, tried)
		if err != nil {
			return nil, "", false, nil
		}
		if rows, err = loadGEMM(next.Path); err != nil {
			return nil, "", false, err
		}
		src, path, from = &next, next.Path, next.ReadFrom
	}
}

// fp8BlockStandIn prices fp8_block GEMMs when no table version times them
// plausibly: AIConfigurator's collector times fp8_block GEMMs without a CUDA
// graph (collector/vllm/collect_gemm.py: use_cuda_graph = gemm_type !=
// "fp8_block"), so where the wrapper's host work exceeds the kernel the rows
// hold host time (0.16–0.3 ms at every shape on b200_sxm, b300_sxm and gb200
// from vLLM 0.22.0), which vLLM's CUDA-graphed steps do not replay. The
// stand-in is the nearest table's per-tensor fp8 GEMMs (graphed), the same
// fp8 tensor-core work and weight bytes, when they are plausible themselves.
func fp8BlockStandIn(rows []gemmRow, wd model.Dtype, sys *hardware.System) (*gemmGrid, bool) {
	if wd != model.FP8Block {
		return nil, false
	}
	g, err := newGEMMGrid(rows, string(model.FP8), sys.Flops(model.FP8), sys.MemBW, model.FP8.Bytes())
	if err != nil || implausibleLowPrecision(g, rows, model.FP8, sys) != "" {
		return nil, false
	}
	return g, true
}

// gemmGridFor builds the grid of dtype d, falling back to bfloat16 (noted)
// when the table has no rows of d (a100_sxm has no fp8 GEMMs: vLLM runs fp8
// checkpoints there as weight-only fp8 with bf16 math).
func (m *Model) gemmGridFor(rows []gemmRow, d model.Dtype, sys *hardware.System, path string) (*gemmGrid, error) {
	g, err := newGEMMGrid(rows, string(d), sys.Flops(d), sys.MemBW, d.Bytes())
	if err != nil && d != model.BF16 {
		g, err = newGEMMGrid(rows, string(model.BF16), sys.BF16Flops, sys.MemBW, 2)
		if err == nil {
			m.fallback(OpGEMM, int(m.layers), fmt.Sprintf("%s has no %s GEMMs; bfloat16 used", path, d))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("aic: %s: %w", path, err)
	}
	return g, nil
}

// setMemoryOps sets the analytic memory-bound ops of one layer (bytes per
// token, bf16): two fused residual-add + RMSNorm (read x and the residual,
// write both: 8h each), SiLU-and-mul (read 2·I/t, write I/t: 6·I/t), rotary
// embedding of q and k (read and write: 4·(n/t + kv/t)·d), and for Qwen3 the
// per-head q/k RMSNorm (the same bytes). Each op costs
//
//	bytes / (W · s) + c
//
// W HBM bandwidth (B/s), s gpu.mem_bw_empirical_scaling_factor, c
// gpu.mem_empirical_constant_latency (s): the AIConfigurator system file's
// model of small memory-bound kernels. The embedding gathers a row and
// writes it: 4h bytes per token, one op.
func (m *Model) setMemoryOps(arch *model.Arch, sys *hardware.System, tp int) {
	h := float64(arch.Hidden)
	inter := float64((arch.Intermediate + tp - 1) / tp)
	qk := float64(arch.Heads/tp+arch.KVHeadsPerGPU(tp)) * float64(arch.HeadDim)
	m.memBytesPerToken = 2*8*h + 6*inter + 4*qk
	m.memOpsPerLayer = 4
	if arch.QKNorm {
		m.memBytesPerToken += 4 * qk
		m.memOpsPerLayer++
	}
	m.embedBytesPerToken = 4 * h
	scaling := sys.MemBWScaling
	if !(scaling > 0) {
		scaling = 1
	}
	m.memBW = sys.MemBW * scaling
	m.memLatencyS = sys.MemConstLatency
}

// tokenCosts prices the parts of a pass that depend only on its token
// count x, ns: GEMMs, memory ops and all-reduces over all layers, and the
// embedding.
func (m *Model) tokenCosts(x float64) (gemmNs, memNs, arNs, embedNs float64) {
	if x <= 0 {
		return 0, 0, 0, 0
	}
	var g float64
	for _, s := range m.gemms {
		g += m.gemmW.Seconds(x, float64(s.N), float64(s.K))
	}
	gemmNs = m.layers * g * 1e9
	memNs = m.layers * (x*m.memBytesPerToken/m.memBW + m.memOpsPerLayer*m.memLatencyS) * 1e9
	embedNs = (x*m.embedBytesPerToken/m.memBW + m.memLatencyS) * 1e9
	if m.allReduce != nil {
		arNs = m.numAR * m.arSeconds(x, x*m.hidden) * 1e9
	}
	return gemmNs, memNs, arNs, embedNs
}

// arSeconds is one all-reduce of e elements in a pass of x tokens. vLLM
// replays a CUDA graph only for a pass of at most the largest capture size
// (cgTop) tokens and runs a larger one eagerly (vllm/v1/cudagraph_dispatcher.py,
// CudagraphDispatcher.dispatch: a batch without a capture key gets
// CUDAGraphMode.NONE); its all-reduces are then the eager ones the table
// measures apart (backend vllm_eager: the custom all-reduce copies its
// input into the registered buffer first, custom_all_reduce.py
// custom_all_reduce, and NCCL runs without a graph). 4103 tokens of
// Qwen3-32B on h100_sxm at TP 2 (21,007,360 elements): eager 0.1971 ms,
// graph 0.1656 ms.
func (m *Model) arSeconds(x, e float64) float64 {
	if m.allReduceEager != nil && m.cgTop > 0 && x > float64(m.cgTop) {
		return m.allReduceEager.Seconds(e)
	}
	return m.allReduce.Seconds(e)
}

// logitsCost is the logits GEMM over s sampling sequences (bf16, n = V/t,
// k = h), ns.
func (m *Model) logitsCost(s float64) float64 {
	return m.gemmBF16.Seconds(s, m.logitsN, m.hidden) * 1e9
}

// tabulate fills the per-token tables for x = 1..maxTokens from costs (the
// dense m.tokenCosts or the hybrid m.hybridTokenCosts).
func (m *Model) tabulate(maxTokens int, costs func(float64) (float64, float64, float64, float64)) {
	n := maxTokens + 1
	m.gemmNs, m.memNs, m.arNs, m.embedNs, m.logitsNs =
		make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for x := 1; x < n; x++ {
		m.gemmNs[x], m.memNs[x], m.arNs[x], m.embedNs[x] = costs(float64(x))
		m.logitsNs[x] = m.logitsCost(float64(x))
		// Measured kernels dip at tile edges (m = 33 can beat m = 32); a
		// bigger pass must never be cheaper, or the scheduler would profit
		// from padding. Keep the running maximum.
		m.gemmNs[x] = math.Max(m.gemmNs[x], m.gemmNs[x-1])
		m.arNs[x] = math.Max(m.arNs[x], m.arNs[x-1])
		m.logitsNs[x] = math.Max(m.logitsNs[x], m.logitsNs[x-1])
	}
}

// contextSeconds prices the context attention of all prefill chunks of a
// pass, one layer. k chunks, chunk i with S_i = prefix + new tokens and
// cached prefix p_i:
//
//	A_ctx = C(k, S_rms) · Σ(S_i² − p_i²) / Σ S_i²,   S_rms = √(Σ S_i² / k)
//
// C the measured context attention of k sequences of length S_rms. One
// chunk gives C(1, S)·(S² − p²)/S² (docs/design.md, "Lookups": the cached prefix
// removes that share of the quadratic work); several chunks run as one
// batched kernel, as vLLM does.
func (m *Model) contextSeconds(b *perf.Batch) float64 { return contextOn(b, m.ctx) }

// contextOn is contextSeconds on grid g (the model's context attention, or
// an MLA layer's measured core).
func contextOn(b *perf.Batch, g *attnGrid) float64 {
	var k, sumS2, sumWork float64
	for i := range b.Prefill {
		c := &b.Prefill[i]
		if c.NewTokens <= 0 {
			continue
		}
		S := float64(c.NewTokens + c.PrefixTokens)
		p := float64(c.PrefixTokens)
		k++
		sumS2 += S * S
		sumWork += S*S - p*p
	}
	if k == 0 {
		return 0
	}
	return g.Seconds(k, math.Sqrt(sumS2/k)) * sumWork / sumS2
}

// generationSeconds prices decode attention, one layer: the measured
// generation attention of D sequences at their mean KV length k̄ = Σkv/D + 1
// (the token being computed attends to itself too). Decode attention is
// memory bound, so the mean carries the total bytes.
func (m *Model) generationSeconds(b *perf.Batch) float64 { return generationOn(b, m.gen) }

// generationOn is generationSeconds on grid g.
func generationOn(b *perf.Batch, g *attnGrid) float64 {
	D := b.Decodes
	if D == 0 {
		return 0
	}
	sum := float64(b.DecodeKVSum) // the same float as a sum over the requests (perf.Batch)
	return g.Seconds(float64(D), sum/float64(D)+1)
}

// Breakdown prices the pass op family by op family, ns, summed over layers
// (perf.Breakdown's fields: MemoryOpsNs holds norms, activation, rotary and
// q/k norms). It does not allocate.
func (m *Model) Breakdown(b *perf.Batch) perf.Breakdown {
	if m.hy != nil {
		// one batch stands for every DP rank (GroupPassTime prices them apart)
		return m.hybridBreakdown(b, int(perf.DPMoETokens(m.dp(), perf.PadBatch(m.cg, b, m.cgTop))))
	}
	out, ok := m.tokenBreakdown(b, m.tokenCosts)
	if !ok {
		return out
	}
	out.ContextAttentionNs = m.layers * m.contextSeconds(b) * 1e9
	out.GenerationAttentionNs = m.layers * m.generationSeconds(b) * 1e9
	out.DraftNs = perf.DraftNs(b, m.layers, m.Breakdown)
	return out
}

// tokenBreakdown fills the pass overhead and the parts that depend on the
// token count x (from the tables tabulate filled, else costs(x)) and the
// samplers (logits); ok is false for an empty pass (overhead only).
func (m *Model) tokenBreakdown(b *perf.Batch, costs func(float64) (float64, float64, float64, float64)) (perf.Breakdown, bool) {
	out := perf.Breakdown{OverheadNs: perf.OverheadNs(m.overheadNs, m.seqOverheadNs, b), HostLaunchNs: b.HostLaunchNs}
	x := b.Tokens()
	if x <= 0 {
		return out, false
	}
	if x < len(m.gemmNs) {
		out.GEMMNs, out.MemoryOpsNs, out.AllReduceNs, out.EmbeddingNs = m.gemmNs[x], m.memNs[x], m.arNs[x], m.embedNs[x]
	} else {
		out.GEMMNs, out.MemoryOpsNs, out.AllReduceNs, out.EmbeddingNs = costs(float64(x))
	}
	if s := b.Samplers; s > 0 && s < len(m.logitsNs) {
		out.LogitsNs = m.logitsNs[s]
	} else if s > 0 {
		out.LogitsNs = m.logitsCost(float64(s))
	}
	return out, true
}

// PassTime is perf.PassNs(Breakdown(b).PassNs(OverlapCPU)): rounded, in [1, clock.MaxSpan].
// It does not allocate.
func (m *Model) PassTime(b *perf.Batch) int64 {
	return perf.PassNs(m.Breakdown(b).PassNs(m.overlapCPU))
}

// Name is "aic-v1".
func (m *Model) Name() string { return Name }

// Sources lists, per table, the version asked for and the file read (a
// copy; for the report's metadata).
func (m *Model) Sources() []Source { return append([]Source(nil), m.sources...) }

// Notes lists the stand-ins New chose (dtype fallbacks, scaled head
// counts, another GPU count), in the order they were made.
func (m *Model) Notes() []string { return append([]string(nil), m.notes...) }

// Metadata is the report's perf metadata: the tables read, the notes and
// the overheads in effect (the engine.perf field names, µs).
func (m *Model) Metadata() map[string]any {
	md := map[string]any{"tables": m.Sources(), "notes": m.Notes(), "params": map[string]float64{
		"pass_overhead_us": m.overheadNs / 1e3, "per_sequence_overhead_us": m.seqOverheadNs / 1e3}}
	if m.overlapCPU {
		md["cpu_overlap"] = true
	}
	if len(m.fallbacks) > 0 {
		md["fallbacks"] = m.Fallbacks()
	}
	if m.a2a != nil {
		md["all2all"] = m.a2a
	}
	return md
}

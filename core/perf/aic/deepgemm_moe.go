package aic

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// vLLM's DeepGEMM fused-MoE path as vLLM 0.11.1–0.12.x run it on Hopper
// (docs/moe.md, "vLLM 0.12's DeepGEMM experts: every block of the buffer").
//
// Which kernel: the FP8 MoE backend selection (fp8.py, select_fp8_moe_backend)
// returns DeepGEMM for block-quantized experts when VLLM_USE_DEEP_GEMM (on by
// default) and DeepGEMM is installed (vLLM's image builds it,
// tools/install_deepgemm.sh), except at a MoE tensor-parallel size ≥ 8
// (vLLM pull request 29346, 2025-11-24). TritonOrDeepGemmExperts then takes
// DeepGEMM at every batch once E8M0 scales are on, which pull request 26197
// (2025-10-03, first in 0.11.1) made Hopper's default: `is_deep_gemm_e8m0_used()
// or _valid_deep_gemm(...)` short-circuits the M ≥ 128 shape check.
//
// What it computes: DeepGemmExperts.apply sizes its contiguous buffer by
// compute_aligned_M, without per-expert counts on the host (the standard
// prepare/finalize, every layout but DeepEP's) the worst case
//
//	M_sum = roundup(X·k + E_local·(128 − 1), 128)
//
// rows (deep_gemm_utils.py). deepgemm_moe_permute fills expert_ids with
// torch.zeros, ep_scatter writes each touched expert's id over its 128-row
// blocks, and the rows it does not write stay expert 0: DeepGEMM's scheduler
// skips only negative ids, so both grouped GEMMs compute all M_sum rows
// (≈ E_local blocks of 128 at decode, whatever the batch). vLLM pull request
// 30494 (opened 2025-12-11, after 0.12.0) initialised expert_ids to −1 so the
// unwritten blocks are skipped; releases from 0.13.0 are not priced so.
//
// The collector's tables time Triton's fused_experts instead
// (collect_moe.py calls it without allow_deep_gemm), so this path is priced
// from the block-fp8 GEMM grid the model's linears use: each grouped GEMM as
// the dense GEMM of M_sum rows (same FLOPs and tiles; never below reading the
// touched experts' weights once), plus the memory-bound kernels around them.

// DeepGEMMBlockM is DeepGEMM's M alignment of the contiguous grouped layout
// (deep_gemm.get_m_alignment_for_contiguous_layout: 128 on Hopper; ep_scatter's
// BLOCK_E).
const DeepGEMMBlockM = 128

// deepGEMMMoEKernels is the memory-bound kernels of one layer of the path
// besides the two GEMMs: the input's per-token-group fp8 quantization, the
// expert count, ep_scatter's two kernels, the activation, its quantization and
// ep_gather's unpermute-and-reduce (DeepGemmExperts.apply and
// deepgemm_moe_permute).
const deepGEMMMoEKernels = 7

// deepGEMMExperts is the padded DeepGEMM experts path of one MoE layer.
type deepGEMMExperts struct {
	local, k, h, ig, e float64 // E_local, top-k, expert width h_e, I/moe_tp, experts
}

// deepGEMMPadded reports whether vLLM runs the model's routed experts on the
// padded DeepGEMM path (the comment above): vLLM 0.11.1 ≤ version < 0.13.0 on a
// Hopper GPU (smVersion 90, hardware.System.SMVersion), block-fp8 experts and linears, moe_tp < 8, no --moe-backend
// and not a point-to-point all2all backend (DeepEP hands the counts over).
func deepGEMMPadded(opt Options, smVersion int, ed, wd model.Dtype, par model.Parallel) bool {
	if opt.Backend != "vllm" || smVersion != hopperSM || ed != model.FP8Block || wd != model.FP8Block {
		return false
	}
	if (opt.MoEBackend != "" && opt.MoEBackend != "auto") || par.MoETP() >= 8 {
		return false
	}
	if par.DP > 1 && par.EP && perf.IsAll2All(opt.All2AllBackend) {
		return false
	}
	v, err := parseVersion(opt.Version)
	if err != nil {
		return false
	}
	lo, _ := parseVersion("0.11.1")
	hi, _ := parseVersion("0.13.0")
	return !lo.newer(v) && hi.newer(v)
}

// hopperSM is Hopper's compute capability (sm_90), the one DeepGEMM's sm90
// kernels run on.
const hopperSM = 90

// newDeepGEMMExperts is the path for arch at layout par.
func newDeepGEMMExperts(arch *model.Arch, par model.Parallel) *deepGEMMExperts {
	mo := arch.MoE
	tp, ep := par.MoETP(), par.MoEEP()
	return &deepGEMMExperts{
		local: float64((mo.Experts + ep - 1) / ep), k: float64(mo.TopK), h: float64(arch.ExpertHidden()),
		ig: float64((mo.Intermediate + tp - 1) / tp), e: float64(mo.Experts),
	}
}

// Rows is M_sum, the rows both grouped GEMMs compute for X tokens entering
// the layer (all data-parallel ranks'): roundup(X·k + E_local·127, 128).
func (d *deepGEMMExperts) Rows(X float64) float64 {
	return math.Ceil((X*d.k+d.local*(DeepGEMMBlockM-1))/DeepGEMMBlockM) * DeepGEMMBlockM
}

// deepGEMMSeconds prices one MoE layer's routed experts on one GPU when X
// tokens enter it, on the padded DeepGEMM path: the gate-up GEMM (M_sum ×
// 2·I_g × h_e) and the down GEMM (M_sum × h_e × I_g) each at the block-fp8
// grid's time for M_sum rows, never below reading the weights of the experts
// touched (uniform routing, perf.ExpectedDistinctExperts, plus expert 0 of the
// padding rows) once; then the memory-bound kernels (bytes / (W·s) + c each):
// the input quantized (2h_e bytes read, h_e written per token), ep_scatter's
// copy (h_e read per token, h_e written per (token, local expert) pair), the
// activation over M_sum rows (2·I_g bf16 read, I_g bf16 written), its fp8
// quantization (I_g bf16 read, I_g written) and ep_gather (h_e bf16 read per
// pair, h_e bf16 written per token).
func (m *Model) deepGEMMSeconds(X float64) float64 {
	d := m.hy.dg
	if X <= 0 {
		return 0
	}
	rows := d.Rows(X)
	pairs := X * d.k * d.local / d.e
	touched := math.Min(d.local, d.local*perf.ExpectedDistinctExperts(X, int(d.e), int(d.k))/d.e+1)
	readS := func(n, k float64) float64 { return touched * n * k * model.FP8Block.Bytes() / m.memBW }
	gemm := math.Max(m.gemmW.Seconds(rows, 2*d.ig, d.h), readS(2*d.ig, d.h)) +
		math.Max(m.gemmW.Seconds(rows, d.h, d.ig), readS(d.h, d.ig))
	bytes := X*3*d.h + (X*d.h + pairs*d.h) + rows*(2*d.ig*2+d.ig*2) + rows*(d.ig*2+d.ig) + (pairs*d.h*2 + X*d.h*2)
	return gemm + bytes/m.memBW + deepGEMMMoEKernels*m.memLatencyS
}

// deepGEMMNote is the report's note of the path.
func deepGEMMNote(version string, d *deepGEMMExperts) string {
	return fmt.Sprintf("routed experts priced as vLLM %s's DeepGEMM path (block-fp8 experts on Hopper): both grouped GEMMs over roundup(X·%g + %g·127, 128) rows, the unwritten blocks computed as expert 0 (before vLLM pull request 30494), from the block-fp8 GEMM grid; the moe_perf curve (Triton's fused_experts) not used",
		version, d.k, d.local)
}

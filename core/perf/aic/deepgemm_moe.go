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
// At every batch and every moe_tp below 8, by vLLM 0.12.0's source: without an
// all2all, Fp8MoEMethod.apply calls fused_experts(allow_deep_gemm=True)
// (quantization/fp8.py:1315), which runs deep_gemm_moe_fp8 when
// `is_deep_gemm_e8m0_used() or _valid_deep_gemm(...)` (fused_moe.py:1597);
// with one, TritonOrDeepGemmExperts.apply tests the same
// (triton_deep_gemm_moe.py:140). is_deep_gemm_e8m0_used (utils/deep_gemm.py:59)
// is true on sm_90 with DeepGEMM installed and VLLM_USE_DEEP_GEMM_E8M0 at its
// default 1 (envs.py:1177; 0.12.0 has no Hopper-specific switch), so the
// checks of _valid_deep_gemm (deep_gemm_moe.py:44: M ≥ 128, N and K multiples
// of 128, N > 512, fp8 and contiguous weights) are never reached: a 16-token
// decode, and TP 4's down projection of N = 1536/4 = 384, run DeepGEMM too.
// CUDA graphs change only X (the batch padded to its capture size, priced by
// the caller).
//
// The collector's tables time Triton's fused_experts instead
// (collect_moe.py calls it without allow_deep_gemm), so this path is priced
// from the block-fp8 GEMM grid the model's linears use: each grouped GEMM as
// the dense GEMM of M_sum rows (same FLOPs and tiles; never below reading the
// touched experts' weights once) less the activation quantization each grid
// row includes (groupQuantSeconds), plus the memory-bound kernels around them.

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
	return wd == model.FP8Block && par.MoETP() < 8 && vllmHopperBlockFP8Oracle(opt, smVersion, ed, par, "0.11.1", "0.13.0")
}

// vllmHopperBlockFP8Oracle reports whether vLLM's fp8 MoE oracle makes its
// own choice for the model's routed experts in release lo ≤ version < hi:
// vLLM on a Hopper GPU (smVersion 90), block-fp8 experts, no --moe-backend,
// and the standard activation format (not a point-to-point all2all backend
// at DP + EP, which hands the experts its own batched format). The release
// range is the caller's: the oracle's order changed between releases.
func vllmHopperBlockFP8Oracle(opt Options, smVersion int, ed model.Dtype, par model.Parallel, lo, hi string) bool {
	if opt.Backend != "vllm" || smVersion != hopperSM || ed != model.FP8Block {
		return false
	}
	if opt.MoEBackend != "" && opt.MoEBackend != "auto" {
		return false
	}
	if par.DP > 1 && par.EP && perf.IsAll2All(opt.All2AllBackend) {
		return false
	}
	v, err := parseVersion(opt.Version)
	if err != nil {
		return false
	}
	l, _ := parseVersion(lo)
	h, _ := parseVersion(hi)
	return !l.newer(v) && h.newer(v)
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
// grid's time for M_sum rows less groupQuantSeconds of its M_sum × K input
// (the grouped GEMMs read inputs already in fp8, quantized by the kernels
// below), never below reading the weights of the experts
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
	grouped := func(n, k float64) float64 {
		return math.Max(m.gemmW.Seconds(rows, n, k)-m.groupQuantSeconds(rows, k), readS(n, k))
	}
	gemm := grouped(2*d.ig, d.h) + grouped(d.h, d.ig)
	bytes := X*3*d.h + (X*d.h + pairs*d.h) + rows*(2*d.ig*2+d.ig*2) + rows*(d.ig*2+d.ig) + (pairs*d.h*2 + X*d.h*2)
	return gemm + bytes/m.memBW + deepGEMMMoEKernels*m.memLatencyS
}

// deepGEMMNote is the report's note of the path.
func deepGEMMNote(version string, d *deepGEMMExperts) string {
	return fmt.Sprintf("routed experts priced as vLLM %s's DeepGEMM path (block-fp8 experts on Hopper): both grouped GEMMs over roundup(X·%g + %g·127, 128) rows, the unwritten blocks computed as expert 0 (before vLLM pull request 30494), from the block-fp8 GEMM grid; the moe_perf curve (Triton's fused_experts) not used",
		version, d.k, d.local)
}

// groupQuantSeconds is the per-token-group fp8 quantization of an M × K bf16
// input that each row of the block-fp8 GEMM grid includes, on the
// memory-op model (2K bytes read and K written a row, then c; the per-group
// scales' K/32 bytes not counted, as for the path's own quantizations): the
// collector times RowParallelLinear.forward of a bf16 input
// (AIConfigurator collector/vllm/collect_gemm.py, run_gemm), and vLLM's
// W8A8BlockFp8LinearOp quantizes it before its GEMM
// (quantization/utils/fp8_utils.py:272, deepgemm_input_quant_op, then
// fp8_gemm_nt_op at :278). DeepGemmExperts.apply hands both grouped GEMMs fp8
// inputs (deep_gemm_moe.py:283 the permuted a1q, quantized per token by the
// prepare step; :290 per_token_group_quant_fp8 of the activation before :294),
// so the grid's row would price that pass a second time.
func (m *Model) groupQuantSeconds(M, K float64) float64 {
	return M*K*3/m.memBW + m.memLatencyS
}

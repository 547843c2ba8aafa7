package aic

import (
	"fmt"
	"strings"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// vLLM 0.16's block-fp8 experts on Hopper run FlashInfer's CUTLASS fused MoE
// (docs/moe.md, "vLLM 0.16's block-fp8 experts on Hopper: FlashInfer CUTLASS").
//
// Which kernel, by the vllm==0.16.0 wheel's sources: Fp8MoEMethod.__init__
// (quantization/fp8.py) keys block-quantized experts as
// (kFp8Static128BlockSym, kFp8Dynamic128Sym) and calls
// select_fp8_moe_backend (fused_moe/oracle/fp8.py), whose priority list is
// AITER, FLASHINFER_TRTLLM, FLASHINFER_CUTLASS, DEEPGEMM, …, TRITON. With
// none of VLLM_USE_FLASHINFER_MOE_FP8, VLLM_USE_DEEP_GEMM,
// VLLM_MOE_USE_DEEP_GEMM set, the first supported one wins: AITER is ROCm's,
// FLASHINFER_TRTLLM (is_supported_config_trtllm_fp8) is Blackwell's, and
// FlashInferExperts (fused_moe/flashinfer_cutlass_moe.py) supports sm_90
// with flashinfer's cutlass_fused_moe installed (the wheel requires
// flashinfer-python==0.6.3), the block scheme on device capability 9.0
// exactly, silu, any parallel config but sequence parallel, and the standard
// activation format. Its apply calls flashinfer's cutlass_fused_moe with
// use_deepseek_fp8_block_scale. vLLM issue 34249 (2026-02-10, vLLM
// 0.15.2rc1.dev152) logs the same choice on H100 ("Using FLASHINFER_CUTLASS
// Fp8 MoE backend out of potential backends: ['AITER', 'FLASHINFER_TRTLLM',
// 'FLASHINFER_CUTLASS', 'DEEPGEMM', …]"); pull request 34260, which put
// DeepGEMM first on Hopper, is not in 0.16.0's oracle.
//
// FlashInfer's cutlass_fused_moe is TensorRT-LLM's CUTLASS MoE runner, and
// AIConfigurator times that runner for TRT-LLM (kernel_source
// moe_torch_flow_cutlass, moe/trtllm/<version>/moe_perf.parquet), so those
// rows price these experts; the moe/vllm tables time Triton's fused_experts.

// flashInferCutlassFP8 reports whether vLLM runs the model's routed experts on
// FlashInfer's CUTLASS fused MoE (the comment above): vLLM 0.16.x on a Hopper
// GPU (smVersion 90), block-fp8 experts, no --moe-backend, and the standard
// activation format (not a point-to-point all2all backend, whose batched
// format FlashInferExperts does not take).
func flashInferCutlassFP8(opt Options, smVersion int, ed model.Dtype, par model.Parallel) bool {
	return vllmHopperBlockFP8Oracle(opt, smVersion, ed, par, "0.16.0", "0.17.0")
}

// cutlassMoEKernel is the kernel_source of AIConfigurator's TRT-LLM rows
// timing the CUTLASS MoE runner.
const cutlassMoEKernel = "moe_torch_flow_cutlass"

// flashInferCutlassCurve finds the CUTLASS runner's curve of the model's
// shape, layout and routing (moeRouted) in the newest TRT-LLM MoE table of the system that timed
// it; false when none did (the caller then keeps the vLLM table, noted).
func (m *Model) flashInferCutlassCurve(version, routing string, shape moeShape, label string, ed model.Dtype, sys *hardware.System,
	sysDir string, hy *hybrid) (bool, error) {
	exclude := map[string]string{}
	for {
		src, err := locateExcept(sysDir, m.system, "trtllm", "", TableMoE, exclude)
		if err != nil {
			return false, nil
		}
		rows, err := loadMoE(src.Path)
		if err != nil {
			return false, err
		}
		kr := moeRowsOfKernel(rows, func(kernel string) bool { return strings.Contains(kernel, cutlassMoEKernel) })
		if c, ok := moeRouted(kr, label, shape, sys, ed, routing); ok && moeImplausible(kr, c, label) == "" {
			src.Table = TableMoE + " (" + routedLabel(label, c) + ", FlashInfer CUTLASS: trtllm " + cutlassMoEKernel + ")"
			m.sources = append(m.sources, src)
			m.notes = append(m.notes, fmt.Sprintf("vLLM %s on sm_90 runs block-fp8 experts on FlashInfer's CUTLASS fused MoE "+
				"(select_fp8_moe_backend's FLASHINFER_CUTLASS): priced from TRT-LLM %s's %s rows", version, src.ReadFrom, cutlassMoEKernel))
			hy.moe = c
			return true, nil
		}
		exclude[src.ReadFrom] = fmt.Sprintf("no %s %s curve for hidden %d, experts %d × %d, top-%d at moe_tp %d, moe_ep %d",
			cutlassMoEKernel, label, shape.h, shape.e, shape.inter, shape.k, shape.tp, shape.ep)
	}
}

package sglang

import (
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/model"
)

// piecewiseBeforeMemory reports whether piecewise CUDA graphs are still on
// when server_args.py _handle_gpu_memory_settings runs (release 0.5.10 to
// 0.5.14; from 0.5.15 the prefill graph backend decides, piecewiseMemory),
// so that it reserves memory for them: _handle_piecewise_cuda_graph
// has turned them off for the architecture (config.SGLangPiecewiseOff),
// speculative decoding (0.5.10 only: config.SGLangPiecewiseWithSpeculative),
// DP attention, a MoE all-to-all backend, or P/D disaggregation (the
// simulator's pools run one pipeline stage, no EPLB, LoRA or torch.compile).
func piecewiseBeforeMemory(rel config.Release, in engine.PoolInput, spec bool, dp int, a2a bool) bool {
	return config.SGLangPiecewiseByDefault(rel) && !config.SGLangPiecewiseOff(rel, in.Arch.Architecture) &&
		(!spec || config.SGLangPiecewiseWithSpeculative(rel)) && dp <= 1 && !a2a &&
		in.Name != "prefill" && in.Name != "decode"
}

// prefillGraphs is the prefill CUDA graph backend of pool in from 0.5.15
// (config.SGLangPrefillGraphs).
func prefillGraphs(rel config.Release, in engine.PoolInput, dp int, a2a bool) string {
	return config.SGLangPrefillGraphs(rel, config.SGLangPrefillGraphInput{Architecture: in.Arch.Architecture,
		MLA: in.Arch.MLA != nil, DSA: in.Arch.MLA != nil && in.Arch.MLA.Indexer != nil, DP: dp, DeepEP: a2a, Mode: in.Name})
}

// piecewiseMemory is what _handle_gpu_memory_settings reads of the piecewise
// CUDA graphs of pool in (config.SGLangPiecewiseMemory).
func piecewiseMemory(rel config.Release, in engine.PoolInput, g *config.SGLang, spec bool, dp int) config.SGLangPiecewiseMemory {
	m := config.SGLangPiecewiseMemory{MLA: in.Arch.MLA != nil,
		Llama2: strings.Contains(strings.ToLower(in.Arch.Name), "llama-2"), ContextLength: g.ContextLength, Mode: in.Name}
	if config.SGLangBreakableByDefault(rel) {
		b := prefillGraphs(rel, in, dp, g.DeepEP())
		m.On, m.Breakable = b != config.SGLangPrefillGraphsOff, b == config.SGLangBreakableGraphs
	} else {
		m.On = piecewiseBeforeMemory(rel, in, spec, dp, g.DeepEP())
	}
	return m
}

// piecewiseMaxTokens is the largest extend pass SGLang replays from
// piecewise CUDA graphs (the largest capture size, d's PiecewiseLargest: a
// piecewise_cuda_graph_max_tokens of 4000 replays up to 3840), 0 when they
// are off: off before memory is sized (piecewiseBeforeMemory), or no capture
// size (chunked prefill off, -1, for a model without MLA:
// model_runner.py init_piecewise_cuda_graphs), or, through 0.5.12, by the
// MoE runner (trtllmMoERunner); and 0 with speculative decoding from 0.5.11,
// which keeps them on: an EAGLE/NEXTN target's extend pass asks for every
// hidden state (CaptureHiddenMode.FULL in eagle_worker.py
// forward_target_extend and eagle_worker_v2.py), and
// piecewise_cuda_graph_runner.py can_run refuses a batch whose hidden mode
// is not the graphs' NULL: it runs eagerly.
//
// From 0.5.15 breakable graphs (config.SGLangPrefillGraphs) capture the
// EAGLE target's full hidden states (runner/prefill_cuda_graph_runner.py:
// capture_hidden_mode FULL for the target under Backend.BREAKABLE), so
// speculative decoding keeps them; tc_piecewise ones still leave an EAGLE
// target eager.
func piecewiseMaxTokens(rel config.Release, in engine.PoolInput, d config.SGLangGPUDefaults, pcg config.SGLangPiecewiseMemory, a2a, spec bool) int {
	if !pcg.On || d.PiecewiseSizes == 0 || spec && !pcg.Breakable {
		return 0
	}
	if config.SGLangPiecewiseOffForTRTLLMMoE(rel) && trtllmMoERunner(in, a2a) {
		return 0
	}
	return d.PiecewiseLargest
}

// trtllmMoERunner reports whether SGLang (0.5.10 to 0.5.12.post1) picks the
// flashinfer_trtllm MoE runner for pool in when --moe-runner-backend is
// left out (server_args.py _handle_model_specific_adjustments), on a GPU of
// compute capability 10.x (is_sm100_supported: B200, GB200, B300) without
// a MoE all-to-all backend:
//
//	DeepseekV3ForCausalLM, KimiK25ForConditionalGeneration   quantization fp8, modelopt_fp8,
//	                         modelopt_fp4 or modelopt_mixed, the int4 group-32 of Kimi K2
//	                         thinking; a DeepseekV3ForCausalLM checkpoint without
//	                         quantization_config is fp8
//	Qwen3MoeForCausalLM (and the Qwen3-VL-MoE, Qwen3-Next and Qwen3.5 classes)
//	                         fp8, modelopt_fp4 or none
//	Llama4ForConditionalGeneration   fp8 or modelopt_fp8
//
// The quantization is the checkpoint's format as SGLang names it: FP8
// (either form) fp8, NVFP4 modelopt_fp4 (the --quantization the InferenceX
// recipes give a ModelOpt NVFP4 checkpoint; without it SGLang reads
// quantization_config's quant_method "modelopt", which none of the lists
// holds), INT4 the Kimi int4. GptOssForCausalLM's flashinfer_mxfp4 keeps
// the graphs (its MoE block is one custom op), and Glm4MoeForCausalLM is not
// served here.
func trtllmMoERunner(in engine.PoolInput, a2a bool) bool {
	a := in.Arch
	if a2a || a.MoE == nil || in.Sys.SMVersion/10 != 10 {
		return false
	}
	q := a.ExpertDtype()
	fp8 := q == model.FP8 || q == model.FP8Block
	switch a.Architecture {
	case "DeepseekV3ForCausalLM":
		return fp8 || q == model.NVFP4 || q == model.BF16 || q == model.INT4
	case "KimiK25ForConditionalGeneration":
		return fp8 || q == model.NVFP4 || q == model.INT4
	case "Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM",
		"Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration":
		return fp8 || q == model.NVFP4 || q == model.BF16
	case "Llama4ForConditionalGeneration":
		return fp8
	}
	return false
}

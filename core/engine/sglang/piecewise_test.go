package sglang

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// The flashinfer_trtllm MoE runner that _handle_model_specific_adjustments
// picks on compute capability 10.x (0.5.10 to 0.5.12) turns piecewise CUDA
// graphs off (_handle_moe_kernel_config, "bypassed topk"), after the memory
// for them is reserved: DeepSeek-V3 FP8 on a B200 keeps none at 0.5.12 and
// 2048 tokens at 0.5.13 (MLA: 2048), on an H200 2048 at both; a MoE
// all-to-all backend keeps the auto runner (but has turned the graphs off
// before). Qwen3-MoE takes the runner in bf16 too; Llama-4 only in FP8;
// gpt-oss's flashinfer_mxfp4 is exempt; a dense model has no MoE runner.
func TestTRTLLMMoERunnerTurnsPiecewiseOff(t *testing.T) {
	moe := &model.MoE{Experts: 8, TopK: 2}
	in := func(arch string, dt model.Dtype, sm int) engine.PoolInput {
		a := &model.Arch{Name: "m", Architecture: arch, WeightDtype: dt, MoE: moe, MLA: &model.MLA{}}
		return engine.PoolInput{Arch: a, Sys: &hardware.System{SMVersion: sm}, Name: "aggregated"}
	}
	const gib = int64(1) << 30
	pcg := config.SGLangPiecewiseMemory{On: true, MLA: true}
	d := config.SGLangDefaultsPiecewise(config.Release{Major: 0, Minor: 5, Patch: 12}, 180*gib, 8, 1, 1, nil, pcg)
	dsv3 := in("DeepseekV3ForCausalLM", model.FP8Block, 100)
	assert.Equal(t, 0, piecewiseMaxTokens(config.Release{Major: 0, Minor: 5, Patch: 12}, dsv3, d, pcg, false, false))
	assert.Equal(t, 2048, piecewiseMaxTokens(config.Release{Major: 0, Minor: 5, Patch: 13}, dsv3, d, pcg, false, false))
	assert.Equal(t, 2048, piecewiseMaxTokens(config.Release{Major: 0, Minor: 5, Patch: 12}, in("DeepseekV3ForCausalLM", model.FP8Block, 90), d, pcg, false, false))
	for _, c := range []struct {
		arch string
		dt   model.Dtype
		sm   int
		a2a  bool
		want bool
	}{
		{"DeepseekV3ForCausalLM", model.BF16, 100, false, true}, // no quantization_config: fp8
		{"DeepseekV3ForCausalLM", model.NVFP4, 103, false, true},
		{"DeepseekV3ForCausalLM", model.FP8Block, 100, true, false},
		{"DeepseekV3ForCausalLM", model.FP8Block, 120, false, false},
		{"DeepseekV2ForCausalLM", model.FP8Block, 100, false, false},
		{"KimiK25ForConditionalGeneration", model.BF16, 100, false, false},
		{"KimiK25ForConditionalGeneration", model.INT4, 100, false, true},
		{"Qwen3MoeForCausalLM", model.BF16, 100, false, true},
		{"Qwen3MoeForCausalLM", model.FP8Block, 100, false, true},
		{"Llama4ForConditionalGeneration", model.BF16, 100, false, false},
		{"Llama4ForConditionalGeneration", model.FP8, 100, false, true},
		{"GptOssForCausalLM", model.MXFP4, 100, false, false},
		{"MiniMaxM2ForCausalLM", model.FP8Block, 100, false, false},
	} {
		assert.Equal(t, c.want, trtllmMoERunner(in(c.arch, c.dt, c.sm), c.a2a), "%s %s sm%d", c.arch, c.dt, c.sm)
	}
	dense := in("Qwen3ForCausalLM", model.BF16, 100)
	dense.Arch.MoE = nil
	assert.False(t, trtllmMoERunner(dense, false))
}

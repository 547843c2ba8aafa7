package aic

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSGLangFusedSharedExpertRule: SGLang's
// determine_num_fused_shared_experts (models/deepseek_v2.py, 0.5.6.post2 and
// 0.5.9) fuses the shared expert of DeepseekV3ForCausalLM and of GLM-5's
// GlmMoeDsaForCausalLM (models/glm4_moe.py) when the config has 256 routed
// experts and one shared one, the experts are not expert-parallel and not on
// SM 100's flashinfer_trtllm runner (server_args.py); vLLM
// and other architectures (Kimi-K2.5's 384 experts, Qwen3.5's gated shared
// expert) keep a separate shared expert.
func TestSGLangFusedSharedExpertRule(t *testing.T) {
	for _, c := range []struct {
		model, backend string
		ep             bool
		sm             int
		weights        model.Dtype
		want           bool
	}{
		{"deepseek-ai/DeepSeek-V3", "sglang", false, 90, model.FP8Block, true},
		{"deepseek-ai/DeepSeek-V3", "sglang", true, 90, model.FP8Block, false},
		{"deepseek-ai/DeepSeek-V3", "vllm", false, 90, model.FP8Block, false},
		{"zai-org/GLM-5-FP8", "sglang", false, 90, model.FP8Block, true},
		{"moonshotai/Kimi-K2.5", "sglang", false, 90, model.BF16, false},
		{"Qwen--Qwen3.5-397B-A17B", "sglang", false, 90, model.BF16, false},
		// SM 100: flashinfer_trtllm experts for a quantized checkpoint, and for
		// DeepSeek-V3 always (its unquantized config is given fp8); not on SM 120
		{"deepseek-ai/DeepSeek-V3", "sglang", false, 100, model.FP8Block, false},
		{"deepseek-ai/DeepSeek-V3", "sglang", false, 100, model.BF16, false},
		{"zai-org/GLM-5-FP8", "sglang", false, 103, model.FP8Block, false},
		{"zai-org/GLM-5-FP8", "sglang", false, 100, model.BF16, true},
		{"deepseek-ai/DeepSeek-V3", "sglang", false, 120, model.FP8Block, true},
	} {
		a := sharedModel(t, c.model)
		assert.Equal(t, c.want, sglangFusedSharedExperts(a, c.backend, model.Parallel{TP: 8, EP: c.ep}, c.sm, c.weights),
			"%s %s EP %v SM %d %s", c.model, c.backend, c.ep, c.sm, c.weights)
	}
}

// TestSGLangFusedSharedExpertPrice: DeepSeek-V3 on SGLang 0.5.9 at TP 8
// (fp8_block weights, the InferenceX rows' layout) prices its shared expert
// inside the fused-MoE kernel of each of its 58 MoE layers. The same model
// under an architecture the rule does not name prices it as before. The
// differences, by hand:
//   - GEMMs: the shared expert's gate_up (N = 2·2048/8 = 512, K = 7168) and
//     down (N = 7168, K = 256) no longer run as GEMMs: 58·(G(x, 512, 7168) +
//     G(x, 7168, 256)) less;
//   - memory ops: no SiLU-and-mul of its own (read 2·256, write 256 bf16 a
//     token: 6·256 bytes, one kernel): 58·(x·1536/W + c) less;
//   - experts: its share S(x) = max(R(x), G(x) − G(1) + R(1)) and the top-k's
//     ninth id and weight (8 bytes a token) more: 58·(S(x) + 8x/W).
//
// At one token the share is one read of its fp8 weights: (512·7168 + 512 +
// 7168) + (7168·256 + 7168 + 256) = 5,520,128 bytes at 4.8 TB/s, 1.150 µs.
func TestSGLangFusedSharedExpertPrice(t *testing.T) {
	a := sharedModel(t, "deepseek-ai/DeepSeek-V3")
	require.Equal(t, 58, a.MoELayers())
	sys := builtinSystem(t, "h200_sxm")
	opt := Options{MaxTokens: 8192, Database: sharedDB(t), Backend: "sglang", Version: "0.5.9", TP: 8,
		WeightDtype: model.FP8Block, KVDtype: model.BF16, CUDAGraphMaxTokens: 256}
	fused, err := New(a, sys, opt)
	require.NoError(t, err)
	other := *a
	other.Architecture = "DeepseekV2ForCausalLM"
	plain, err := New(&other, sys, opt)
	require.NoError(t, err)
	require.Len(t, fused.hy.fusedShared, 2)
	require.Nil(t, plain.hy.fusedShared)

	assert.InEpsilon(t, 5520128/4.8e12, fused.fusedSharedSeconds(1), 1e-12)

	g := func(x float64) float64 {
		return fused.gemmW.Seconds(x, 512, 7168) + fused.gemmW.Seconds(x, 7168, 256)
	}
	r := func(x float64) float64 {
		return fused.gemmW.roofline(x, 512, 7168) + fused.gemmW.roofline(x, 7168, 256)
	}
	for _, b := range []*perf.Batch{
		{Decodes: 4, DecodeKVSum: 4000, Samplers: 4},
		{Prefill: []perf.Chunk{{NewTokens: 8192}}, Samplers: 1},
	} {
		x := float64(b.Tokens())
		// the per-token costs before the tabulation's running maximum
		gf, mf, _, _ := fused.hybridTokenCosts(x)
		gp, mp, _, _ := plain.hybridTokenCosts(x)
		ef, _ := fused.moeTokenCosts(x)
		ep, _ := plain.moeTokenCosts(x)
		assert.InEpsilon(t, 58*g(x)*1e9, gp-gf, 1e-9, "GEMMs at %v tokens", x)
		assert.InEpsilon(t, 58*(x*6*256/fused.memBW+fused.memLatencyS)*1e9, mp-mf, 1e-9, "memory ops at %v tokens", x)
		s := max(r(x), g(x)-g(1)+r(1))
		assert.InEpsilon(t, 58*(s+8*x/fused.memBW)*1e9, ef-ep, 1e-9, "experts at %v tokens", x)
		bf, bp := fused.Breakdown(b), plain.Breakdown(b)
		assert.Less(t, bf.TotalNs(), bp.TotalNs())
		assert.Equal(t, bp.GenerationAttentionNs, bf.GenerationAttentionNs)
		assert.Equal(t, bp.AllReduceNs, bf.AllReduceNs)
	}
	// a decode's share is about one expert's weights: the GEMMs' launch-bound
	// floor is gone (G(1) ≈ 14.7 µs against R(1) ≈ 1.15 µs a layer)
	assert.Less(t, fused.fusedSharedSeconds(4), 2*fused.fusedSharedSeconds(1))
	assert.Greater(t, g(1), 10*r(1))
}

package aic

import "github.com/aisimulate/aisimulate/core/model"

// sglangFusedSharedArchitectures are the architectures whose SGLang model
// class fuses a lone shared expert into the routed experts' kernel
// (python/sglang/srt/models/deepseek_v2.py,
// DeepseekV2ForCausalLM.determine_num_fused_shared_experts, called with
// "DeepseekV3ForCausalLM" by DeepseekV3ForCausalLM and with
// "GlmMoeDsaForCausalLM" by models/glm4_moe.py's GlmMoeDsaForCausalLM; read
// in the 0.5.6.post2 and 0.5.9 wheels).
var sglangFusedSharedArchitectures = map[string]bool{"DeepseekV3ForCausalLM": true, "GlmMoeDsaForCausalLM": true}

// sglangFusedSharedExperts is the rule of determine_num_fused_shared_experts
// for an SGLang server: the config's first architecture is one of
// sglangFusedSharedArchitectures, it has exactly 256 routed experts and one
// shared expert (n_shared_experts 1: SharedIntermediate = Intermediate), and
// the experts are not expert-parallel (moe_ep_size 1, so no DeepEP or Mori
// all-to-all either, which need EP), and the MoE runner is not
// flashinfer_trtllm, which server_args.py sets on SM 100 (is_sm100_supported:
// B200, B300, GB200) for these architectures when the quantization is fp8,
// modelopt_fp8 or modelopt_fp4 and no all-to-all backend is set — a DeepSeek-V3
// checkpoint without quantization_config is given fp8 there too — and which
// sets --disable-shared-experts-fusion. Then DeepseekV2MoE builds FusedMoE with
// n_routed_experts + 1 experts and top_k num_experts_per_tok + 1 and no
// DeepseekV2MLP shared_experts: the shared expert is one more expert of the
// Triton fused-MoE kernel that every token is routed to. The rule's other
// exits (--disable-shared-experts-fusion, --moe-runner-backend
// flashinfer_trtllm, --moe-a2a-backend flashinfer, a w4afp8 checkpoint, a GPU
// below SM 80) are flags and formats the simulator's SGLang engine does not
// take, and no SM < 80 system has SGLang MoE tables.
func sglangFusedSharedExperts(arch *model.Arch, backend string, par model.Parallel, sm int, weights model.Dtype) bool {
	if backend != sglangBackend || arch.MoE == nil || par.EP {
		return false
	}
	if sm >= 100 && sm < 110 && (weights != model.BF16 || arch.Architecture == "DeepseekV3ForCausalLM") {
		return false // flashinfer_trtllm experts
	}
	m := arch.MoE
	return sglangFusedSharedArchitectures[arch.Architecture] && m.Experts == 256 &&
		m.Intermediate > 0 && m.SharedIntermediate == m.Intermediate
}

// fusedSharedGEMMs is the shared expert's two GEMMs on a rank (gate_up
// N = 2·⌈I/TP⌉, K = H; down N = H, K = ⌈I/TP⌉), the shapes of the expert
// slice FusedMoE holds for it (moe_tp = TP).
func fusedSharedGEMMs(arch *model.Arch, tp int) []model.GEMMShape {
	i := (arch.MoE.SharedIntermediate + tp - 1) / tp
	return []model.GEMMShape{{Name: "shared_gate_up", N: 2 * i, K: arch.Hidden}, {Name: "shared_down", N: arch.Hidden, K: i}}
}

// fusedSharedSeconds is the shared expert's share of one MoE layer's fused
// kernel over X tokens, seconds:
//
//	S(X) = max(R(X), G(X) − G(1) + R(1))
//
// G the two GEMMs' measured time on the weights' grid, R their roofline.
// Inside the fused kernel the shared expert pays no kernel of its own: the
// routed experts' table row already holds the launch, the routing alignment
// and the activation quantization. So it costs the work its GEMMs add above
// one token (G(X) − G(1): at prefill sizes their measured compute) plus one
// read of its weights (R(1): in a memory-bound decode it adds one expert's
// weights, as a routed expert does). 0 when the shared expert is not fused.
func (m *Model) fusedSharedSeconds(X float64) float64 {
	if X <= 0 || len(m.hy.fusedShared) == 0 {
		return 0
	}
	var g, g1, r, r1 float64
	for _, s := range m.hy.fusedShared {
		n, k := float64(s.N), float64(s.K)
		g += m.gemmW.Seconds(X, n, k)
		g1 += m.gemmW.Seconds(1, n, k)
		r += m.gemmW.roofline(X, n, k)
		r1 += m.gemmW.roofline(1, n, k)
	}
	return max(r, g-g1+r1)
}

// fusedSharedTopK is the experts a token's top-k selection writes: k, plus
// the fused shared expert (TopK(top_k = num_experts_per_tok +
// num_fused_shared_experts), deepseek_v2.py).
func (hy *hybrid) fusedSharedTopK(k float64) float64 {
	if len(hy.fusedShared) > 0 {
		return k + 1
	}
	return k
}

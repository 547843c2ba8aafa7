package aic

import (
	"math"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// sharedOverlapSince is the first vLLM release that runs a MoE layer's
// shared experts on a second CUDA stream beside the routed experts (vLLM
// pull request 26440, October 2025, "Dual stream execution of shared_experts
// and selected_experts inside FusedMoE"; pull request 28406 limits it to
// passes of perf.SharedExpertsStreamTokens tokens).
var sharedOverlapSince = version{Raw: "0.11.1", Parts: [3]int{0, 11, 1}}

// setupSharedOverlap tabulates, when the model has shared experts and the
// version runs them on their own stream, the shared experts' time of one MoE
// layer by the rank's tokens x ≤ perf.SharedExpertsStreamTokens (ns; the
// GEMMs that hybridTokenCosts prices in every MoE layer's group).
func (m *Model) setupSharedOverlap(arch *model.Arch, tp int, want string) {
	hy := m.hy
	if arch.MoE == nil || arch.MoE.SharedIntermediate == 0 || hy.moe == nil {
		return
	}
	if v, err := parseVersion(want); err != nil || sharedOverlapSince.newer(v) {
		return
	}
	i := float64((arch.MoE.SharedIntermediate + tp - 1) / tp)
	h := float64(arch.Hidden)
	hy.sharedNs = make([]float64, perf.SharedExpertsStreamTokens+1)
	for x := 1; x < len(hy.sharedNs); x++ {
		hy.sharedNs[x] = (m.gemmW.Seconds(float64(x), 2*i, h) + m.gemmW.Seconds(float64(x), h, i)) * 1e9
	}
}

// sharedHiddenNs is the part of a pass's shared-expert time that runs under
// the routed experts, ns: in each MoE layer of a pass of x ≤
// perf.SharedExpertsStreamTokens tokens on the rank, min(shared, routed),
// routed the layer's experts and top-k (expNs over the MoE layers). vLLM
// starts the shared experts on an auxiliary stream and the routed experts on
// the main one and joins them before the sum (SharedFusedMoE), so the layer
// lasts max(shared, routed): the shorter is hidden. 0 when it does not apply.
func (hy *hybrid) sharedHiddenNs(x int, expNs float64) float64 {
	if x <= 0 || x >= len(hy.sharedNs) {
		return 0
	}
	return hy.moeLayers * math.Min(hy.sharedNs[x], expNs/hy.moeLayers)
}

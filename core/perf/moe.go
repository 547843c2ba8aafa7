package perf

import (
	"math"
)

// ExpectedDistinctExperts is the expected number of different experts that
// n tokens reach when each picks k of E experts uniformly at random (k
// distinct per token, tokens independent):
//
//	D(n) = E · (1 − (1 − k/E)^n)
//
// Each expert is in a token's uniformly random k-subset with probability
// k/E, so it is missed by all n tokens with probability (1 − k/E)^n;
// linearity of expectation sums that over the E experts. D(0) = 0, D(1) = k,
// D(n) → E. n may be fractional (a mean token count); n ≤ 0 gives 0. With
// expert parallelism over P ranks holding E/P experts each, a rank expects
// D(n)/P of its own. Source: the occupancy problem (balls into bins, here
// k-subsets into E bins); TestExpectedDistinctExpertsEnumeration checks it
// against a direct enumeration.
func ExpectedDistinctExperts(n float64, experts, topk int) float64 {
	if n <= 0 || experts <= 0 || topk <= 0 {
		return 0
	}
	e, k := float64(experts), float64(topk)
	if k >= e {
		return e
	}
	return e * (1 - math.Pow(1-k/e, n))
}

// MoEAssignments is the expected (token, expert) pairs one GPU computes
// when n tokens enter a MoE layer: n·k / moe_ep (expert parallelism spreads
// the experts, and with uniform routing their work, over moe_ep GPUs; with
// tensor parallelism every GPU computes every pair on its 1/moe_tp slice).
func MoEAssignments(n float64, topk, moeEP int) float64 {
	return n * float64(topk) / float64(moeEP)
}

// DPMoETokens is the number of tokens one MoE layer of a data-parallel
// worker computes, per GPU group: vLLM pads every DP rank's batch to the
// largest (coordinate_batch_across_dp, so CUDA graphs and the all-gather
// see one size) and gathers them all before the experts:
//
//	X = DP × max_r x_r
//
// x_r the tokens of rank r's pass (an idle rank runs a dummy batch).
func DPMoETokens(dp int, maxRankTokens int) float64 {
	return float64(dp) * float64(maxRankTokens)
}

// CUDAGraphMaxTokens is the largest pass vLLM captures a CUDA graph for,
// tokens: min(2 × max_num_seqs, 512, max_num_batched_tokens)
// (VllmConfig._set_cudagraph_sizes, without speculative decoding). 0 when
// either limit is not positive.
func CUDAGraphMaxTokens(maxNumSeqs, maxNumBatchedTokens int) int {
	return CUDAGraphMaxTokensUpTo(maxNumSeqs, maxNumBatchedTokens, DefaultCUDAGraphCeiling)
}

// DefaultCUDAGraphCeiling is the ceiling of vLLM's default largest capture
// size, tokens: 512 (on Blackwell 1,024 from vLLM 0.28.0,
// config.VersionDefaults.MaxCUDAGraphSize).
const DefaultCUDAGraphCeiling = 512

// CUDAGraphMaxTokensUpTo is CUDAGraphMaxTokens under a ceiling other than
// 512: min(2 × max_num_seqs, ceiling, max_num_batched_tokens).
func CUDAGraphMaxTokensUpTo(maxNumSeqs, maxNumBatchedTokens, ceiling int) int {
	if maxNumSeqs <= 0 || maxNumBatchedTokens <= 0 {
		return 0
	}
	return min(2*maxNumSeqs, ceiling, maxNumBatchedTokens)
}

// CUDAGraphTokens is the token count vLLM runs a pass of x tokens at when
// its CUDA graphs go up to top tokens (CUDAGraphMaxTokens): the smallest
// capture size ≥ x among 1, 2, 4, the multiples of 8 below 256 and of 16
// from 256, and top itself (vLLM's default cudagraph_capture_sizes); a pass
// above top runs eagerly at x. The padded rows go through every layer, and
// their rows of stale inputs are routed to experts like tokens (vLLM pull
// requests 38128 and 46428: padding tokens flow through the MoE router and
// are computed as real tokens), so a MoE layer computes this many tokens.
// top ≤ 0 (no CUDA graphs) gives x.
func CUDAGraphTokens(x, top int) int {
	if x <= 0 || top <= 0 || x > top {
		return x
	}
	var p int
	switch {
	case x <= 2:
		p = x
	case x <= 4:
		p = 4
	case x < 256:
		p = (x + 7) / 8 * 8
	default:
		p = (x + 15) / 16 * 16
	}
	return min(p, top)
}

// SharedExpertsStreamTokens is the largest pass, tokens on a rank, whose
// shared experts vLLM runs on an auxiliary CUDA stream beside the routed
// experts (VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD's default, 256; vLLM
// pull request 28406): a MoE layer of such a pass lasts max(shared, routed)
// instead of their sum. Both perf sources price it so.
const SharedExpertsStreamTokens = 256

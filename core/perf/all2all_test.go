package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/model"
)

// TestA2AHandCount: 4 GPUs on 2 nodes of 2, 16 experts (4 per GPU), top 2:
// a token misses a rank's 4 experts with probability C(12, 2) / C(16, 2) =
// 66/120, so it goes to q = 0.45 of the ranks: 0.45 in its node (the other
// GPU), 0.9 in the other node. 10 tokens of hidden 1,000 in bf16 each way
// at 1 GB/s NVLink and 0.1 GB/s network: the network takes 10 · 0.9 · 2,000
// / 1e8 = 180 µs (NVLink 9 µs), dispatch and combine alike, plus the fixed
// 2 + 3 µs. Low latency sends (token, expert) pairs, 2/4 of the ranks each,
// fp8 with a scale per 128 on the way out.
func TestA2AHandCount(t *testing.T) {
	a := &A2A{Backend: All2AllDeepEPHT, P: 4, G: 2, K: 2, E: 16, Hidden: 1000, DispatchBytes: 2, CombineBytes: 2,
		NVLinkBW: 1e9, NetBW: 1e8, DispatchLatencyS: 2e-6, CombineLatencyS: 3e-6}
	assert.InDelta(t, 0.45, a.Destinations(), 1e-15)
	assert.InEpsilon(t, 365e-6, a.Seconds(10), 1e-12)
	ll := *a
	ll.Backend, ll.DispatchBytes = All2AllDeepEPLL, 1+4.0/128
	assert.Equal(t, 0.5, ll.Destinations())
	// out of the node: 10 · 2 · 0.5 pairs; fp8 1.03125 bytes, bf16 2
	assert.InEpsilon(t, 5e-6+10*1.0*1.03125*1000/1e8+10*1.0*2*1000/1e8, ll.Seconds(10), 1e-12)
	assert.Zero(t, a.Seconds(0))
}

// TestA2ANodeDedup: DeepEP's high-throughput kernels across nodes send a
// token once per other node holding one of its experts. The 4 GPUs of
// TestA2AHandCount on 2 nodes of 2: a node holds 8 of the 16 experts, a
// token misses them with probability C(8, 2) / C(16, 2) = 28/120, so it
// crosses the network 92/120 = 0.766667 times (not 2 · 0.45 = 0.9): 10
// tokens · 0.766667 · 2,000 B / 1e8 B/s = 153.3333 µs each way (NVLink
// 0.45 · 10 · 2,000 / 1e9 = 9 µs), plus 2 + 3 µs: 311.6667 µs. bf16
// dispatch against fp8 with a scale per 128 (1.03125 B): the network part
// of the dispatch 153.3333 → 79.0625 µs.
func TestA2ANodeDedup(t *testing.T) {
	a := &A2A{Backend: All2AllDeepEPHT, P: 4, G: 2, K: 2, E: 16, Hidden: 1000, DispatchBytes: 2, CombineBytes: 2,
		NVLinkBW: 1e9, NetBW: 1e8, DispatchLatencyS: 2e-6, CombineLatencyS: 3e-6, NodeDedup: true}
	assert.InDelta(t, 92.0/120, a.NetDestinations(), 1e-15)
	assert.InEpsilon(t, 5e-6+2*10*(92.0/120)*2000/1e8, a.Seconds(10), 1e-12)
	fp8 := *a
	fp8.DispatchBytes = 1 + 4.0/128
	assert.InEpsilon(t, 153.3333333e-6-79.0625e-6, a.Seconds(10)-fp8.Seconds(10), 1e-6)
	one := *a
	one.P = 2 // one node: nothing crosses the network
	assert.Zero(t, one.NetDestinations())
}

// TestA2ATwoH100Nodes: DeepSeek-V3 (256 experts, top 8, hidden 7168) over
// 16 H100 on 2 nodes of 8 with DeepEP high-throughput: a node holds 128
// experts, a token misses them with probability Π_{i<8} (128 − i)/(256 − i)
// = 0.0034899, so it crosses the 50 GB/s NIC 0.99651 times; in its node
// it goes to 7 · 0.407705 ranks over 450 GB/s NVLink (q_r = 1 − Π (240 −
// i)/(256 − i) = 0.407705). 32 tokens of 7,168 bf16: the network 32 ·
// 0.99651 · 14,336 / 50e9 = 9.1430 µs, NVLink 32 · 2.853935 · 14,336 /
// 450e9 = 2.9094 µs; dispatch and combine 2 · 9.1430 µs plus the fixed
// 27.0 + 46.9 µs = 92.186 µs.
func TestA2ATwoH100Nodes(t *testing.T) {
	v3, err := model.Load("deepseek-ai/DeepSeek-V3", sharedConfigs)
	require.NoError(t, err)
	a, err := NewA2A(All2AllDeepEPHT, v3, model.Parallel{TP: 1, DP: 16, EP: true}, builtinSystem(t, "h100_sxm"))
	require.NoError(t, err)
	a.DispatchBytes = 2
	assert.True(t, a.NodeDedup)
	assert.InEpsilon(t, 0.99651006, a.NetDestinations(), 1e-7)
	assert.InEpsilon(t, 0.40770497, a.Destinations(), 1e-7)
	assert.InEpsilon(t, 27.0e-6+46.9e-6+2*9.143019639945788e-06, a.Seconds(32), 1e-9)
}

// TestNewA2A: DeepSeek-V3's fp8 experts dispatch in fp8 (DeepEP
// high-throughput quantizes before it sends), bf16 experts in bf16; the EP
// group of 16 H200 spans 2 nodes of 8 and crosses them at the NICs' 50 GB/s.
func TestNewA2A(t *testing.T) {
	v3, err := model.Load("deepseek-ai/DeepSeek-V3", sharedConfigs)
	require.NoError(t, err)
	h200 := builtinSystem(t, "h200_sxm")
	a, err := NewA2A(All2AllDeepEPHT, v3, model.Parallel{TP: 1, DP: 16, EP: true}, h200)
	require.NoError(t, err)
	assert.Equal(t, 1+4.0/128, a.DispatchBytes)
	assert.Equal(t, 8, a.G)
	assert.Equal(t, 50e9, a.NetBW)
	assert.Equal(t, 450e9, a.NVLinkBW)
	_, err = NewA2A(All2AllAgRs, v3, model.Parallel{TP: 1, DP: 16, EP: true}, h200)
	assert.ErrorContains(t, err, "not point to point")
}

// TestRooflineA2AMaxTokens: TensorRT-LLM's WideEPMoE.can_use_alltoall turns
// the all-to-all off for a pass of more MoE tokens, over the ranks, than
// moe_max_num_tokens (the chunks are all-gathered and reduce-scattered), in
// the roofline as in aic: DeepSeek-V3 over 16 H100 (DP 16, EP) with DeepEP
// and a 16,384-token limit dispatches 16 × 1,024 = 16,384 tokens by DeepEP
// (as without the limit) and 16 × 1,025 = 16,400 by the all-gather and
// reduce-scatter (as with no all2all backend).
func TestRooflineA2AMaxTokens(t *testing.T) {
	v3, err := model.Load("deepseek-ai/DeepSeek-V3", sharedConfigs)
	require.NoError(t, err)
	sys := builtinSystem(t, "h100_sxm")
	build := func(o RooflineOptions) *Roofline {
		r, err := NewRoofline(v3, sys, o)
		require.NoError(t, err)
		return r
	}
	opt := RooflineOptions{TP: 1, DP: 16, EP: true, Params: specDefaults(), All2AllBackend: All2AllDeepEPHT, All2AllBF16Dispatch: true}
	unlimited := build(opt)
	opt.All2AllMaxTokens = 16384
	limited := build(opt)
	opt.All2AllBackend, opt.All2AllBF16Dispatch, opt.All2AllMaxTokens = "", false, 0
	gather := build(opt)
	pass := func(n int) *Batch { return &Batch{Prefill: []Chunk{{NewTokens: n}}, Samplers: 1} }
	assert.Equal(t, unlimited.Breakdown(pass(1024)).DispatchNs, limited.Breakdown(pass(1024)).DispatchNs)
	assert.Equal(t, gather.Breakdown(pass(1025)).DispatchNs, limited.Breakdown(pass(1025)).DispatchNs)
	assert.NotEqual(t, unlimited.Breakdown(pass(1025)).DispatchNs, limited.Breakdown(pass(1025)).DispatchNs)
}

package aic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// TestDispatch16GPUs: DeepSeek-V3 on 16 H200 (TP 1 × DP 16, expert
// parallel, vLLM's default all-gather and reduce-scatter) spans two nodes of
// 8, which the NCCL table does not measure: each MoE layer's all-gather and
// reduce-scatter over the 16 ranks is priced by NCCL 2.27.3's cost model
// (perf.NCCLNet). At 16 ranks of 4 tokens (X = 64) each moves 64 · 7168 ·
// 2 = 917,504 B; the ring with LL is the fastest: 6.6 + 14·1.0 + 2.7 =
// 23.3 µs plus 917,504 B at 39 GB/s · 16/15 = 41.6 GB/s (22.055385 µs),
// 45.355385 µs (LL128: 44.6 + 2.93 µs; Simple: 70 + 2.15 µs). 58 MoE layers
// × 2 × 45.355385 µs = 5,261.2246 µs.
func TestDispatch16GPUs(t *testing.T) {
	m, err := New(sharedModel(t, "deepseek-ai/DeepSeek-V3"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 1, DP: 16, EP: true})
	require.NoError(t, err)
	_, disp := m.moeTokenCosts(64)
	assert.InEpsilon(t, 5261.2246e3, disp, 1e-8)
	assert.Equal(t, 116, m.Fallbacks()[OpNCCL])
	for _, s := range m.Sources() {
		assert.NotEqual(t, TableNCCL, s.Table, "no NCCL table is read across nodes")
	}
}

// TestDeepEPLowLatencyTable: 8 H200 of one node (TP 1 × DP 8, expert
// parallel) with --all2all-backend deepep_low_latency read DeepEP's
// low-latency table for DeepSeek-V3's hidden 7168, 256 experts, top 8: a
// layer's dispatch and combine at 64 tokens a rank is that row's 22.994 +
// 38.757 µs; over 16 GPUs (two nodes) its bandwidth model (a fallback).
func TestDeepEPLowLatencyTable(t *testing.T) {
	a := sharedModel(t, "deepseek-ai/DeepSeek-V3")
	sys := builtinSystem(t, "h200_sxm")
	opt := Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 1, DP: 8, EP: true,
		All2AllBackend: perf.All2AllDeepEPLL}
	m, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.InEpsilon(t, (22.994+38.757)*1e-6, m.hy.a2a.Seconds(64), 1e-9)
	assert.Contains(t, m.Metadata()["all2all"].(map[string]any)["source"], "measured: wideep_deepep_ll_perf")
	assert.Zero(t, m.Fallbacks()[OpAll2All])
	// the DeepEP tables are not of the engine's version: none is requested
	// (a backend_version warning named "999.0.0", a version nobody gave)
	var deepEP *Source
	for _, s := range m.Sources() {
		if strings.HasPrefix(s.Table, TableDeepEPLL) {
			deepEP = &s
		}
	}
	require.NotNil(t, deepEP)
	assert.Equal(t, "", deepEP.Requested)
	assert.Contains(t, deepEP.Note, "not tied to the serving engine's version")
	// 16 GPUs on two nodes: the newest table (0.5.12) measures one node,
	// 0.5.6.post2 two: its row at 64 tokens, 58.07 + 102.17 µs
	opt.DP = 16
	m16, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.InEpsilon(t, (58.07+102.17)*1e-6, m16.hy.a2a.Seconds(64), 1e-9)
	assert.Contains(t, m16.Metadata()["all2all"].(map[string]any)["source"], "0.5.6.post2")
	assert.Zero(t, m16.Fallbacks()[OpAll2All])
	// 24 GPUs fill no whole nodes: the bandwidth model
	opt.DP = 24
	m24, err := New(a, sys, opt)
	require.NoError(t, err)
	want, err := perf.NewA2A(perf.All2AllDeepEPLL, a, model.Parallel{TP: 1, DP: 24, EP: true}, sys)
	require.NoError(t, err)
	assert.Equal(t, want.Seconds(64), m24.hy.a2a.Seconds(64))
	assert.Equal(t, 58, m24.Fallbacks()[OpAll2All])
}

// TestIssue28_DeepEPTwoH100Nodes: TensorRT-LLM's WideEPMoE over DeepEP
// (TRTLLM_FORCE_ALLTOALL_METHOD=DeepEP) on a 16-GPU attention-DP worker of
// two H100 nodes. h100_sxm's 0.5.6.post2 high-throughput table measured
// two nodes (node_num 2) at DeepSeek-V3's hidden 7168, 256 experts, top 8:
// at 32 tokens a rank and 20 SMs dispatch 36.83 + notify 30.57 µs, combine
// 77.00 + 30.97 µs, 175.37 µs a layer. The table dispatched fp8 (a scale
// per 128: 1.03125 B an element), TensorRT-LLM dispatches bf16: the
// bandwidth model's extra bytes over the NIC, 32 · 0.99651 · 7,168 · (2 −
// 1.03125) / 50e9 = 4.42865 µs (TestA2ATwoH100Nodes), 179.79865 µs, ×58
// MoE layers = 10.42832 ms. Passes beyond moe_max_num_tokens (16,384 MoE
// tokens) all-gather and reduce-scatter instead (WideEPMoE.can_use_alltoall).
func TestIssue28_DeepEPTwoH100Nodes(t *testing.T) {
	a := sharedModel(t, "deepseek-ai/DeepSeek-V3")
	sys := builtinSystem(t, "h100_sxm")
	opt := Options{MaxTokens: 8224, Backend: "trtllm", Database: sharedDB(t), Version: "1.2.0rc6.post3", TP: 1, DP: 16, EP: true,
		All2AllBackend: perf.All2AllDeepEPHT}
	m, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.InEpsilon(t, 175.37e-6, m.hy.a2a.Seconds(32), 1e-9, "the table's transmit plus notify")
	assert.Contains(t, m.Metadata()["all2all"].(map[string]any)["source"], "wideep_deepep_normal_perf 0.5.6.post2")
	assert.Zero(t, m.Fallbacks()[OpAll2All])

	opt.All2AllBF16Dispatch, opt.All2AllMaxTokens = true, 16384
	w, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.InEpsilon(t, 179.79865e-6, w.hy.a2a.Seconds(32), 1e-7)
	_, disp := w.moeTokenCosts(16 * 32)
	assert.InEpsilon(t, 10.42832e6, disp, 1e-6)

	gather := opt
	gather.All2AllBackend, gather.All2AllBF16Dispatch, gather.All2AllMaxTokens = "", false, 0
	g, err := New(a, sys, gather)
	require.NoError(t, err)
	_, above := w.moeTokenCosts(16385)
	_, want := g.moeTokenCosts(16385)
	assert.Equal(t, want, above, "beyond moe_max_num_tokens: the all-gather and reduce-scatter")
	_, at := w.moeTokenCosts(16384)
	assert.InEpsilon(t, 58*w.hy.a2a.Seconds(1024)*1e9, at, 1e-12)
}

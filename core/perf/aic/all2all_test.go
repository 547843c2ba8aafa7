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
	opt.DP = 16
	m16, err := New(a, sys, opt)
	require.NoError(t, err)
	want, err := perf.NewA2A(perf.All2AllDeepEPLL, a, model.Parallel{TP: 1, DP: 16, EP: true}, sys)
	require.NoError(t, err)
	assert.Equal(t, want.Seconds(64), m16.hy.a2a.Seconds(64))
	assert.Equal(t, 58, m16.Fallbacks()[OpAll2All])
}

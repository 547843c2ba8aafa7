package aic

import (
	"path/filepath"
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
// reduce-scatter of X·h bf16 elements over the 16 ranks is a ring at the
// NICs' 50 GB/s per GPU, (16 − 1)/16 · 2 bytes an element, with the latency
// of the 8-GPU row it reads (the table's smallest message over 8 GPUs,
// NCCL 2.26.2, h200_sxm's). At 16 ranks of 4 tokens (X = 64): 58 MoE layers
// × (L_gather + L_scatter + 2 · 15/16 · 2 · 64 · 7168 / 50e9).
func TestDispatch16GPUs(t *testing.T) {
	m, err := New(sharedModel(t, "deepseek-ai/DeepSeek-V3"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 1, DP: 16, EP: true})
	require.NoError(t, err)
	rows, err := loadNCCL(filepath.Join(sharedDB(t), "data", "h200_sxm", "comm", "nccl", "2.26.2", "nccl_perf.parquet"))
	require.NoError(t, err)
	lat := map[string]float64{}
	small := map[string]int64{}
	for _, r := range rows {
		if r.NumGPUs == 8 && (small[r.Op] == 0 || r.MessageSize < small[r.Op]) {
			small[r.Op], lat[r.Op] = r.MessageSize, r.Latency*1e-3
		}
	}
	require.Positive(t, lat["all_gather"])
	X := 64.0
	ring := 15.0 / 16 * 2 * X * 7168 / 50e9
	_, disp := m.moeTokenCosts(X)
	assert.InEpsilon(t, 58*(lat["all_gather"]+lat["reduce_scatter"]+2*ring)*1e9, disp, 1e-9)
	assert.Equal(t, 116, m.Fallbacks()[OpNCCL])
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

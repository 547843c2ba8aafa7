package aic

import (
	"strings"
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLowPrecisionRatio_HandWorked: two sites, each with m = 4096 and 8192
// measured in both grids; m* = 8192.
//
//	site (1024, 1024): fp8 0.5 ms / bf16 1.0 ms = 0.5
//	site (2048, 2048): fp8 3.0 ms / bf16 2.0 ms = 1.5
//	site (512, 4096) is skipped (n < 1024)
//
// median of {0.5, 1.5} = 1.0.
func TestLowPrecisionRatio_HandWorked(t *testing.T) {
	row := func(d string, m, n, k int64, ms float64) gemmRow {
		return gemmRow{Dtype: d, M: m, N: n, K: k, Latency: ms}
	}
	rows := []gemmRow{
		row("bfloat16", 4096, 1024, 1024, 0.6), row("bfloat16", 8192, 1024, 1024, 1.0),
		row("fp8", 4096, 1024, 1024, 0.3), row("fp8", 8192, 1024, 1024, 0.5),
		row("bfloat16", 4096, 2048, 2048, 1.1), row("bfloat16", 8192, 2048, 2048, 2.0),
		row("fp8", 4096, 2048, 2048, 1.6), row("fp8", 8192, 2048, 2048, 3.0),
		row("bfloat16", 8192, 512, 4096, 1.0), row("fp8", 8192, 512, 4096, 9.0),
	}
	bf, err := newGEMMGrid(rows, "bfloat16", 1e15, 1e12, 2)
	require.NoError(t, err)
	f8, err := newGEMMGrid(rows, "fp8", 2e15, 1e12, 1)
	require.NoError(t, err)
	r, ok := lowPrecisionRatio(f8, bf)
	require.True(t, ok)
	assert.InDelta(t, 1.0, r, 1e-12)

	// no site with m ≥ 4096 in both grids: no verdict
	small := []gemmRow{row("bfloat16", 128, 1024, 1024, 0.1), row("fp8", 128, 1024, 1024, 0.2)}
	bf, _ = newGEMMGrid(small, "bfloat16", 1e15, 1e12, 2)
	f8, _ = newGEMMGrid(small, "fp8", 2e15, 1e12, 1)
	_, ok = lowPrecisionRatio(f8, bf)
	assert.False(t, ok)
}

// TestFP8GEMMTableImplausible: vLLM 0.14.0's fp8 GEMMs on h200_sxm
// take 0.98× the bf16 time at m = 8192 (n = 6144, k = 4096: 0.5526 ms vs
// 0.5639 ms), so a request for 0.12.0 (nearest 0.14.0) reads the fp8 rows
// from 0.18.0 (0.2834 ms there) and keeps 0.14.0 for bf16 (logits).
// Llama-3.1-8B fp8 on one H200 then decodes one sequence in 3.56 ms instead
// of 4.67 ms, and the QKV GEMM at m = 8192 is 0.2834 ms, the 0.18.0 row.
func TestFP8GEMMTableImplausible(t *testing.T) {
	db := sharedDB(t)
	arch := sharedModel(t, "meta-llama/Meta-Llama-3.1-8B")
	sys := builtinSystem(t, "h200_sxm")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.12.0", TP: 1, WeightDtype: model.FP8, KVDtype: model.FP8})
	require.NoError(t, err)
	var fp8Src *Source
	for _, s := range m.Sources() {
		if s.Table == TableGEMM+" (fp8)" {
			s := s
			fp8Src = &s
		}
		if s.Table == TableGEMM {
			assert.Equal(t, "0.14.0", s.ReadFrom, "bf16 GEMMs stay on the nearest version")
		}
	}
	require.NotNil(t, fp8Src, "sources: %+v", m.Sources())
	assert.Equal(t, "0.18.0", fp8Src.ReadFrom)
	assert.Contains(t, fp8Src.Note, "0.14.0 skipped")
	assert.InDelta(t, 0.2834, m.gemmW.Seconds(8192, 6144, 4096)*1e3, 0.00005)
	assert.InDelta(t, 0.5639, m.gemmBF16.Seconds(8192, 6144, 4096)*1e3, 0.00005)

	// the 0.24.0 fp8 rows are plausible (ratio 0.69): no substitution
	m24, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.24.0", TP: 1, WeightDtype: model.FP8})
	require.NoError(t, err)
	for _, s := range m24.Sources() {
		assert.NotEqual(t, TableGEMM+" (fp8)", s.Table)
	}
}

// TestNVFP4GEMMsOnBlackwell: NVFP4 weights read the nvfp4 rows of the b200
// table (0.19.0: n 6144, k 4096, m 8192 takes 0.099644 ms, against 0.239662 ms
// in bf16: ratio 0.42, plausible, so no other version stands in), priced
// against the fp4 peak (9e15 FLOP/s) and 0.5625 bytes per element.
func TestNVFP4GEMMsOnBlackwell(t *testing.T) {
	db := sharedDB(t)
	arch := sharedModel(t, "meta-llama/Meta-Llama-3.1-70B")
	sys := builtinSystem(t, "b200_sxm")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.19.0", TP: 4, WeightDtype: model.NVFP4, KVDtype: model.FP8})
	require.NoError(t, err)
	assert.Equal(t, "nvfp4", m.gemmW.dtype)
	assert.Equal(t, 9e15, m.gemmW.flops)
	assert.Equal(t, 0.5625, m.gemmW.elemBytes)
	assert.InDelta(t, 0.099644, m.gemmW.Seconds(8192, 6144, 4096)*1e3, 1e-6)
	assert.InDelta(t, 0.239662, m.gemmBF16.Seconds(8192, 6144, 4096)*1e3, 1e-6)
	for _, s := range m.Sources() {
		assert.NotEqual(t, TableGEMM+" (nvfp4)", s.Table)
	}
	assert.Empty(t, m.Notes())
	// on h100_sxm (no nvfp4 rows, no fp4 tensor cores) the bf16 GEMMs stand in, noted
	h, err := New(arch, builtinSystem(t, "h100_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.24.0", TP: 4, WeightDtype: model.NVFP4})
	require.NoError(t, err)
	assert.Equal(t, "bfloat16", h.gemmW.dtype)
	assert.Contains(t, h.Notes()[0], "has no nvfp4 GEMMs; bfloat16 used")
}

// TestFP8BlockStandInOnBlackwell: b200_sxm's fp8_block GEMMs time the host in
// every vLLM version with rows (0.22.0 and 0.24.0 at 11.6–15.5× bf16 at one
// token, 0.19.0's not faster than bf16 on compute-bound shapes), so they are
// priced as the nearest table's per-tensor fp8 GEMMs: at n 6144, k 4096 the
// 0.24.0 fp8 rows give 0.010220 ms at m = 8 (the m = 12 row: the grid pads m
// to a larger measured one when that is faster; the m = 8 row is 0.010718,
// its fp8_block row 0.180064, the host's) and 0.205052 ms at m = 8192, where
// the kernel is the whole time and the fp8_block row agrees (0.205856). On h200_sxm a version times them
// plausibly (0.19.0), and no stand-in is used.
func TestFP8BlockStandInOnBlackwell(t *testing.T) {
	db := sharedDB(t)
	arch := sharedModel(t, "meta-llama/Meta-Llama-3.1-8B")
	m, err := New(arch, builtinSystem(t, "b200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: db,
		Version: "0.24.0", TP: 1, WeightDtype: model.FP8Block, KVDtype: model.FP8})
	require.NoError(t, err)
	assert.Equal(t, "fp8", m.gemmW.dtype)
	assert.InDelta(t, 0.010220, m.gemmW.Seconds(8, 6144, 4096)*1e3, 1e-6)
	assert.InDelta(t, 0.205052, m.gemmW.Seconds(8192, 6144, 4096)*1e3, 1e-6)
	assert.Equal(t, int(m.layers), m.Fallbacks()[OpGEMM])
	var noted bool
	for _, n := range m.Notes() {
		noted = noted || strings.Contains(n, "priced as") && strings.Contains(n, "per-tensor fp8 GEMMs")
	}
	assert.True(t, noted, "notes: %q", m.Notes())

	h, err := New(arch, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: db,
		Version: "0.24.0", TP: 1, WeightDtype: model.FP8Block, KVDtype: model.FP8})
	require.NoError(t, err)
	assert.Equal(t, "fp8_block", h.gemmW.dtype)
}

// TestIssue28_FP8BlockGB200StandInFromAnyVersion: MiniMax-M2.5's fp8_block
// projections on gb200 under vLLM. No gb200 vLLM version times plausible
// fp8_block GEMMs (0.14.0: 2.97× bf16 on compute-bound shapes, ~0.3 ms at
// any m for n = 2048, k = 3072; 0.19.0: 1.09×; 0.24.0 (0.22.0 reuses it):
// 22× bf16 at one token), and 0.14.0's and 0.19.0's per-tensor fp8 rows are
// implausible too (2.20×, 1.20×): both versions price 0.24.0's per-tensor
// fp8 GEMMs, the nearest plausible fp8 (ratio 0.61), where before 0.14.0
// kept its own rows (a decode of 4 at TP 4: 36 ms of GEMMs, against 1.9 ms
// at 0.19.0). The QKV GEMM at m = 8 (n = 2048, k = 3072) is then 0.24.0's
// fp8 row, 0.0072756 ms, at both versions.
func TestIssue28_FP8BlockGB200StandInFromAnyVersion(t *testing.T) {
	db := sharedDB(t)
	arch := sharedModel(t, "MiniMaxAI/MiniMax-M2.5")
	sys := builtinSystem(t, "gb200")
	for _, v := range []string{"0.14.0", "0.19.0"} {
		m, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: v, TP: 4,
			WeightDtype: arch.WeightDtype, KVDtype: model.FP8})
		require.NoError(t, err)
		var standIn *Source
		for _, s := range m.Sources() {
			if s.Table == TableGEMM+" (fp8, stand-in for fp8_block)" {
				s := s
				standIn = &s
			}
		}
		require.NotNil(t, standIn, "%s sources: %+v", v, m.Sources())
		assert.Equal(t, "0.24.0", standIn.ReadFrom, v)
		assert.Equal(t, int(m.layers), m.Fallbacks()[OpGEMM], v)
		assert.InDelta(t, 0.0072756, m.gemmW.Seconds(8, 2048, 3072)*1e3, 0.0000001, v)
	}
}

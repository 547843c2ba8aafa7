package aic

import (
	"path/filepath"
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gemmTableRow reads one row of a gemm_perf table, ms.
func gemmTableRow(t *testing.T, path, dtype string, m, n, k int64) float64 {
	t.Helper()
	rows, err := loadGEMM(path)
	require.NoError(t, err)
	for _, r := range rows {
		if r.Dtype == dtype && r.M == m && r.N == n && r.K == k {
			return r.Latency
		}
	}
	t.Fatalf("no %s row m=%d n=%d k=%d in %s", dtype, m, n, k, path)
	return 0
}

// TestDeepGEMMPaddedRows: M_sum = roundup(X·k + E_local·127, 128), by hand for
// Qwen3-235B (top 8 of 128): 1 token 8 + 16,256 = 16,264 → 16,384; 16 tokens
// 128 + 16,256 = 16,384 exactly; 17 tokens 16,392 → 16,512; with EP 2 (64 local
// experts) 16 tokens 128 + 8,128 = 8,256 → 8,320.
func TestDeepGEMMPaddedRows(t *testing.T) {
	tp2 := newDeepGEMMExperts(sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8"), model.Parallel{TP: 2, DP: 1})
	assert.Equal(t, 16384.0, tp2.Rows(1))
	assert.Equal(t, 16384.0, tp2.Rows(16))
	assert.Equal(t, 16512.0, tp2.Rows(17))
	assert.Equal(t, 768.0, tp2.ig)
	ep2 := newDeepGEMMExperts(sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8"), model.Parallel{TP: 2, DP: 1, EP: true})
	assert.Equal(t, 8320.0, ep2.Rows(16))
	assert.Equal(t, 1536.0, ep2.ig)
}

// TestDeepGEMMPassOnTableRows: vLLM 0.12.0, TP 2, one decode: M_sum = 16,384
// rows, a measured point of the block-fp8 GEMM grid (h200_sxm vLLM 0.19.0,
// the grid the model's linears read), so each MoE layer's experts cost
// the gate-up row (16384 × 1536 × 4096) less its input's quantization
// (16384·4096·3 = 201,326,592 B at 0.8 × 4.8 TB/s + 3 µs) + the down row
// (16384 × 4096 × 768) less its (16384·768·3 = 37,748,736 B + 3 µs)
// + the memory-bound kernels, by hand: 3·4096 (input quantized) + 4096 + 8·4096
// (scatter) + 16384·(2·768·2 + 768·2) (activation) + 16384·(768·2 + 768) (its
// quantization) + 8·4096·2 + 4096·2 (gather) = 113,369,088 B at 0.8 × 4.8 TB/s,
// plus 7 × h200_sxm's 3 µs; the nine experts' weights (eight touched, expert 0)
// read in 15 µs do not bind. Sixteen decodes compute the same rows.
func TestDeepGEMMPassOnTableRows(t *testing.T) {
	m := qwenMoE(t, model.Parallel{TP: 2, DP: 1})
	require.NotNil(t, m.hy.dg)
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "gemm", "vllm", "0.19.0", "gemm_perf.parquet")
	gateUp := gemmTableRow(t, path, "fp8_block", 16384, 1536, 4096)*1e-3 - (201326592/(0.8*4800e9) + 3e-6)
	down := gemmTableRow(t, path, "fp8_block", 16384, 4096, 768)*1e-3 - (37748736/(0.8*4800e9) + 3e-6)
	mem := 113369088/(0.8*4800e9) + 7*3e-6
	assert.InDelta(t, gateUp+down+mem, m.deepGEMMSeconds(1), 1e-12)
	want := 94 * (gateUp + down + mem + m.topKSeconds(1)) * 1e9
	assert.InDelta(t, want, m.Breakdown(decodesP([]int{100})).ExpertsNs, 1e-3)
	// flat in the batch: sixteen decodes differ only by their own tokens' bytes
	gemm16 := m.deepGEMMSeconds(16) - m.deepGEMMSeconds(1)
	assert.InDelta(t, 15*(3*4096+4096+8*4096+8*4096*2+4096*2)/(0.8*4800e9), gemm16, 1e-12)
	assert.Contains(t, m.Notes()[len(m.Notes())-1], "DeepGEMM path")
}

// TestDeepGEMMPaddedWhere: the path is vLLM 0.11.1–0.12.x's on Hopper with
// block-fp8 experts below moe_tp 8, without --moe-backend or a DeepEP all2all.
func TestDeepGEMMPaddedWhere(t *testing.T) {
	fp8 := model.FP8Block
	par := model.Parallel{TP: 2, DP: 1}
	opt := Options{Backend: "vllm", Version: "0.12.0"}
	sm := func(name string) int { // the system's gpu.sm_version
		s, ok := hardware.Builtin(name)
		require.True(t, ok, name)
		return s.SMVersion
	}
	assert.True(t, deepGEMMPadded(opt, sm("h200_sxm"), fp8, fp8, par))
	assert.True(t, deepGEMMPadded(opt, sm("h100_sxm"), fp8, fp8, par))
	for _, v := range []string{"0.11.1", "0.11.2", "0.12.9"} {
		assert.True(t, deepGEMMPadded(Options{Backend: "vllm", Version: v}, sm("h200_sxm"), fp8, fp8, par), v)
	}
	for _, v := range []string{"0.11.0", "0.13.0", "0.14.0", ""} {
		assert.False(t, deepGEMMPadded(Options{Backend: "vllm", Version: v}, sm("h200_sxm"), fp8, fp8, par), v)
	}
	assert.False(t, deepGEMMPadded(opt, sm("b200_sxm"), fp8, fp8, par))
	assert.False(t, deepGEMMPadded(opt, sm("h200_sxm"), model.FP8, model.FP8, par))
	assert.False(t, deepGEMMPadded(opt, sm("h200_sxm"), model.BF16, fp8, par))
	assert.False(t, deepGEMMPadded(Options{Backend: "sglang", Version: "0.12.0"}, sm("h200_sxm"), fp8, fp8, par))
	assert.False(t, deepGEMMPadded(opt, sm("h200_sxm"), fp8, fp8, model.Parallel{TP: 8, DP: 1}))
	// the boundary: moe tp_size is TP × DP without EP (config.py,
	// flatten_tp_across_dp_and_pcp), so TP 4 DP 2 is 8 and keeps Triton while
	// TP 2 DP 2 and TP 4 (a 384-wide down projection, N ≤ 512 in
	// _valid_deep_gemm, bypassed by E8M0) take DeepGEMM
	assert.False(t, deepGEMMPadded(opt, sm("h200_sxm"), fp8, fp8, model.Parallel{TP: 4, DP: 2}))
	assert.True(t, deepGEMMPadded(opt, sm("h200_sxm"), fp8, fp8, model.Parallel{TP: 2, DP: 2}))
	assert.True(t, deepGEMMPadded(opt, sm("h200_sxm"), fp8, fp8, model.Parallel{TP: 4, DP: 1}))
	assert.False(t, deepGEMMPadded(Options{Backend: "vllm", Version: "0.12.0", MoEBackend: "triton"}, sm("h200_sxm"), fp8, fp8, par))
	assert.False(t, deepGEMMPadded(Options{Backend: "vllm", Version: "0.12.0", All2AllBackend: "deepep_high_throughput"},
		sm("h200_sxm"), fp8, fp8, model.Parallel{TP: 1, DP: 2, EP: true}))
	assert.True(t, deepGEMMPadded(opt, sm("h200_sxm"), fp8, fp8, model.Parallel{TP: 1, DP: 2, EP: true}))
	// the Triton curve otherwise
	assert.Nil(t, qwenMoEAt(t, par, "0.14.0").hy.dg)
}

// TestDeepGEMMGroupQuant: the activation quantization each block-fp8 grid row
// includes, by hand on h200_sxm (0.8 × 4.8 TB/s, c = 3 µs): TP 4's gate-up
// input at decode, 16,384 × 4,096 bf16 → fp8, 201,326,592 B → 52.43 µs + 3 µs;
// its down input, 16,384 × 384, 18,874,368 B → 4.915 µs + 3 µs. TP 4's grouped
// gate-up (16384 × 768 × 4096) is its grid row less the former.
func TestDeepGEMMGroupQuant(t *testing.T) {
	m := qwenMoE(t, model.Parallel{TP: 4, DP: 1})
	require.NotNil(t, m.hy.dg)
	assert.InDelta(t, 55.428e-6, m.groupQuantSeconds(16384, 4096), 1e-9)
	assert.InDelta(t, 7.915e-6, m.groupQuantSeconds(16384, 384), 1e-9)
	assert.Equal(t, 384.0, m.hy.dg.ig)
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "gemm", "vllm", "0.19.0", "gemm_perf.parquet")
	gateUp := gemmTableRow(t, path, "fp8_block", 16384, 768, 4096)*1e-3 - 55.428e-6
	assert.InDelta(t, gateUp, m.gemmW.Seconds(16384, 768, 4096)-m.groupQuantSeconds(16384, 4096), 1e-9)
}

package aic

import (
	"path/filepath"
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlashInferCutlassWhere: vLLM 0.16's select_fp8_moe_backend
// (fused_moe/oracle/fp8.py) ranks FLASHINFER_CUTLASS before DEEPGEMM and
// TRITON, and FlashInferExperts (fused_moe/flashinfer_cutlass_moe.py) takes
// the block-fp8 scheme on device capability 9.0 only, in the standard
// activation format; --moe-backend and other releases keep the tables' path.
func TestFlashInferCutlassWhere(t *testing.T) {
	sm := func(name string) int {
		s, ok := hardware.Builtin(name)
		require.True(t, ok, name)
		return s.SMVersion
	}
	fp8 := model.FP8Block
	par := model.Parallel{TP: 4, DP: 1}
	opt := Options{Backend: "vllm", Version: "0.16.0"}
	assert.True(t, flashInferCutlassFP8(opt, sm("h200_sxm"), fp8, par))
	assert.True(t, flashInferCutlassFP8(opt, sm("h100_sxm"), fp8, par))
	assert.True(t, flashInferCutlassFP8(Options{Backend: "vllm", Version: "0.16.1"}, sm("h200_sxm"), fp8, par))
	assert.True(t, flashInferCutlassFP8(opt, sm("h200_sxm"), fp8, model.Parallel{TP: 8, DP: 1, EP: true}))
	for _, v := range []string{"0.12.0", "0.15.1", "0.17.0", "0.18.0"} {
		assert.False(t, flashInferCutlassFP8(Options{Backend: "vllm", Version: v}, sm("h200_sxm"), fp8, par), v)
	}
	assert.False(t, flashInferCutlassFP8(opt, sm("b200_sxm"), fp8, par))
	assert.False(t, flashInferCutlassFP8(opt, sm("h200_sxm"), model.FP8, par))
	assert.False(t, flashInferCutlassFP8(opt, sm("h200_sxm"), model.BF16, par))
	assert.False(t, flashInferCutlassFP8(Options{Backend: "sglang", Version: "0.16.0"}, sm("h200_sxm"), fp8, par))
	assert.False(t, flashInferCutlassFP8(Options{Backend: "vllm", Version: "0.16.0", MoEBackend: "triton"}, sm("h200_sxm"), fp8, par))
	assert.False(t, flashInferCutlassFP8(Options{Backend: "vllm", Version: "0.16.0", All2AllBackend: "deepep_low_latency"},
		sm("h200_sxm"), fp8, model.Parallel{TP: 1, DP: 4, EP: true}))
}

// TestFlashInferCutlassOnATableRow: MiniMax-M2.5 (62 MoE layers, hidden
// 3072, 256 experts of 1536, top 8) at vLLM 0.16.0 TP 4 on h200_sxm: a
// one-token decode's experts are the TRT-LLM 1.3.0rc20 table's
// moe_torch_flow_cutlass row at one token (fp8_block, moe_tp 4, moe_ep 1:
// 0.101381 ms, against 0.0353 ms for vLLM 0.18.0's Triton row) plus the top-k
// selection: 2·256 logit bytes + 8·8 id and weight bytes = 576 B at 0.8 ×
// 4.8 TB/s plus h200_sxm's 3 µs. vLLM 0.18.0 keeps the vLLM table.
func TestFlashInferCutlassOnATableRow(t *testing.T) {
	arch, sys := sharedModel(t, "MiniMaxAI/MiniMax-M2.5"), builtinSystem(t, "h200_sxm")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.16.0", TP: 4})
	require.NoError(t, err)
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "moe", "trtllm", "1.3.0rc20", "moe_perf.parquet")
	row1 := moeTableRow(t, path, "fp8_block", 1, 3072, 1536, 8, 256, 4, 1)
	assert.InDelta(t, 0.101381, row1, 1e-6)
	topK := 576/(0.8*4800e9) + 3e-6
	assert.InDelta(t, topK, m.topKSeconds(1), 1e-18)
	assert.InDelta(t, 62*(row1*1e-3+topK)*1e9, m.Breakdown(decodesP([]int{100})).ExpertsNs, 1e-3)
	var found bool
	for _, s := range m.Sources() {
		if s.Table == "moe_perf (fp8_block, FlashInfer CUTLASS: trtllm moe_torch_flow_cutlass)" {
			found = true
			assert.Equal(t, "1.3.0rc20", s.ReadFrom)
		}
	}
	assert.True(t, found)
	assert.Empty(t, m.Fallbacks())

	later, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.18.0", TP: 4})
	require.NoError(t, err)
	vrow := moeTableRow(t, filepath.Join(sharedDB(t), "data", "h200_sxm", "moe", "vllm", "0.18.0", "moe_perf.parquet"),
		"fp8_block", 1, 3072, 1536, 8, 256, 4, 1)
	assert.InDelta(t, 62*(vrow*1e-3+topK)*1e9, later.Breakdown(decodesP([]int{100})).ExpertsNs, 1e-3)
}

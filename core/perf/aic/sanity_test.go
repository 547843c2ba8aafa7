package aic

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tableGrids are the bf16 GEMM grid, the generation-attention grid of 32 /
// 8 heads, d 128, bf16 KV, and the 2-GPU all-reduce curve of one system,
// backend and table version.
func tableGrids(t *testing.T, system, backend, version string) (*gemmGrid, *attnGrid, *allReduceCurve) {
	db := sharedDB(t)
	sys := builtinSystem(t, system)
	sysDir, err := systemDir(db, system)
	require.NoError(t, err)
	path := func(table string) string {
		src, err := locate(sysDir, system, backend, version, table)
		require.NoError(t, err)
		return src.Path
	}
	rows, err := loadGEMM(path(TableGEMM))
	require.NoError(t, err)
	g, err := newGEMMGrid(rows, "bfloat16", sys.BF16Flops, sys.MemBW, 2)
	require.NoError(t, err)
	arows, err := loadAttention(path(TableGenerationAttention))
	require.NoError(t, err)
	gen, err := newAttnGrid(arows, attnSelect{kind: generationKind, heads: 32, kvHeads: 8, headDim: 128,
		kvDtype: "bfloat16", kvBytes: 2, flops: sys.BF16Flops, memBW: sys.MemBW})
	require.NoError(t, err)
	rrows, err := loadAllReduce(path(TableAllReduce))
	require.NoError(t, err)
	ar, err := newAllReduceCurve(rrows, 2, sys.IntraNodeBW)
	require.NoError(t, err)
	return g, gen, ar
}

// TestSanityValues checks the lookups against the values read off the
// h200_sxm vLLM 0.24.0 tables in docs/design.md ("Sanity values"); each
// query sits exactly on a measured row, so the lookup returns the row.
func TestSanityValues(t *testing.T) {
	g, gen, ar := tableGrids(t, "h200_sxm", "vllm", "0.24.0")
	for _, c := range []struct{ m, ms float64 }{{128, 0.0180}, {1024, 0.0648}, {8192, 0.507}} {
		// bf16 GEMM n = 6144, k = 4096 (docs/design.md, 3 significant digits)
		assert.InDelta(t, c.ms, g.Seconds(c.m, 6144, 4096)*1e3, 0.0006, "m = %v", c.m)
	}
	// 32 heads / 8 KV heads / d 128, batch 32, KV length 1024 (isl 1 + step 1023): 0.0468 ms
	assert.InDelta(t, 0.0468, gen.Seconds(32, 1024)*1e3, 0.00006)
	// roofline: 32·1024·2·8·128·2 B / 4.8e12 B/s = 27.96 µs ≈ 0.028 ms
	assert.InDelta(t, 0.02796, gen.roofline(32, 1024)*1e3, 0.00001)
	// custom all-reduce, 2 GPUs, CUDA graph: 0.0044 ms at 128 elements, 0.0124 ms at 2^20
	assert.InDelta(t, 0.0044, ar.Seconds(128)*1e3, 0.00005)
	assert.InDelta(t, 0.0124, ar.Seconds(1<<20)*1e3, 0.00005)
}

// TestGenerationAttentionMHAStandIn: a model without GQA (32 query and 32 KV
// heads per GPU) has no generation-attention rows; the nearest measured pair
// (32 / 8) stands in with its latency kept and its KV-bandwidth part scaled
// by 32/8 = 4 (scaleHeads). So at a 2-token context (latency only) it costs
// about what the 32 / 8 kernel costs, not 4×, and at a long context (bytes
// dominate) about 4× — and never less than the 32 / 8 kernel.
func TestGenerationAttentionMHAStandIn(t *testing.T) {
	db := sharedDB(t)
	sysDir, err := systemDir(db, "h100_sxm")
	require.NoError(t, err)
	src, err := locate(sysDir, "h100_sxm", "vllm", "0.24.0", TableGenerationAttention)
	require.NoError(t, err)
	rows, err := loadAttention(src.Path)
	require.NoError(t, err)
	sys := builtinSystem(t, "h100_sxm")
	sel := attnSelect{kind: generationKind, heads: 32, kvHeads: 8, headDim: 128, kvDtype: "bfloat16", kvBytes: 2,
		flops: sys.BF16Flops, memBW: sys.MemBW}
	gqa, err := newAttnGrid(rows, sel)
	require.NoError(t, err)
	sel.kvHeads = 32
	mha, err := newAttnGrid(rows, sel)
	require.NoError(t, err)
	require.Equal(t, int64(8), mha.measuredKVHeads)
	require.Equal(t, 4.0, mha.scale)
	for _, b := range []float64{1, 16, 128} {
		short := mha.Seconds(b, 2) / gqa.Seconds(b, 2)
		assert.Less(t, short, 1.3, "batch %g, 2 tokens: latency, not 4× it", b)
		for _, n := range []float64{2, 64, 1024, 4096} {
			assert.GreaterOrEqual(t, mha.Seconds(b, n), gqa.Seconds(b, n), "batch %g, KV %g", b, n)
		}
	}
	long := mha.Seconds(64, 4096) / gqa.Seconds(64, 4096)
	assert.InDelta(t, 4.0, long, 0.6, "batch 64, KV 4096: bandwidth bound, ~4× the bytes")
}

// TestTRTLLMTableRows: TensorRT-LLM's tables (h200_sxm, 1.2.0rc5) are read
// like vLLM's, and a query on a measured row returns that row's time: the
// bf16 GEMM n = 6144, k = 4096 at m = 128, 1024, 8192 (0.016749, 0.069730,
// 0.536101 ms), generation attention 32 / 8 heads, d 128, bf16 KV, batch 32
// at KV length 1024 (0.061488 ms), and the all-reduce on 2 GPUs, whose rows
// carry implementation trtllm and no backend column (0.003019 ms at 128
// elements, 0.009475 ms at 2^20).
func TestTRTLLMTableRows(t *testing.T) {
	g, gen, ar := tableGrids(t, "h200_sxm", "trtllm", "1.2.0rc5")
	for _, c := range []struct{ m, ms float64 }{{128, 0.016749}, {1024, 0.069730}, {8192, 0.536101}} {
		assert.InDelta(t, c.ms, g.Seconds(c.m, 6144, 4096)*1e3, 1e-6, "m = %v", c.m)
	}
	assert.InDelta(t, 0.061488, gen.Seconds(32, 1024)*1e3, 1e-6)
	assert.InDelta(t, 0.003019, ar.Seconds(128)*1e3, 1e-6)
	assert.InDelta(t, 0.009475, ar.Seconds(1<<20)*1e3, 1e-6)
}

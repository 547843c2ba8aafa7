package aic

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-worked: an fp8 row of 0.0140 ms at (m 4, k 8192) with a compute-scale
// time of 0.0068 ms there keeps 0.0072 ms; the bf16 row at the same (m, k)
// and the fp8 row at an (m, k) the scale table lacks keep their times, the
// latter counted as unmet; the input rows are not modified.
func TestSubtractComputeScale(t *testing.T) {
	rows := []gemmRow{
		{Dtype: "fp8", M: 4, N: 1024, K: 8192, Latency: 0.0140},
		{Dtype: "bfloat16", M: 4, N: 1024, K: 8192, Latency: 0.0090},
		{Dtype: "fp8", M: 16, N: 1024, K: 8192, Latency: 0.0150},
	}
	scale := []computeScaleRow{{M: 4, K: 8192, Latency: 0.0068}, {M: 8, K: 8192, Latency: 0.0069}}
	out, unmet := subtractComputeScale(rows, scale)
	assert.InDelta(t, 0.0072, out[0].Latency, 1e-12)
	assert.Equal(t, 0.0090, out[1].Latency)
	assert.Equal(t, 0.0150, out[2].Latency)
	assert.Equal(t, 1, unmet)
	assert.Equal(t, 0.0140, rows[0].Latency)
}

// A TRT-LLM fp8 model prices a GEMM at a table row as that row's time less
// the compute-scale table's at its (m, k), or a larger m's when that is less
// (padEnvelope): h200_sxm TRT-LLM 1.2.0rc5, fp8 (m 4, n 8192, k 8192), read
// from the tables themselves.
func TestStaticScaleOnTableRow(t *testing.T) {
	db := sharedDB(t)
	sysDir, err := systemDir(db, "h200_sxm")
	require.NoError(t, err)
	gsrc, err := locate(sysDir, "h200_sxm", trtllmBackend, "1.2.0rc5", TableGEMM)
	require.NoError(t, err)
	ssrc, err := locate(sysDir, "h200_sxm", trtllmBackend, "1.2.0rc5", TableComputeScale)
	require.NoError(t, err)
	assert.Equal(t, "quantize", filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(ssrc.Path)))))
	rows, err := loadGEMM(gsrc.Path)
	require.NoError(t, err)
	scale, err := loadComputeScale(ssrc.Path)
	require.NoError(t, err)
	cs := map[int64]float64{}
	for _, s := range scale {
		if s.K == 8192 {
			cs[s.M] = s.Latency
		}
	}
	want := 0.0
	for _, r := range rows {
		if r.Dtype == "fp8" && r.M >= 4 && r.N == 8192 && r.K == 8192 {
			require.Contains(t, cs, r.M)
			if v := r.Latency - cs[r.M]; want == 0 || v < want {
				want = v
			}
		}
	}
	require.Positive(t, want)
	out, _ := staticScaleGEMMs(rows, scale)
	sys := builtinSystem(t, "h200_sxm")
	g, err := newGEMMGrid(out, "fp8", sys.FP8Flops, sys.MemBW, 1)
	require.NoError(t, err)
	assert.InDelta(t, want*1e-3, g.Seconds(4, 8192, 8192), 1e-12)
}

package aic

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDuplicateRowsKeepFirst writes a table with a repeated key (as older
// versions carry rows tagged 0.19.0 and 0.19.1) and checks that the first
// row wins and that the table is parsed once per path.
func TestDuplicateRowsKeepFirst(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gemm_perf.parquet")
	rows := []gemmRow{
		{"bfloat16", 16, 128, 128, 0.010},
		{"bfloat16", 16, 128, 128, 0.999}, // duplicate: dropped
		{"bfloat16", 32, 128, 128, 0.020},
		{"bfloat16", 0, 128, 128, 0.5}, // m = 0: not a measurement
	}
	require.NoError(t, parquet.WriteFile(p, rows))
	got, err := loadGEMM(p)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, 0.010, got[0].Latency)
	again, err := loadGEMM(p)
	require.NoError(t, err)
	assert.Same(t, &got[0], &again[0], "loaded once per process")
}

// TestGEMMOnATableRowReturnsThatRow is a hand check of the tables: a GEMM
// exactly on a measured row returns the row's latency (ms → s), and a point
// halfway between two rows of a site returns their mean.
func TestGEMMOnATableRowReturnsThatRow(t *testing.T) {
	rows := checkGEMMRows(t, "h100_sxm", "vllm", "0.24.0", "bfloat16", "fp8", "fp8_block")
	sys := builtinSystem(t, "h100_sxm")
	// h100 0.24.0 bf16, n = 4096, k = 4096: halfway between the measured
	// m = 8192 and the next measured m (16384): the mean of the two rows
	g, err := newGEMMGrid(rows, "bfloat16", sys.BF16Flops, sys.MemBW, 2)
	require.NoError(t, err)
	c := g.sites[[2]float64{4096, 4096}]
	require.NotNil(t, c)
	i0 := indexOf(c.m, 8192)
	require.True(t, i0 >= 0 && i0+1 < len(c.m))
	mid := (c.m[i0] + c.m[i0+1]) / 2
	assert.InEpsilon(t, (c.sec[i0]+c.sec[i0+1])/2, g.Seconds(mid, 4096, 4096), 1e-12)
}

// TestKeepEfficiency: outside the table, the edge's measured / roofline
// ratio scales the query's roofline, never below the roofline.
func TestKeepEfficiency(t *testing.T) {
	// edge: measured 3 s against a 2 s roofline (efficiency 2/3); query roofline 10 s → 15 s
	assert.InDelta(t, 15.0, keepEfficiency(3, 2, 10), 1e-12)
	// an edge measured below its roofline (1 s vs 2 s) would give 5 s: clamped to 10 s
	assert.InDelta(t, 10.0, keepEfficiency(1, 2, 10), 1e-12)
}

// TestPadEnvelope: hand-worked. Times 1, 5, 3, 4, 2 (an ascending size
// axis) become 1, 2, 2, 2, 2: each is capped by the fastest larger size;
// an already non-decreasing curve is unchanged.
func TestPadEnvelope(t *testing.T) {
	s := []float64{1, 5, 3, 4, 2}
	padEnvelope(s)
	assert.Equal(t, []float64{1, 2, 2, 2, 2}, s)
	u := []float64{1, 2, 2, 7}
	padEnvelope(u)
	assert.Equal(t, []float64{1, 2, 2, 7}, u)
	padEnvelope(nil) // no panic
}

// TestGEMMGlitchLowered: the h100_sxm vLLM 0.14.0 bf16 row n 6144, k 5120,
// m 4096 measures 0.19 of the roofline (2·4096·6144·5120 / 989e12 = 0.261 ms
// bound, so ≈ 1.37 ms) between m 2048 and m 8192 at ~0.78; m 8192 takes
// ≈ 0.686 ms (0.76 of its 0.521 ms bound). The lookup at m 4096 returns the
// m 8192 time: ≤ 0.70 ms, efficiency ≥ 0.37, and not above the m 8192 time.
func TestGEMMGlitchLowered(t *testing.T) {
	db := sharedDB(t)
	dir, err := systemDir(db, "h100_sxm")
	require.NoError(t, err)
	src, err := locate(dir, "h100_sxm", "vllm", "0.14.0", TableGEMM)
	require.NoError(t, err)
	rows, err := loadGEMM(src.Path)
	require.NoError(t, err)
	var raw4096, raw8192 float64
	for _, r := range rows {
		if r.Dtype == "bfloat16" && r.N == 6144 && r.K == 5120 {
			switch r.M {
			case 4096:
				raw4096 = r.Latency * 1e-3
			case 8192:
				raw8192 = r.Latency * 1e-3
			}
		}
	}
	require.Greater(t, raw4096, raw8192, "the glitch is in the table")
	sys := builtinSystem(t, "h100_sxm")
	g, err := newGEMMGrid(rows, "bfloat16", sys.BF16Flops, sys.MemBW, 2)
	require.NoError(t, err)
	got := g.Seconds(4096, 6144, 5120)
	assert.InDelta(t, raw8192, got, 1e-12)
	assert.InDelta(t, 0.000686, got, 0.00002)
	assert.Greater(t, g.roofline(4096, 6144, 5120)/got, 0.37)
}

// checkGEMMRows checks that a GEMM exactly on a measured row of a table
// (every 997th row of each of dtypes) returns the row's latency, and returns
// the table's rows.
func checkGEMMRows(t *testing.T, system, backend, version string, dtypes ...string) []gemmRow {
	t.Helper()
	dir, err := systemDir(sharedDB(t), system)
	require.NoError(t, err)
	src, err := locate(dir, system, backend, version, TableGEMM)
	require.NoError(t, err)
	rows, err := loadGEMM(src.Path)
	require.NoError(t, err)
	sys := builtinSystem(t, system)
	for _, dt := range dtypes {
		g, err := newGEMMGrid(rows, dt, sys.Flops("fp8"), sys.MemBW, 1)
		if dt == "bfloat16" {
			g, err = newGEMMGrid(rows, dt, sys.BF16Flops, sys.MemBW, 2)
		}
		require.NoError(t, err)
		checked := 0
		for i := range rows {
			r := &rows[i]
			if r.Dtype != dt || i%997 != 0 {
				continue
			}
			want := r.Latency * 1e-3
			if want < g.roofline(float64(r.M), float64(r.N), float64(r.K)) {
				continue // a row below its roofline is clamped up, by design
			}
			if c := g.sites[[2]float64{float64(r.N), float64(r.K)}]; c.sec[indexOf(c.m, float64(r.M))] < want {
				continue // a row slower than a larger m at its site is lowered to it, by design (padEnvelope)
			}
			assert.InEpsilon(t, want, g.Seconds(float64(r.M), float64(r.N), float64(r.K)), 1e-12,
				"%s m=%d n=%d k=%d", dt, r.M, r.N, r.K)
			checked++
		}
		assert.Greater(t, checked, 5, "the scenario reached rows of %s", dt)
	}
	return rows
}

// TestSGLangGEMMOnATableRow: SGLang's own tables (gemm/sglang/<version>)
// give, on a measured row, that row's time.
func TestSGLangGEMMOnATableRow(t *testing.T) {
	checkGEMMRows(t, "h200_sxm", "sglang", "0.5.9", "bfloat16", "fp8")
	checkGEMMRows(t, "h100_sxm", "sglang", "0.5.9", "bfloat16")
}

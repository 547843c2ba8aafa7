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

// TestGEMMOnATableRowReturnsThatRow is the hand check of issue 5: a GEMM
// exactly on a measured row returns the row's latency (ms → s), and a point
// halfway between two rows of a site returns their mean.
func TestGEMMOnATableRowReturnsThatRow(t *testing.T) {
	db := sharedDB(t)
	dir, err := systemDir(db, "h100_sxm")
	require.NoError(t, err)
	src, err := locate(dir, "h100_sxm", "vllm", "0.24.0", TableGEMM)
	require.NoError(t, err)
	rows, err := loadGEMM(src.Path)
	require.NoError(t, err)
	sys := builtinSystem(t, "h100_sxm")
	for _, dt := range []string{"bfloat16", "fp8", "fp8_block"} {
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
			assert.InEpsilon(t, want, g.Seconds(float64(r.M), float64(r.N), float64(r.K)), 1e-12,
				"%s m=%d n=%d k=%d", dt, r.M, r.N, r.K)
			checked++
		}
		assert.Greater(t, checked, 5, "the scenario reached rows of %s", dt)
	}
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

package aic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 3 × 3 grid with an unmeasured cell: each measured cell is bounded by the
// least measured cell at or beyond it on both axes. Hand-worked: (0,1) = 9
// has (0,2) = 3, (1,2) = 4, (2,1) = 6, (2,2) = 7 beyond it → 3; every other
// cell is at most its bound already; the NaN stays NaN.
func TestCapByLargerGrid(t *testing.T) {
	nan := math.NaN()
	g := &attnGrid{sec: [][]float64{{1, 9, 3}, {2, nan, 4}, {5, 6, 7}}}
	g.capByLarger()
	assert.Equal(t, []float64{1, 3, 3}, g.sec[0])
	assert.Equal(t, 2.0, g.sec[1][0])
	assert.True(t, math.IsNaN(g.sec[1][1]))
	assert.Equal(t, 4.0, g.sec[1][2])
	assert.Equal(t, []float64{5, 6, 7}, g.sec[2])
}

// spikeRows: generation rows at batch 1, 2, 4 and KV length 2, 4, 8 (isl 1 +
// step 1, 3, 7), with batch 2 at length 4 measured at 0.5 ms against
// 0.010–0.014 ms around it (the shape of the H200 TRT-LLM 1.2.0rc5 cell at
// batch 8, length 8 for 64 / 8 heads, head_dim 64).
func spikeRows() []attnRow {
	ms := [][]float64{{0.010, 0.011, 0.012}, {0.010, 0.500, 0.013}, {0.011, 0.012, 0.014}}
	var rows []attnRow
	for i, b := range []int64{1, 2, 4} {
		for j, step := range []int64{1, 3, 7} {
			rows = append(rows, attnRow{Batch: b, ISL: 1, Step: step, Heads: 1, KVHeads: 1, HeadDim: 64,
				KVDtype: "bfloat16", Latency: ms[i][j]})
		}
	}
	return rows
}

// A pass at a table row returns that row's time; the spike is priced at its
// bound (batch 4, length 4: 0.012 ms), and the cells beyond it keep their
// own times. Without the cap the running maximum carries the spike on:
// batch 4 at length 8 is priced 0.5 ms, not its measured 0.014.
func TestCapByLargerSpike(t *testing.T) {
	sel := attnSelect{kind: generationKind, heads: 1, kvHeads: 1, headDim: 64, kvDtype: "bfloat16", kvBytes: 2,
		flops: 989e12, memBW: 4.8e12, capByLarger: true}
	g, err := newAttnGrid(spikeRows(), sel)
	require.NoError(t, err)
	want := [][]float64{{0.010, 0.011, 0.012}, {0.010, 0.012, 0.013}, {0.011, 0.012, 0.014}}
	for i, b := range []float64{1, 2, 4} {
		for j, y := range []float64{2, 4, 8} {
			assert.InDelta(t, want[i][j]*1e-3, g.Seconds(b, y), 1e-12, "batch %g, length %g", b, y)
		}
	}
	sel.capByLarger = false
	raw, err := newAttnGrid(spikeRows(), sel)
	require.NoError(t, err)
	assert.InDelta(t, 0.5e-3, raw.Seconds(4, 8), 1e-12)
	assert.InDelta(t, 0.014e-3, g.Seconds(4, 8), 1e-12)
}

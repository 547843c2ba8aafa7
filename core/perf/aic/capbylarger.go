package aic

import "math"

// capByLarger bounds every measured cell by the measured cells of larger
// problems: a decode or prefill kernel over at least as many sequences, each
// at least as long, does at least the same work, so its time is an upper
// bound on the smaller one's. A cell above that bound is a collection
// glitch, not a kernel heuristic the smaller batch would meet; without the
// cap the running maximum of monotone carries it to every larger cell. (The
// H200 TRT-LLM 1.2.0rc5 generation table has gpt-oss-120b's 64 / 8 heads,
// head_dim 64, at batch 8 and KV length 8 at 0.382 ms, its neighbours at
// batch 4 and 16 and at KV lengths 4 and 16 at 0.009–0.011 ms; running
// maximum alone priced every batch ≥ 8 at ≥ 0.382 ms a full-attention layer.)
//
// Unmeasured (NaN) cells are neither capped nor bounds; fill and monotone
// complete the grid after. In place; O(batches × lengths).
func (g *attnGrid) capByLarger() {
	nb := len(g.sec)
	if nb == 0 {
		return
	}
	nl := len(g.sec[0])
	// bound[i][j]: the least measured time over cells (i' ≥ i, j' ≥ j)
	bound := make([][]float64, nb+1)
	for i := range bound {
		bound[i] = make([]float64, nl+1)
		for j := range bound[i] {
			bound[i][j] = math.Inf(1)
		}
	}
	for i := nb - 1; i >= 0; i-- {
		for j := nl - 1; j >= 0; j-- {
			b := math.Min(bound[i+1][j], bound[i][j+1])
			if v := g.sec[i][j]; !math.IsNaN(v) {
				g.sec[i][j] = math.Min(v, b)
				b = math.Min(b, v)
			}
			bound[i][j] = b
		}
	}
}

// trtllmBackend is TensorRT-LLM's folder of tables.
const trtllmBackend = "trtllm"

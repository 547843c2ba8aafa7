package aic

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/perf"
)

// attnKind selects the roofline and the length axis of an attention grid.
type attnKind int

const (
	// contextKind: prefill attention; length axis isl (S), compute bound.
	contextKind attnKind = iota
	// generationKind: decode attention; length axis kv = isl + step, memory bound.
	generationKind
)

// attnGrid is one attention table restricted to a model's heads per GPU,
// head_dim and KV dtype (window 0 = full attention): latency (s) on a
// batch × length grid, every cell filled (see fill) and non-decreasing
// along both axes (see monotone).
type attnGrid struct {
	kind    attnKind
	batches []float64 // ascending
	lengths []float64 // ascending: isl (context) or kv length (generation)
	sec     [][]float64
	sqrtLen bool // interpolate along length on √latency (context)
	heads   float64
	kvHeads float64
	headDim float64
	kvBytes float64
	flops   float64 // bf16 peak, FLOP/s
	memBW   float64 // HBM, B/s
	// Source of the measurements: the (heads, kv heads) pair measured and
	// the factor applied (1 when the model's own pair was measured).
	measuredHeads, measuredKVHeads int64
	scale                          float64
	// mla: an MLA layer's attention core (mla.go) instead of GQA attention;
	// its roofline is the core's at peak rates
	mla *perf.MLACore
	// dsv4: a DeepSeek-V4 layer's attention core (dsv4.go), likewise
	dsv4 *perf.DSV4Core
}

// roofline is the attention bound of docs/design.md ("Roofline bounds"), seconds, for b
// sequences of length y (no cached prefix):
//
//	context:    2·b·y²·n·d / P            (causal QKᵀ and PV, bf16 math)
//	generation: b·y·2·kv·d·b_kv / W       (read K and V of y tokens)
//
// n, kv heads per GPU, d head_dim, b_kv KV bytes per element, P bf16 peak
// FLOP/s, W HBM bandwidth B/s.
//
// An MLA grid's bound is its core's instead (bound); roofline stays the GQA
// formula alone so that Seconds inlines it.
func (g *attnGrid) roofline(b, y float64) float64 {
	if g.kind == contextKind {
		return 2 * b * y * y * g.heads * g.headDim / g.flops
	}
	return b * y * 2 * g.kvHeads * g.headDim * g.kvBytes / g.memBW
}

// bound is the grid's roofline: the GQA formula (roofline), or an MLA grid's
// core (mlaRoofline).
func (g *attnGrid) bound(b, y float64) float64 {
	if g.mla != nil {
		return mlaRoofline(g.mla, g.kind, b, y)
	}
	if g.dsv4 != nil {
		return dsv4Roofline(g.dsv4, g.kind, b, y)
	}
	return g.roofline(b, y)
}

// Seconds is the latency of b sequences of length y: bilinear on the grid
// (linear in batch; along the length on √latency for context attention,
// whose cost is near quadratic there, linear for generation); outside the
// grid, the efficiency of the nearest edge point times the query's roofline.
// Never below the roofline. It does not allocate.
func (g *attnGrid) Seconds(b, y float64) float64 {
	if b <= 0 || y <= 0 {
		return 0
	}
	b0, b1, wb, cb := bracket(g.batches, b)
	y0, y1, wy, cy := bracket(g.lengths, y)
	along := func(row []float64) float64 {
		if g.sqrtLen {
			s := lerp(math.Sqrt(row[y0]), math.Sqrt(row[y1]), wy)
			return s * s
		}
		return lerp(row[y0], row[y1], wy)
	}
	t := lerp(along(g.sec[b0]), along(g.sec[b1]), wb)
	roof := g.roofline(b, y)
	if g.mla != nil {
		roof = mlaRoofline(g.mla, g.kind, b, y)
	} else if g.dsv4 != nil {
		roof = dsv4Roofline(g.dsv4, g.kind, b, y)
	}
	if cb || cy {
		return keepEfficiency(t, g.bound(clampTo(g.batches, b), clampTo(g.lengths, y)), roof)
	}
	return max(roof, t)
}

// attnSelect says which rows of an attention table make a model's grid.
type attnSelect struct {
	kind           attnKind
	heads, kvHeads int64 // per GPU
	headDim        int64
	kvDtype        string
	kvBytes        float64
	flops, memBW   float64
	// window is the window_size of the rows (0: full attention)
	window int64
	// dataHeadDim is the head_dim of the rows read when it is not the
	// model's (0: headDim): a stand-in, scaled by headDim/dataHeadDim
	// (attentionGrid)
	dataHeadDim int64
	// capByLarger bounds each measured cell by the larger problems measured
	// (capByLarger); TensorRT-LLM's tables only (docs/trtllm.md, "One
	// iteration")
	capByLarger bool
}

// newAttnGrid restricts the rows to the selection. When the model's (heads,
// kv heads) pair was not measured, the nearest measured pair (Euclidean in
// log2 heads, log2 kv heads, among pairs with the same head_dim and KV
// dtype) stands in, scaled by heads/heads' for context attention (compute
// ∝ query heads) or, in its KV-bandwidth part, by kv/kv' for generation
// attention (scaleHeads); the generation tables stop at 8 KV heads per GPU. Errors: no rows for
// the head_dim and KV dtype.
func newAttnGrid(rows []attnRow, sel attnSelect) (*attnGrid, error) {
	type pair struct{ h, kv int64 }
	pairs := map[pair]bool{}
	dim := sel.headDim
	if sel.dataHeadDim > 0 {
		dim = sel.dataHeadDim
	}
	for i := range rows {
		r := &rows[i]
		if r.HeadDim == dim && r.KVDtype == sel.kvDtype && r.Window == sel.window {
			pairs[pair{r.Heads, r.KVHeads}] = true
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("no rows with head_dim %d, kv_cache_dtype %s, window %d", dim, sel.kvDtype, sel.window)
	}
	want := pair{sel.heads, sel.kvHeads}
	best, bestD := want, math.Inf(1)
	if !pairs[want] {
		for p := range pairs {
			d := math.Hypot(math.Log2(float64(p.h)/float64(want.h)), math.Log2(float64(p.kv)/float64(want.kv)))
			// deterministic tie-break: smaller heads, then smaller kv heads
			if d < bestD || (d == bestD && (p.h < best.h || (p.h == best.h && p.kv < best.kv))) {
				best, bestD = p, d
			}
		}
	}
	g := &attnGrid{kind: sel.kind, sqrtLen: sel.kind == contextKind,
		heads: float64(sel.heads), kvHeads: float64(sel.kvHeads), headDim: float64(sel.headDim),
		kvBytes: sel.kvBytes, flops: sel.flops, memBW: sel.memBW,
		measuredHeads: best.h, measuredKVHeads: best.kv, scale: 1}
	if sel.kind == contextKind {
		g.scale = float64(sel.heads) / float64(best.h)
	} else {
		g.scale = float64(sel.kvHeads) / float64(best.kv)
	}
	g.scale *= float64(sel.headDim) / float64(dim) // FLOPs and KV bytes ∝ head_dim
	length := func(r *attnRow) float64 {
		if sel.kind == contextKind {
			return float64(r.ISL)
		}
		return float64(r.ISL + r.Step)
	}
	var bs, ys []float64
	var picked []*attnRow
	for i := range rows {
		r := &rows[i]
		if r.HeadDim == dim && r.KVDtype == sel.kvDtype && r.Window == sel.window && r.Heads == best.h && r.KVHeads == best.kv {
			picked = append(picked, r)
			bs, ys = append(bs, float64(r.Batch)), append(ys, length(r))
		}
	}
	g.batches, g.lengths = sortedUnique(bs), sortedUnique(ys)
	g.sec = unmeasured(len(g.batches), len(g.lengths))
	for _, r := range picked {
		// first row wins (loadRows already dropped exact duplicates; two
		// rows differing only in step and isl with the same kv length keep
		// the first)
		i, j := indexOf(g.batches, float64(r.Batch)), indexOf(g.lengths, length(r))
		if math.IsNaN(g.sec[i][j]) {
			g.sec[i][j] = r.Latency * 1e-3
		}
	}
	if sel.capByLarger {
		g.capByLarger()
	}
	g.fill()
	g.scaleHeads()
	g.monotone()
	return g, nil
}

// scaleHeads carries a stand-in head pair's times over to the model's pair
// (g.scale = heads/heads' for context attention, kv/kv' for generation
// attention). Context attention is compute bound: every time scales. A decode
// kernel's time is a fixed latency (launch, ramp-up, the reduction over
// splits) plus the KV bytes it streams; only the bytes grow with the KV heads,
// so per batch row
//
//	T(n) = T'(n₀) + s·(T'(n) − T'(n₀))
//
// n the KV length, n₀ the shortest measured one (latency only: 2 tokens),
// s = kv/kv'. Scaling the whole time instead multiplied the latency too: a
// model whose KV heads equal its attention heads (no GQA; 32 per GPU against
// a measured 8) came out ~4× too slow at short contexts.
func (g *attnGrid) scaleHeads() {
	if g.scale == 1 {
		return
	}
	for _, row := range g.sec {
		if g.kind == contextKind {
			for j := range row {
				row[j] *= g.scale
			}
			continue
		}
		floor := row[0]
		for _, v := range row {
			floor = math.Min(floor, v)
		}
		for j := range row {
			row[j] = floor + g.scale*(row[j]-floor)
		}
	}
}

// unmeasured is a batches × lengths grid of NaN (no measurement yet; fill
// completes it).
func unmeasured(batches, lengths int) [][]float64 {
	sec := make([][]float64, batches)
	for i := range sec {
		sec[i] = make([]float64, lengths)
		for j := range sec[i] {
			sec[i][j] = math.NaN()
		}
	}
	return sec
}

// monotone makes the grid non-decreasing along batch and length (a running
// maximum): more sequences or longer ones never run faster, whatever the
// kernel's tile and split heuristics measured.
func (g *attnGrid) monotone() {
	for i, row := range g.sec {
		for j := range row {
			if j > 0 {
				row[j] = math.Max(row[j], row[j-1])
			}
			if i > 0 {
				row[j] = math.Max(row[j], g.sec[i-1][j])
			}
		}
	}
}

// fill completes the grid where the tables stop (large batch × length):
// a missing cell takes the efficiency of the nearest measured cell of its
// batch row (by length index, the shorter one on a tie), times its own
// roofline; a row with no measurement takes the nearest such row (by batch
// index, the smaller on a tie), scaled the same way.
func (g *attnGrid) fill() {
	measured := func(i, j int) bool { return !math.IsNaN(g.sec[i][j]) }
	nearest := func(n, at int, ok func(int) bool) int {
		for d := 1; d < n; d++ {
			if at-d >= 0 && ok(at-d) {
				return at - d
			}
			if at+d < n && ok(at+d) {
				return at + d
			}
		}
		return -1
	}
	rowHas := make([]bool, len(g.sec))
	for i := range g.sec {
		for j := range g.lengths {
			rowHas[i] = rowHas[i] || measured(i, j)
		}
	}
	for i := range g.sec {
		if !rowHas[i] {
			continue
		}
		var missing []int
		for j := range g.lengths {
			if !measured(i, j) {
				missing = append(missing, j)
			}
		}
		for _, j := range missing {
			src := nearest(len(g.lengths), j, func(jj int) bool { return measured(i, jj) && !contains(missing, jj) })
			b := g.batches[i]
			g.sec[i][j] = keepEfficiency(g.sec[i][src], g.bound(b, g.lengths[src]), g.bound(b, g.lengths[j]))
		}
	}
	for i := range g.sec {
		if rowHas[i] {
			continue
		}
		src := nearest(len(g.sec), i, func(ii int) bool { return rowHas[ii] })
		for j, y := range g.lengths {
			g.sec[i][j] = keepEfficiency(g.sec[src][j], g.bound(g.batches[src], y), g.bound(g.batches[i], y))
		}
	}
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

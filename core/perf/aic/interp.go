package aic

import "sort"

// bracket locates x on the ascending axis xs (len ≥ 1): x lies between
// xs[i0] and xs[i1] at fraction w ∈ [0, 1] (x = (1−w)·xs[i0] + w·xs[i1]).
// Outside the axis it clamps to the nearest end (i0 = i1, w = 0) and
// reports clamped. It does not allocate.
func bracket(xs []float64, x float64) (i0, i1 int, w float64, clamped bool) {
	n := len(xs)
	if x <= xs[0] {
		return 0, 0, 0, x < xs[0]
	}
	if x >= xs[n-1] {
		return n - 1, n - 1, 0, x > xs[n-1]
	}
	i1 = sort.SearchFloat64s(xs, x) // first xs[i] ≥ x; 1 ≤ i1 ≤ n−1
	if xs[i1] == x {
		return i1, i1, 0, false
	}
	i0 = i1 - 1
	return i0, i1, (x - xs[i0]) / (xs[i1] - xs[i0]), false
}

// clampTo returns x limited to [xs[0], xs[len−1]].
func clampTo(xs []float64, x float64) float64 {
	return min(max(x, xs[0]), xs[len(xs)-1])
}

func lerp(a, b, w float64) float64 { return a + (b-a)*w }

// sortedUnique returns the distinct values of vs in ascending order.
func sortedUnique(vs []float64) []float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// indexOf returns the position of v in the ascending axis xs, or −1.
func indexOf(xs []float64, v float64) int {
	i := sort.SearchFloat64s(xs, v)
	if i < len(xs) && xs[i] == v {
		return i
	}
	return -1
}

// keepEfficiency extrapolates a measurement to a query outside the measured
// range (docs/design.md, "Lookups"): the measured time at the
// nearest point, measured, over the roofline there, roofEdge, is the
// efficiency kept; the answer is that ratio times the query's roofline
// roofQuery, and never below roofQuery. Seconds in, seconds out.
func keepEfficiency(measured, roofEdge, roofQuery float64) float64 {
	if !(roofEdge > 0) {
		return max(measured, roofQuery)
	}
	return max(roofQuery, measured/roofEdge*roofQuery)
}

// median of rs (sorted in place); ok is false for an empty slice.
func median(rs []float64) (float64, bool) {
	n := len(rs)
	if n == 0 {
		return 0, false
	}
	sort.Float64s(rs)
	if n%2 == 1 {
		return rs[n/2], true
	}
	return (rs[n/2-1] + rs[n/2]) / 2, true
}

// sizeAt interpolates a curve of times over ascending message sizes at e:
// linear between measured sizes, the smallest size's time below them (a
// latency floor); above the largest, t is the largest size's time and above
// is true (the caller scales it by its roofline, keepEfficiency). Used by
// the all-reduce and NCCL curves.
func sizeAt(sizes, sec []float64, e float64) (t float64, above bool) {
	i0, i1, w, clamped := bracket(sizes, e)
	return lerp(sec[i0], sec[i1], w), clamped && e > sizes[len(sizes)-1]
}

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

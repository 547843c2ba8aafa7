package report

import (
	"math"
	"slices"
)

// gapPool is the pooled inter-token latency distribution, kept as runs of equal
// gaps (value in ns, count) rather than as one value per token.
//
// Why: a replay receives tens of millions of tokens, but gaps repeat — every
// request decoding in the same pass sees the same gap (the pass duration, or the
// same detokenization job spacing) and a pass's outputs arrive together — so
// the runs number about the passes, not the tokens. Appending a run is cheaper
// than a map update; stats sorts the runs once. The statistics equal those of
// the expanded list.
type gapPool struct {
	runs  []gapRun
	last  int64 // the current run
	lastN int64
	n     int64
}

type gapRun struct{ v, n int64 }

func (p *gapPool) add(gapNs int64) {
	if p.lastN > 0 && gapNs == p.last {
		p.lastN++
		return
	}
	p.flush()
	p.last, p.lastN = gapNs, 1
}

func (p *gapPool) flush() {
	if p.lastN == 0 {
		return
	}
	p.runs = append(p.runs, gapRun{p.last, p.lastN})
	p.n += p.lastN
	p.lastN = 0
}

// stats computes Stats over the pooled gaps (ms), as Compute would over the
// expanded list: numpy-linear percentiles from the cumulative counts.
func (p *gapPool) stats() *Stats {
	p.flush()
	if p.n == 0 {
		return nil
	}
	// merge the runs into distinct values with counts (far fewer than runs: one
	// per distinct pass duration), then sort the distinct values
	byValue := make(map[int64]int64, len(p.runs)/8)
	for _, r := range p.runs {
		byValue[r.v] += r.n
	}
	vals := make([]int64, 0, len(byValue))
	for v := range byValue {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	counts := make([]int64, len(vals))
	for i, v := range vals {
		counts[i] = byValue[v]
	}
	cum := make([]int64, len(vals)) // cum[i] = values ≤ vals[i]
	sum := 0.0
	var c int64
	for i, v := range vals {
		c += counts[i]
		cum[i] = c
		sum += ms(v) * float64(counts[i])
	}
	n := float64(p.n)
	mean := sum / n
	ss := 0.0
	for i, v := range vals {
		d := ms(v) - mean
		ss += d * d * float64(counts[i])
	}
	// at returns the k-th smallest value (0-based) of the expanded list.
	at := func(k int64) float64 {
		i, _ := slices.BinarySearch(cum, k+1)
		return ms(vals[i])
	}
	pct := func(q float64) float64 {
		v := float64(p.n-1) * (q / 100)
		lo := math.Floor(v)
		k := int64(lo)
		if k >= p.n-1 {
			return at(p.n - 1)
		}
		return lerp(at(k), at(k+1), v-lo)
	}
	return &Stats{Mean: mean, Std: math.Sqrt(ss / n), Min: ms(vals[0]), Max: ms(vals[len(vals)-1]),
		P50: pct(50), P90: pct(90), P95: pct(95), P99: pct(99)}
}

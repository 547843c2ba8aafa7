package report

import (
	"math"
	"slices"
)

// gapPool is the pooled inter-token latency distribution, kept as exact counts
// of each gap in ns rather than as one value per token.
//
// Why: a replay receives tens of millions of tokens, but gaps repeat — every
// request decoding in the same pass sees the same gap (the pass duration, or the
// same detokenization job spacing) — so the number of distinct values is about
// the number of passes. Counting them keeps memory bounded by passes, not
// tokens, and the run-length cache below turns a pass's worth of equal gaps into
// one map update. Statistics are the same as over the expanded list.
type gapPool struct {
	counts map[int64]int64
	last   int64 // run-length cache: the current run's value and length
	lastN  int64
	n      int64
}

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
	if p.counts == nil {
		p.counts = make(map[int64]int64)
	}
	p.counts[p.last] += p.lastN
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
	vals := make([]int64, 0, len(p.counts))
	for v := range p.counts {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	cum := make([]int64, len(vals)) // cum[i] = values ≤ vals[i]
	sum := 0.0
	var c int64
	for i, v := range vals {
		c += p.counts[v]
		cum[i] = c
		sum += ms(v) * float64(p.counts[v])
	}
	n := float64(p.n)
	mean := sum / n
	ss := 0.0
	for _, v := range vals {
		d := ms(v) - mean
		ss += d * d * float64(p.counts[v])
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

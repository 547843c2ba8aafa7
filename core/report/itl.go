package report

import (
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

func (p *gapPool) add(gapNs, n int64) {
	if p.lastN > 0 && gapNs == p.last {
		p.lastN += n
		return
	}
	p.flush()
	p.last, p.lastN = gapNs, n
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
	msVals, counts := make([]float64, len(vals)), make([]int64, len(vals))
	for i, v := range vals {
		msVals[i], counts[i] = ms(v), byValue[v]
	}
	return weightedStats(msVals, counts)
}

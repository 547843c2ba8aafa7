package report

import (
	"cmp"
	"slices"
	"unsafe"
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
	if len(p.runs) == cap(p.runs) {
		// double: append grows a large slice by 1.25×, so the runs of a long
		// replay (about one per pass and worker) were copied some 30 times
		// and allocated 5× their size as they grew
		grown := make([]gapRun, len(p.runs), max(1024, 2*cap(p.runs)))
		copy(grown, p.runs)
		p.runs = grown
	}
	p.runs = append(p.runs, gapRun{p.last, p.lastN})
	p.n += p.lastN
	p.lastN = 0
}

// stats computes Stats over the pooled gaps (ms), as Compute would over the
// expanded list: numpy-linear percentiles from the cumulative counts. It
// sorts the runs and merges those of equal value (in place: a later call gives
// the same Stats).
func (p *gapPool) stats() *Stats {
	p.flush()
	if p.n == 0 {
		return nil
	}
	// sort the runs by value (about one per pass and worker, far fewer than
	// tokens) and merge equal values; the statistics need only the sorted
	// distinct values and their counts
	buf := sortRuns(p.runs)
	runs, k := p.runs, 0
	for _, r := range runs {
		if k > 0 && r.v == runs[k-1].v {
			runs[k-1].n += r.n
			continue
		}
		runs[k] = r
		k++
	}
	p.runs = runs[:k]
	// the values (ms) and the counts as two arrays: in the radix sort's buffer
	// when it made one (len(buf) ≥ k runs are 2k words; it holds nothing any
	// more), which saves allocating them at the end of a long replay
	var msVals []float64
	var counts []int64
	if len(buf) >= k {
		words := unsafe.Pointer(unsafe.SliceData(buf))
		msVals = unsafe.Slice((*float64)(words), k)
		counts = unsafe.Slice((*int64)(words), 2*k)[k:]
	} else {
		msVals, counts = make([]float64, k), make([]int64, k)
	}
	for i, r := range p.runs {
		msVals[i], counts[i] = ms(r.v), r.n
	}
	return weightedStats(msVals, counts)
}

// sortRuns sorts runs by value: radixSort from radixMin runs, else (or with a
// negative value) slices.SortFunc. Runs of equal value may come out in any
// order: stats merges them, and a sum of counts does not depend on its order.
// It returns the radix sort's buffer (len(runs) runs, free for the caller), or
// nil.
func sortRuns(runs []gapRun) []gapRun {
	byValue := func(a, b gapRun) int { return cmp.Compare(a.v, b.v) }
	if len(runs) < radixMin {
		slices.SortFunc(runs, byValue)
		return nil
	}
	for _, r := range runs {
		if r.v < 0 {
			slices.SortFunc(runs, byValue)
			return nil
		}
	}
	return radixSort(runs, nil)[:len(runs)]
}

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
//
// A run is one word (packedRun: the value above the count) when its value is
// in [0, 2^40) ns (18 minutes) and its count below 2^24, as nearly all are;
// the others are kept apart (wide). A long replay's runs number about its
// passes (820,000 for the Mooncake trace on four workers): one word each, not
// two, halves their memory and the radix sort's buffer, most of what a
// fresh process's replay touches for the first time.
type gapPool struct {
	runs  []packedRun
	wide  []gapRun
	last  int64 // the current run
	lastN int64
	n     int64
	done  *Stats    // the statistics, once computed: the runs are merged in place
	more  []float64 // percentiles beside the fixed ones (Stats.More)
}

type gapRun struct{ v, n int64 }

// packedRun is a run as one word: value << packedCountBits | count.
type packedRun uint64

const (
	packedCountBits = 24
	packedCountMask = 1<<packedCountBits - 1
	packedMaxValue  = 1<<(64-packedCountBits) - 1
)

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
	if p.done != nil {
		panic("report: an ITL gap pooled after the statistics were computed")
	}
	if v, c := p.last, p.lastN; 0 <= v && v <= packedMaxValue && c <= packedCountMask {
		if len(p.runs) == cap(p.runs) {
			// double: append grows a large slice by 1.25×, so the runs of a long
			// replay (about one per pass and worker) were copied some 30 times
			// and allocated 5× their size as they grew
			grown := make([]packedRun, len(p.runs), max(1024, 2*cap(p.runs)))
			copy(grown, p.runs)
			p.runs = grown
		}
		p.runs = append(p.runs, packedRun(uint64(v)<<packedCountBits|uint64(c)))
	} else {
		p.wide = append(p.wide, gapRun{v, c})
	}
	p.n += p.lastN
	p.lastN = 0
}

// stats computes Stats over the pooled gaps (ms), as Compute would over the
// expanded list: numpy-linear percentiles from the cumulative counts. It
// sorts the runs and merges those of equal value in place; a later call
// returns the same Stats, and no gap may be added after the first.
func (p *gapPool) stats() *Stats {
	p.flush()
	if p.done != nil || p.n == 0 {
		return p.done
	}
	if len(p.wide) > 0 { // rare: every run as two words, sorted and merged as such
		runs := make([]gapRun, 0, len(p.runs)+len(p.wide))
		for _, r := range p.runs {
			runs = append(runs, gapRun{int64(r >> packedCountBits), int64(r & packedCountMask)})
		}
		p.done = runStats(append(runs, p.wide...), p.more)
		p.runs, p.wide = nil, nil
		return p.done
	}
	// sort the runs by value (about one per pass and worker, far fewer than
	// tokens) and merge equal values; the statistics need only the sorted
	// distinct values and their counts: the values in the runs' words (a
	// run's word is read before its slot is written: k ≤ i), the counts in
	// the radix sort's buffer when it made one (it holds nothing any more),
	// which saves allocating them at the end of a long replay
	runs := p.runs
	buf := sortPacked(runs)
	vals := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(runs))), len(runs))
	var counts []int64
	if len(buf) >= len(runs) {
		counts = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(buf))), len(runs))
	} else {
		counts = make([]int64, len(runs))
	}
	k := 0
	for _, r := range runs {
		v, c := int64(r>>packedCountBits), int64(r&packedCountMask)
		if k > 0 && v == vals[k-1] {
			counts[k-1] += c
			continue
		}
		vals[k], counts[k] = v, c
		k++
	}
	msVals := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(vals))), k)
	for i, v := range vals[:k] {
		msVals[i] = ms(v)
	}
	p.done = weightedStats(msVals, counts[:k], p.more)
	p.runs = nil // its memory now holds the values
	return p.done
}

// runStats is stats over runs of two words (some value or count too wide
// for one; rare): sorted, merged in place.
func runStats(runs []gapRun, more []float64) *Stats {
	sortRuns(runs)
	k := 0
	for _, r := range runs {
		if k > 0 && r.v == runs[k-1].v {
			runs[k-1].n += r.n
			continue
		}
		runs[k] = r
		k++
	}
	msVals, counts := make([]float64, k), make([]int64, k)
	for i, r := range runs[:k] {
		msVals[i], counts[i] = ms(r.v), r.n
	}
	return weightedStats(msVals, counts, more)
}

// sortPacked sorts packed runs by value (runs of equal value in any order):
// radixSortFrom on the value's bits from radixMin runs, else slices.Sort
// (by value, then count). It returns the radix sort's buffer (len(runs)
// words, free for the caller), or nil.
func sortPacked(runs []packedRun) []packedRun {
	if len(runs) < radixMin {
		slices.Sort(runs)
		return nil
	}
	return radixSortFrom(runs, nil, packedCountBits)[:len(runs)]
}

// sortRuns sorts runs by value: radixSort from radixMin runs, else (or with a
// negative value) slices.SortFunc. Runs of equal value may come out in any
// order: stats merges them, and a sum of counts does not depend on its order.
func sortRuns(runs []gapRun) {
	byValue := func(a, b gapRun) int { return cmp.Compare(a.v, b.v) }
	if len(runs) < radixMin {
		slices.SortFunc(runs, byValue)
		return
	}
	for _, r := range runs {
		if r.v < 0 {
			slices.SortFunc(runs, byValue)
			return
		}
	}
	radixSort(runs, nil)
}

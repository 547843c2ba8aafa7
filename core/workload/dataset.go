package workload

import (
	"math/rand/v2"

	"github.com/aisimulate/aisimulate/core/config"
)

// dataset is a drawn config.Dataset, a load generator's prompt dataset (AIPerf
// and genai-perf generate 100 entries by default and reuse them until the
// benchmark ends, so an engine with prefix caching finds a prompt cached): the
// entries' lengths and the sampler's state.
type dataset struct {
	isl, osl []int
	sampling string
	rng      *rand.Rand
	order    []int32 // shuffle: this pass's order of entries
	next     int     // requests taken so far
}

// newDataset draws the entries' lengths, entry by entry, from the synthetic
// source's isl and osl streams (so request i of a sequential dataset with as
// many entries as requests has the lengths it has without a dataset).
func newDataset(d config.Dataset, isl, osl config.Length, islRNG, oslRNG, rng *rand.Rand) *dataset {
	ds := &dataset{isl: make([]int, d.Entries), osl: make([]int, d.Entries), sampling: d.Sampling, rng: rng}
	for k := range ds.isl {
		ds.isl[k] = sampleLength(isl, islRNG)
		ds.osl[k] = sampleLength(osl, oslRNG)
	}
	if d.Sampling == config.SamplingShuffle {
		ds.order = make([]int32, d.Entries)
	}
	return ds
}

// pick returns the entry of the next request.
func (ds *dataset) pick() int {
	n := len(ds.isl)
	i := ds.next
	ds.next++
	switch ds.sampling {
	case config.SamplingRandom:
		return ds.rng.IntN(n)
	case config.SamplingShuffle:
		if i%n == 0 { // a new pass: a permutation of the entries, from the identity
			for k := range ds.order {
				ds.order[k] = int32(k)
			}
			ds.rng.Shuffle(n, func(a, b int) { ds.order[a], ds.order[b] = ds.order[b], ds.order[a] })
		}
		return int(ds.order[i%n])
	case config.SamplingSequential:
		return i % n
	}
	panic("workload: dataset sampling " + ds.sampling + " has no sampler")
}

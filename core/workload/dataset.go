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
	// prefix: the entries' shared prefixes (config.DatasetPrefix); groups 0
	// when none. blocks is the most prefix-sized blocks an entry's prompt
	// spans, which spaces the entries' own block ids.
	groups, prefixTokens int
	blocks               int64
}

// prefixBase is where the entries' own block ids start, above every group's
// id (the dataset's entries and groups are at most config.MaxDatasetEntries).
const prefixBase = int64(1) << 40

// hashIDs are entry e's prompt blocks: without shared prefixes one block of
// the whole prompt (its entry id); with them, blocks of the prefix's length,
// the first its group's (e mod groups) and the rest the entry's own, so two
// entries of a group share exactly the prefix's blocks. The block size is
// returned with them.
func (ds *dataset) hashIDs(e int) ([]int64, int) {
	if ds.groups == 0 {
		return []int64{int64(e)}, ds.isl[e]
	}
	n := (ds.isl[e] + ds.prefixTokens - 1) / ds.prefixTokens
	ids := make([]int64, n)
	ids[0] = int64(e % ds.groups)
	for j := 1; j < n; j++ {
		ids[j] = prefixBase + int64(e)*ds.blocks + int64(j)
	}
	return ids, ds.prefixTokens
}

// newDataset draws the entries' lengths, entry by entry, from the synthetic
// source's isl and osl streams (so request i of a sequential dataset with as
// many entries as requests has the lengths it has without a dataset).
func newDataset(d config.Dataset, isl, osl config.Length, islRNG, oslRNG, rng *rand.Rand) *dataset {
	ds := &dataset{isl: make([]int, d.Entries), osl: make([]int, d.Entries), sampling: d.Sampling, rng: rng}
	prefix := 0
	if p := d.Prefix; p != nil {
		ds.groups, ds.prefixTokens, prefix = p.Groups, p.Tokens, p.Tokens
	}
	for k := range ds.isl {
		ds.isl[k] = prefix + sampleLength(isl, islRNG) // the prompt follows its group's prefix
		ds.osl[k] = sampleLength(osl, oslRNG)
		if ds.groups > 0 {
			ds.blocks = max(ds.blocks, int64((ds.isl[k]+prefix-1)/prefix))
		}
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

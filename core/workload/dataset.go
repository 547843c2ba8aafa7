package workload

import (
	"fmt"
	"math/rand/v2"
)

// Sampling strategies of a synthetic dataset: how a load generator picks the
// dataset entry of its next request (AIPerf's --dataset-sampling-strategy).
const (
	// SamplingSequential takes entries 0, 1, …, N−1, then starts again.
	SamplingSequential = "sequential"
	// SamplingRandom draws an entry uniformly, with replacement.
	SamplingRandom = "random"
	// SamplingShuffle takes the entries in a random order without
	// replacement, reshuffling after each pass (AIPerf's choice for
	// synthetic data).
	SamplingShuffle = "shuffle"
)

// MaxDatasetEntries bounds DatasetSpec.Entries: the entries' lengths are held
// in memory (16 bytes each, plus 4 for shuffle's order), so a million entries
// cost at most 20 MB. Load generators use tens to thousands.
const MaxDatasetEntries = 1_000_000

// DatasetSpec is a load generator's prompt dataset: Entries distinct prompts,
// each with its own length, that the requests reuse in the order Sampling
// says. AIPerf and genai-perf generate 100 entries by default
// (--num-dataset-entries) and reuse them until the benchmark ends, so a
// prompt is sent again and an engine with prefix caching finds it cached.
// The zero value means no dataset: every request has a prompt of its own.
type DatasetSpec struct {
	Entries  int    // distinct prompts, 1…MaxDatasetEntries; 0 = no dataset
	Sampling string // SamplingSequential, SamplingRandom or SamplingShuffle
}

// Validate checks d; the zero value is valid (no dataset). Errors name the
// field: "entries: must be in [1, 1000000], got 0".
func (d DatasetSpec) Validate() error {
	if d == (DatasetSpec{}) {
		return nil
	}
	if d.Entries < 1 || d.Entries > MaxDatasetEntries {
		return fmt.Errorf("entries: must be in [1, %d], got %d", MaxDatasetEntries, d.Entries)
	}
	switch d.Sampling {
	case SamplingSequential, SamplingRandom, SamplingShuffle:
		return nil
	case "":
		return fmt.Errorf("sampling: missing (want %s, %s or %s)", SamplingSequential, SamplingRandom, SamplingShuffle)
	}
	return fmt.Errorf("sampling: unknown %q (want %s, %s or %s)", d.Sampling, SamplingSequential, SamplingRandom, SamplingShuffle)
}

// dataset is a drawn DatasetSpec: the entries' lengths and the sampler's state.
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
func newDataset(d DatasetSpec, isl, osl Dist, islRNG, oslRNG, rng *rand.Rand) *dataset {
	ds := &dataset{isl: make([]int, d.Entries), osl: make([]int, d.Entries), sampling: d.Sampling, rng: rng}
	for k := range ds.isl {
		ds.isl[k] = isl.Sample(islRNG)
		ds.osl[k] = osl.Sample(oslRNG)
	}
	if d.Sampling == SamplingShuffle {
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
	case SamplingRandom:
		return ds.rng.IntN(n)
	case SamplingShuffle:
		if i%n == 0 { // a new pass: a permutation of the entries, from the identity
			for k := range ds.order {
				ds.order[k] = int32(k)
			}
			ds.rng.Shuffle(n, func(a, b int) { ds.order[a], ds.order[b] = ds.order[b], ds.order[a] })
		}
		return int(ds.order[i%n])
	}
	return i % n
}

package replay

import (
	"math/bits"

	"github.com/aisimulate/aisimulate/core/hashtab"
)

// blockIndex is a router's map of which targets (workers, or their ranks)
// hold which blocks: for each block hash, the set of targets holding it,
// each with a count of holds (a KV event's block is held once; an active
// request's block as many times as requests hold it). It is the shape of
// Dynamo's radix-tree indexer and its active-sequence tracker
// (lib/kv-router): a prefix is known by the chained hash of its last block
// (workload.BlockHashes), so a map of block hashes is the tree.
//
// Memory: one table entry (hash → slot, hashtab: a Go map's lookups were the
// router's whole cost) and words × 8 + targets × 4 bytes a block held
// anywhere (blockIndexBytes).
type blockIndex struct {
	targets, words int
	slot           *hashtab.Table
	sets           []uint64 // slot·words …: the targets holding the block
	counts         []int32  // slot·targets …: holds per target
	free           []int32  // unused slots
	size           []int    // per target: distinct blocks held
	// scratch of depths: the still-matching set and the dropped targets
	mask []uint64
}

func newBlockIndex(targets int) *blockIndex {
	w := (targets + 63) / 64
	return &blockIndex{targets: targets, words: w, slot: hashtab.New(), size: make([]int, targets), mask: make([]uint64, w)}
}

// blockIndexBytes is the memory of one block held in an index of targets.
func blockIndexBytes(targets int) int64 {
	return 2*hashtab.SlotBytes + 8*int64((targets+63)/64) + 4*int64(targets)
}

// add records one more hold of block h by target t.
func (x *blockIndex) add(h uint64, t int) {
	s, _ := x.slot.GetOrPut(h, func() int32 {
		if n := len(x.free); n > 0 {
			s := x.free[n-1]
			x.free = x.free[:n-1]
			return s
		}
		x.sets = append(x.sets, make([]uint64, x.words)...)
		x.counts = append(x.counts, make([]int32, x.targets)...)
		return int32(len(x.sets)/x.words - 1)
	})
	c := &x.counts[int(s)*x.targets+t]
	if *c++; *c == 1 {
		x.sets[int(s)*x.words+t/64] |= 1 << (t % 64)
		x.size[t]++
	}
}

// remove drops one hold of block h by target t (none held: nothing).
func (x *blockIndex) remove(h uint64, t int) {
	s, ok := x.slot.Get(h)
	if !ok {
		return
	}
	c := &x.counts[int(s)*x.targets+t]
	if *c == 0 {
		return
	}
	if *c--; *c > 0 {
		return
	}
	set := x.sets[int(s)*x.words : int(s+1)*x.words]
	set[t/64] &^= 1 << (t % 64)
	x.size[t]--
	for _, w := range set {
		if w != 0 {
			return
		}
	}
	x.slot.Del(h)
	x.free = append(x.free, s)
}

// depths writes into d[t] (len targets) how many leading blocks of hs target
// t holds, each and every one from the first (a prefix match: Dynamo's
// overlap score, its blocks matched from the root). The walk stops when no
// target holds the next block.
func (x *blockIndex) depths(hs []uint64, d []int) {
	clear(d)
	mask := x.mask
	for w := range mask {
		mask[w] = ^uint64(0)
	}
	if r := x.targets % 64; r != 0 {
		mask[len(mask)-1] = 1<<r - 1
	}
	j := 0
	for ; j < len(hs); j++ {
		s, ok := x.slot.Get(hs[j])
		var set []uint64
		if ok {
			set = x.sets[int(s)*x.words : int(s+1)*x.words]
		}
		alive := false
		for w := range mask {
			keep := uint64(0)
			if ok {
				keep = mask[w] & set[w]
			}
			for drop := mask[w] &^ keep; drop != 0; drop &= drop - 1 { // these matched blocks 0 … j−1
				d[w*64+bits.TrailingZeros64(drop)] = j
			}
			mask[w] = keep
			alive = alive || keep != 0
		}
		if !alive {
			return
		}
	}
	for w, m := range mask {
		for ; m != 0; m &= m - 1 {
			d[w*64+bits.TrailingZeros64(m)] = j
		}
	}
}

// longest returns the length of the longest prefix of hs that some target
// holds in full and writes the set of the targets that hold it into set
// (len words; every target when none holds the first block): the vLLM
// production stack's HashTrie.longest_prefix_match.
func (x *blockIndex) longest(hs []uint64, set []uint64) int {
	for w := range set {
		set[w] = ^uint64(0)
	}
	if r := x.targets % 64; r != 0 {
		set[len(set)-1] = 1<<r - 1
	}
	for j, h := range hs {
		s, ok := x.slot.Get(h)
		if !ok {
			return j
		}
		held := x.sets[int(s)*x.words : int(s+1)*x.words]
		any := false
		for w := range set {
			any = any || set[w]&held[w] != 0
		}
		if !any {
			return j
		}
		for w := range set {
			set[w] &= held[w]
		}
	}
	return len(hs)
}

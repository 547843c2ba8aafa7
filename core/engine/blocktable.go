package engine

// blockTable maps a prefix hash to the KV block that holds it: an open-addressing
// hash table with linear probing and backward-shift deletion.
//
// Why not a Go map: a replay of a long-prompt trace registers and evicts a block
// per 16 prompt tokens, millions of map assignments and deletes that dominated
// the profile. The keys are already well-mixed 64-bit hashes (workload's
// combine/mix64), so the low bits index the table directly; the load stays ≤ 1/2
// (the table doubles past it, and never holds more entries than the worker has
// blocks); deletion shifts the probe chain back, so no tombstones accumulate.
type blockTable struct {
	keys []uint64
	vals []int32 // block id, or blockNone for an empty slot
	mask uint64
	n    int
}

func newBlockTable() *blockTable { return makeBlockTable(1024) }

func makeBlockTable(slots int) *blockTable {
	t := &blockTable{keys: make([]uint64, slots), vals: make([]int32, slots), mask: uint64(slots - 1)}
	for i := range t.vals {
		t.vals[i] = blockNone
	}
	return t
}

// grow doubles the table and re-inserts every entry.
func (t *blockTable) grow() {
	bigger := makeBlockTable(2 * len(t.keys))
	for i, v := range t.vals {
		if v != blockNone {
			bigger.put(t.keys[i], v)
		}
	}
	*t = *bigger
}

func (t *blockTable) get(h uint64) (int32, bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		v := t.vals[i]
		if v == blockNone {
			return blockNone, false
		}
		if t.keys[i] == h {
			return v, true
		}
	}
}

// put stores h → id unless h is present; it reports whether it stored.
func (t *blockTable) put(h uint64, id int32) bool {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if t.vals[i] == blockNone {
			t.keys[i], t.vals[i] = h, id
			t.n++
			return true
		}
		if t.keys[i] == h {
			return false
		}
	}
}

// del removes h, which must be present.
func (t *blockTable) del(h uint64) {
	i := h & t.mask
	for t.keys[i] != h || t.vals[i] == blockNone {
		i = (i + 1) & t.mask
	}
	// Backward shift: move later entries of the probe chain into the hole when
	// their home slot is at or before it (cyclically).
	for j := (i + 1) & t.mask; t.vals[j] != blockNone; j = (j + 1) & t.mask {
		home := t.keys[j] & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.vals[i] = blockNone
	t.n--
}

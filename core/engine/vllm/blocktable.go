package vllm

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
	// key and block id side by side: a probe touches one cache line, not two
	// (the table is larger than the cache, so every probe is a miss).
	slots []tableSlot
	mask  uint64
	n     int
}

type tableSlot struct {
	key uint64
	val int32 // block id, or blockNone for an empty slot
}

func newBlockTable() *blockTable { return makeBlockTable(1024) }

func makeBlockTable(slots int) *blockTable {
	t := &blockTable{slots: make([]tableSlot, slots), mask: uint64(slots - 1)}
	for i := range t.slots {
		t.slots[i].val = blockNone
	}
	return t
}

// grow doubles the table and re-inserts every entry.
func (t *blockTable) grow() {
	bigger := makeBlockTable(2 * len(t.slots))
	for _, e := range t.slots {
		if e.val != blockNone {
			bigger.put(e.key, e.val)
		}
	}
	*t = *bigger
}

func (t *blockTable) get(h uint64) (int32, bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.val == blockNone {
			return blockNone, false
		}
		if e.key == h {
			return e.val, true
		}
	}
}

// getOrPut returns the value of h, or, when h is absent, stores h → newVal()
// and returns that (added true): one probe for both, where get then put
// probe twice for a new key.
func (t *blockTable) getOrPut(h uint64, newVal func() int32) (val int32, added bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.val == blockNone {
			if 2*(t.n+1) > len(t.slots) { // full enough: grow, then insert as put does
				val = newVal()
				t.put(h, val)
				return val, true
			}
			val = newVal()
			*e = tableSlot{h, val}
			t.n++
			return val, true
		}
		if e.key == h {
			return e.val, false
		}
	}
}

// put stores h → id unless h is present; it reports whether it stored.
func (t *blockTable) put(h uint64, id int32) bool {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.val == blockNone {
			*e = tableSlot{h, id}
			t.n++
			return true
		}
		if e.key == h {
			return false
		}
	}
}

// del removes h, which must be present.
func (t *blockTable) del(h uint64) {
	i := h & t.mask
	for t.slots[i].key != h || t.slots[i].val == blockNone {
		i = (i + 1) & t.mask
	}
	// Backward shift: move later entries of the probe chain into the hole when
	// their home slot is at or before it (cyclically).
	for j := (i + 1) & t.mask; t.slots[j].val != blockNone; j = (j + 1) & t.mask {
		home := t.slots[j].key & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i].val = blockNone
	t.n--
}

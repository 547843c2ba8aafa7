// Package hashtab is a map from well-mixed 64-bit hashes to int32 values, for the
// hot paths that look prefix hashes up by the million (the engine's prefix cache,
// a KV-aware router's index of the workers' caches).
package hashtab

import "unsafe"

// Table maps a prefix hash to an int32 (a KV block, a prefix group, a slot of
// a router's index): an open-addressing hash table with linear probing and
// backward-shift deletion. Values are ≥ 0 (a negative value marks an empty
// slot).
//
// Why not a Go map: a replay of a long-prompt trace registers and evicts a block
// per 16 prompt tokens, millions of map assignments and deletes that dominated
// the profile. The keys are already well-mixed 64-bit hashes (workload's
// combine/mix64), so the low bits index the table directly; the load stays ≤ 1/2
// (the table doubles past it); deletion shifts the probe chain back, so no
// tombstones accumulate.
type Table struct {
	// key and block id side by side: a probe touches one cache line, not two
	// (the table is larger than the cache, so every probe is a miss).
	slots []tableSlot
	mask  uint64
	n     int
}

type tableSlot struct {
	key uint64
	val int32 // the value, or none for an empty slot
}

// none marks an empty slot.
const none = -1

// SlotBytes is the memory of one slot (a table holds at least two a key).
const SlotBytes = int64(unsafe.Sizeof(tableSlot{}))

// New returns an empty table.
func New() *Table { return Make(1024) }

// Make returns an empty table of slots slots (a power of two ≥ 2).
func Make(slots int) *Table {
	t := &Table{slots: make([]tableSlot, slots), mask: uint64(slots - 1)}
	for i := range t.slots {
		t.slots[i].val = none
	}
	return t
}

// Len is the number of keys held.
func (t *Table) Len() int { return t.n }

// grow doubles the table and re-inserts every entry.
func (t *Table) grow() {
	bigger := Make(2 * len(t.slots))
	for _, e := range t.slots {
		if e.val != none {
			bigger.Put(e.key, e.val)
		}
	}
	*t = *bigger
}

// Get returns the value of h and whether h is held.
func (t *Table) Get(h uint64) (int32, bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.val == none {
			return none, false
		}
		if e.key == h {
			return e.val, true
		}
	}
}

// GetOrPut returns the value of h, or, when h is absent, stores h → newVal()
// and returns that (added true): one probe for both, where get then put
// probe twice for a new key.
func (t *Table) GetOrPut(h uint64, newVal func() int32) (val int32, added bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.val == none {
			if 2*(t.n+1) > len(t.slots) { // full enough: grow, then insert as put does
				val = newVal()
				t.Put(h, val)
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

// Put stores h → id unless h is present; it reports whether it stored.
func (t *Table) Put(h uint64, id int32) bool {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.val == none {
			*e = tableSlot{h, id}
			t.n++
			return true
		}
		if e.key == h {
			return false
		}
	}
}

// Del removes h, which must be present.
func (t *Table) Del(h uint64) {
	i := h & t.mask
	for t.slots[i].key != h || t.slots[i].val == none {
		i = (i + 1) & t.mask
	}
	// Backward shift: move later entries of the probe chain into the hole when
	// their home slot is at or before it (cyclically).
	for j := (i + 1) & t.mask; t.slots[j].val != none; j = (j + 1) & t.mask {
		home := t.slots[j].key & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i].val = none
	t.n--
}

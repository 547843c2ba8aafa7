package vllm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/engine"
)

// Blocks never used are taken first; then every released block, cached or not,
// waits in one queue in release order (vLLM v1's free block queue), and
// taking its head evicts whatever content it held. A request's blocks are
// released last block first, so its tail leaves the cache before its head.
func TestKVManagerEvictsLRU(t *testing.T) {
	m := newKVManager(4, true)
	a := []int32{m.take(), m.take()} // blocks 0, 1
	registerOne(m, a[0], 100, 100, 0)
	registerOne(m, a[1], 101, 101, 0)
	b := []int32{m.take()} // block 2, no hash
	assert.Equal(t, []int32{0, 1}, a)
	m.release(a, 2)                   // released 1 then 0: queue 1, 0
	m.release(b, 0)                   // queue 1, 0, 2
	assert.Equal(t, 4, m.available()) // 3 queued + block 3 never used
	assert.Equal(t, 3, m.lruLen)
	assert.Equal(t, 2, m.idleHit) // blocks 1 and 0 hold content

	hits, idle := m.lookup([]uint64{100, 101, 102}, []uint64{100, 101, 102}, 3)
	assert.Equal(t, 2, hits)
	assert.Equal(t, 2, idle)

	assert.Equal(t, int32(3), m.take()) // never used: first
	assert.Equal(t, int32(1), m.take()) // the queue head: block 1, hash 101 dropped
	hits, _ = m.lookup([]uint64{100, 101}, []uint64{100, 101}, 2)
	assert.Equal(t, 1, hits)
	assert.Equal(t, int32(0), m.take()) // block 0, hash 100 dropped
	assert.Equal(t, int32(2), m.take()) // block 2 had no content: not an eviction
	assert.Equal(t, int64(2), m.stats.Evicted)
	assert.Equal(t, 0, m.idleHit)
}

// A private block is found only through its owner's saved list and only while
// it still holds the owner's content at that position.
func TestKVManagerPrivateBlocks(t *testing.T) {
	m := newKVManager(3, true)
	ids := []int32{m.take(), m.take(), m.take()}
	for j, id := range ids {
		m.registerPrivate(id, 7, j)
	}
	m.release(ids, 0) // queue 2, 1, 0
	assert.Equal(t, 3, m.idleHit)
	assert.Equal(t, 3, m.lookupSaved(ids, 7, 0, 3))
	m.hits = m.hits[:0]
	assert.Equal(t, 0, m.lookupSaved(ids, 8, 0, 3), "another serial never matches")
	assert.Equal(t, 2, m.lookupSaved(ids, 7, 0, 2), "the limit caps the hit")
	m.hits = m.hits[:0]
	assert.Equal(t, int32(2), m.take()) // evicts position 2
	assert.Equal(t, 2, m.lookupSaved(ids, 7, 0, 3))
	m.hits = m.hits[:0]
	// the evicted block reused by the same request at another position does
	// not count for the old one
	m.registerPrivate(2, 7, 0)
	m.release([]int32{2}, 0)
	assert.Equal(t, 2, m.lookupSaved(ids, 7, 0, 3))
	assert.Equal(t, int64(1), m.stats.Evicted)
}

// Touching a cached block takes it off the LRU list; a second holder keeps it
// referenced until both let go (INV-2 counters balance).
func TestKVManagerSharedBlockRefcount(t *testing.T) {
	m := newKVManager(2, true)
	id := m.take()
	registerOne(m, id, 7, 7, 0)
	m.release([]int32{id}, 1)
	m.lookup([]uint64{7}, []uint64{7}, 1)
	got := m.touch(1, nil)
	m.lookup([]uint64{7}, []uint64{7}, 1)
	got = append(got, m.touch(1, nil)...)
	assert.Equal(t, []int32{id, id}, got)
	assert.Equal(t, int32(2), m.blocks[id].ref)
	assert.Equal(t, 0, m.lruLen)
	m.release([]int32{id}, 1)
	assert.Equal(t, 0, m.lruLen)
	m.release([]int32{id}, 1)
	assert.Equal(t, 1, m.lruLen)
	st := m.stats
	assert.Equal(t, st.Released, st.Allocated+st.Reused)
}

// A duplicate registration keeps the first block under the hash.
func TestKVManagerDuplicateHashKeepsFirst(t *testing.T) {
	m := newKVManager(2, true)
	a, b := m.take(), m.take()
	registerOne(m, a, 5, 5, 0)
	registerOne(m, b, 5, 5, 0)
	m.release([]int32{a, b}, 2)
	assert.Equal(t, 1, m.idleHit) // b had no hash: queued without content
	hits, _ := m.lookup([]uint64{5}, []uint64{5}, 1)
	require.Equal(t, 1, hits)
	assert.Equal(t, []int32{a}, m.hits)
}

func TestDequeFrontAndBack(t *testing.T) {
	var d deque
	rs := make([]*Request, 40)
	for i := range rs {
		rs[i] = own(newRequest(int64(i), 0, 0))
		d.PushBack(rs[i])
	}
	d.PushFront(own(newRequest(-1, 0, 0)))
	assert.Equal(t, int64(-1), d.PopFront().ID)
	for i := range rs {
		assert.Equal(t, int64(i), d.PopFront().ID)
	}
	assert.Equal(t, 0, d.Len())
}

// Blocks of one prefix group share a table entry: evicting one block empties
// its slot and keeps the group; evicting the last one drops the group, whose
// index is reused.
func TestKVManagerPrefixGroups(t *testing.T) {
	m := newKVManager(3, true)
	a, b := m.take(), m.take()
	registerOne(m, a, 11, 900, 0)
	registerOne(m, b, 12, 900, 1)
	require.Len(t, m.groups, 1)
	m.release([]int32{a, b}, 2) // LRU order: b, a
	hits, idle := m.lookup([]uint64{11, 12}, []uint64{900, 900}, 2)
	assert.Equal(t, 2, hits)
	assert.Equal(t, 2, idle)

	assert.Equal(t, int32(2), m.take()) // a never-used block first
	assert.Equal(t, b, m.take())        // then the LRU head: b leaves the group
	hits, _ = m.lookup([]uint64{11, 12}, []uint64{900, 900}, 2)
	assert.Equal(t, 1, hits, "a is still cached")
	_, ok := m.cache.Get(900)
	assert.True(t, ok)
	assert.Equal(t, a, m.take()) // the group is empty now
	_, ok = m.cache.Get(900)
	assert.False(t, ok)
	assert.Equal(t, []int32{0}, m.freeGrp)
	// a wrong hash in an occupied slot is a miss, not a hit
	registerOne(m, a, 21, 901, 0)
	hits, _ = m.lookup([]uint64{99}, []uint64{901}, 1)
	assert.Equal(t, 0, hits)
}

// register takes a run of blocks over several groups: each block lands in
// its group's slot unless the slot is held (the first block to fill it
// stays), and a group emptied and refilled is found again by its key.
func TestKVManagerRegisterRun(t *testing.T) {
	m := newKVManager(6, true)
	first := m.take()
	registerOne(m, first, 30, 700, 1) // another request filled slot 1 of group 700 first
	ids := m.takeN(4, nil)
	m.register(ids, []uint64{20, 30, 40, 50}, []uint64{700, 700, 800, 800}, 0)
	require.Len(t, m.groups, 2)
	assert.Equal(t, [2]int32{ids[0], first}, [2]int32(m.groups[0].ids[:2]))
	assert.Equal(t, [2]int32{ids[2], ids[3]}, [2]int32(m.groups[1].ids[:2]))
	assert.False(t, m.hashed(ids[1]), "its slot was held: it stays unhashed")
	assert.Equal(t, int32(2), m.groups[0].n)
	assert.Equal(t, int32(2), m.groups[1].n)
	hits, _ := m.lookup([]uint64{20, 30}, []uint64{700, 700}, 2)
	assert.Equal(t, 2, hits)
	hits, _ = m.lookup([]uint64{40, 50}, []uint64{800, 800}, 2)
	assert.Equal(t, 2, hits)
}

// registerOne registers one block in slot off of group key (kvManager.register
// of a run of one: the block is the last of off+1 blocks of that key).
func registerOne(m *kvManager, id int32, hash, key uint64, off uint8) {
	keys, hashes := make([]uint64, off+1), make([]uint64, off+1)
	for i := range keys {
		keys[i] = key
	}
	hashes[off] = hash
	m.register([]int32{id}, hashes, keys, int(off))
}

// slotOf numbers each block within its run of equal group keys, starting
// again after groupSize blocks (a run longer than a group is several groups).
func TestSlotOf(t *testing.T) {
	keys := []uint64{5, 5, 5, 7, 5}
	for range 34 {
		keys = append(keys, 9)
	}
	want := []int{0, 1, 2, 0, 0}
	for i := range 34 {
		want = append(want, i%32)
	}
	var got []int
	for j := range keys {
		got = append(got, slotOf(keys, j))
	}
	assert.Equal(t, want, got)
	r := &Request{Request: engine.Request{Hashes: []uint64{1, 2, 3}}} // no groups: each block its own
	r.prefixKeys()
	assert.Equal(t, []uint64{1, 2, 3}, r.Groups)
}

// register and lookup number the slots alike, also past a group's 32 slots
// in a run of one key: the 34 blocks of key 9 fill slots 0…31 of its group,
// the last two land on slots 0 and 1 again, held, and stay unhashed.
func TestKVManagerRegisterLongRun(t *testing.T) {
	m := newKVManager(40, true)
	keys, hashes := make([]uint64, 34), make([]uint64, 34)
	for j := range keys {
		keys[j], hashes[j] = 9, uint64(100+j)
	}
	ids := m.takeN(34, nil)
	m.register(ids[:20], hashes, keys, 0)
	m.register(ids[20:], hashes, keys, 20) // from the middle of the run
	require.Len(t, m.groups, 1)
	assert.Equal(t, int32(32), m.groups[0].n)
	assert.True(t, m.hashed(ids[31]))
	assert.False(t, m.hashed(ids[32]), "slot 0 is held by block 0")
	hits, _ := m.lookup(hashes, keys, 34)
	assert.Equal(t, 32, hits, "block 32's slot 0 holds block 0's hash, not its own")
}

// hashed reports whether block id holds content a lookup can find (whether
// or not its holder registered it: kvBlock).
func (m *kvManager) hashed(id int32) bool {
	b := &m.blocks[id]
	if gi := b.group; gi >= 0 {
		g := &m.groups[gi]
		return g.n > 0 && g.ids[b.off&(groupSize-1)] == id
	}
	return b.group == groupPrivate
}

// popIDs takes the first len(ids) blocks of the queue's head, skipping holes,
// four at a time where no hole is among them: against the entry-by-entry
// walk, on heads with holes at every place a quad can have them.
func TestPopIDsSkipsHoles(t *testing.T) {
	hole := qEntry{blockNone, blockNone}
	for mask := 0; mask < 1<<10; mask++ { // entry i of 10 is a hole when bit i is set
		head := make([]qEntry, 10)
		var live []int32
		for i := range head {
			if mask&(1<<i) != 0 {
				head[i] = hole
				continue
			}
			head[i] = qEntry{int32(100 + i), 3}
			live = append(live, int32(100+i))
		}
		for n := 1; n <= len(live); n++ {
			ids := make([]int32, n)
			k := popIDs(head, ids)
			require.Equal(t, live[:n], ids, "mask %b, %d ids", mask, n)
			// the entries taken end at the n-th block: holes after it stay
			want := 0
			for seen := 0; seen < n; want++ {
				if head[want].id != blockNone {
					seen++
				}
			}
			require.Equal(t, want, k, "mask %b, %d ids", mask, n)
		}
	}
}

// runOf counts the leading entries of one group, four at a time and then one
// by one: a run of every length up to 9 before another group.
func TestRunOfCountsTheLeadingGroup(t *testing.T) {
	for n := 0; n <= 9; n++ {
		head := make([]qEntry, 0, 12)
		for i := 0; i < n; i++ {
			head = append(head, qEntry{int32(i), 7})
		}
		assert.Equal(t, n, runOf(head, 7), "a run of %d, alone", n)
		head = append(head, qEntry{50, 8}, qEntry{51, 7})
		assert.Equal(t, n, runOf(head, 7), "a run of %d, then another group", n)
	}
}

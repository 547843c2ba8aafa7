package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A block released by its last holder goes to the free pool when it has no
// hash and to the LRU list when it is cached; allocation prefers free blocks and
// evicts the least recently released cached block last-block-first.
func TestKVManagerEvictsLRU(t *testing.T) {
	m := newKVManager(4, true)
	a := []int32{m.take(), m.take()} // blocks 0, 1
	m.register(a[0], 100)
	m.register(a[1], 101)
	b := []int32{m.take()} // block 2, no hash
	assert.Equal(t, []int32{0, 1}, a)
	m.release(a) // released 1 then 0: LRU order 1, 0
	m.release(b) // block 2 → free pool
	assert.Equal(t, 4, m.available())
	assert.Equal(t, 2, m.lruLen)

	hits, idle := m.lookup([]uint64{100, 101, 102}, 3)
	assert.Equal(t, 2, hits)
	assert.Equal(t, 2, idle)

	assert.Equal(t, int32(2), m.take()) // the free pool first (stack top: 2)
	assert.Equal(t, int32(3), m.take())
	assert.Equal(t, int32(1), m.take()) // then the LRU head: block 1, hash 101 dropped
	hits, _ = m.lookup([]uint64{100, 101}, 2)
	assert.Equal(t, 1, hits)
	assert.Equal(t, int64(1), m.stats.Evicted)
}

// Touching a cached block takes it off the LRU list; a second holder keeps it
// referenced until both let go (INV-2 counters balance).
func TestKVManagerSharedBlockRefcount(t *testing.T) {
	m := newKVManager(2, true)
	id := m.take()
	m.register(id, 7)
	m.release([]int32{id})
	got := m.touch([]uint64{7}, 1, nil)
	got = append(got, m.touch([]uint64{7}, 1, nil)...)
	assert.Equal(t, []int32{id, id}, got)
	assert.Equal(t, int32(2), m.blocks[id].ref)
	assert.Equal(t, 0, m.lruLen)
	m.release([]int32{id})
	assert.Equal(t, 0, m.lruLen)
	m.release([]int32{id})
	assert.Equal(t, 1, m.lruLen)
	st := m.stats
	assert.Equal(t, st.Released, st.Allocated+st.Reused)
}

// A duplicate registration keeps the first block under the hash.
func TestKVManagerDuplicateHashKeepsFirst(t *testing.T) {
	m := newKVManager(2, true)
	a, b := m.take(), m.take()
	m.register(a, 5)
	m.register(b, 5)
	m.release([]int32{a, b})
	assert.Equal(t, 1, m.lruLen) // b had no hash: free
	hits, _ := m.lookup([]uint64{5}, 1)
	require.Equal(t, 1, hits)
	assert.Equal(t, a, m.cache[5])
}

func TestDequeFrontAndBack(t *testing.T) {
	var d deque
	rs := make([]*Request, 40)
	for i := range rs {
		rs[i] = &Request{ID: int64(i)}
		d.PushBack(rs[i])
	}
	d.PushFront(&Request{ID: -1})
	assert.Equal(t, int64(-1), d.PopFront().ID)
	for i := range rs {
		assert.Equal(t, int64(i), d.PopFront().ID)
	}
	assert.Equal(t, 0, d.Len())
}

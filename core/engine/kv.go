package engine

// blockNone marks an empty link in the LRU list.
const blockNone = -1

// kvBlock is one KV block of BlockSize tokens.
type kvBlock struct {
	ref    int32  // requests holding the block
	hashed bool   // registered in the prefix cache under hash
	hash   uint64 // valid when hashed
	prev   int32  // LRU links, valid while ref == 0 && hashed
	next   int32
}

// KVStats counts block transitions; at the end of a replay (no request holding
// a block) Allocated + Reused = Released (INV-2), and Free + Cached = Capacity.
type KVStats struct {
	// Allocated counts blocks taken from the free pool or evicted from the cache.
	Allocated int64
	// Reused counts prefix-cache hits that took an unreferenced cached block.
	Reused int64
	// Released counts blocks whose last holder let go (to the free pool or the cache).
	Released int64
	// Evicted counts cached blocks dropped to serve an allocation.
	Evicted int64
}

// kvManager is the block manager of one worker. Unreferenced blocks are either
// free (no content worth keeping) or cached (registered under a prefix hash, kept
// in an LRU list and evicted oldest first when the free pool is empty).
type kvManager struct {
	// blocks grows as blocks are first used: a block id ≥ len(blocks) has never
	// held content, so capacity costs memory only once it is touched.
	blocks  []kvBlock
	total   int     // capacity in blocks
	free    []int32 // stack of released, uncached block ids
	lruHead int32   // oldest unreferenced cached block
	lruTail int32
	lruLen  int
	cache   *blockTable // prefix hash → block (nil when caching is off)
	stats   KVStats
}

func newKVManager(numBlocks int, prefixCaching bool) *kvManager {
	m := &kvManager{total: numBlocks, lruHead: blockNone, lruTail: blockNone}
	if prefixCaching {
		m.cache = newBlockTable()
	}
	return m
}

// available is the number of blocks an allocation can take now.
func (m *kvManager) available() int { return len(m.free) + m.lruLen + m.total - len(m.blocks) }

func (m *kvManager) lruRemove(id int32) {
	b := &m.blocks[id]
	if b.prev == blockNone {
		m.lruHead = b.next
	} else {
		m.blocks[b.prev].next = b.next
	}
	if b.next == blockNone {
		m.lruTail = b.prev
	} else {
		m.blocks[b.next].prev = b.prev
	}
	m.lruLen--
}

func (m *kvManager) lruPush(id int32) {
	b := &m.blocks[id]
	b.prev, b.next = m.lruTail, blockNone
	if m.lruTail == blockNone {
		m.lruHead = id
	} else {
		m.blocks[m.lruTail].next = id
	}
	m.lruTail = id
	m.lruLen++
}

// take returns a block for new content: a free one, else the least recently
// used cached one (dropping its hash). The caller has checked available().
func (m *kvManager) take() int32 {
	var id int32
	if n := len(m.free); n > 0 {
		id = m.free[n-1]
		m.free = m.free[:n-1]
	} else if len(m.blocks) < m.total { // a never-used block
		id = int32(len(m.blocks))
		m.blocks = append(m.blocks, kvBlock{})
	} else {
		id = m.lruHead
		m.lruRemove(id)
		b := &m.blocks[id]
		m.cache.del(b.hash)
		b.hashed = false
		m.stats.Evicted++
	}
	m.blocks[id].ref = 1
	m.stats.Allocated++
	return id
}

// lookup counts how many leading hashes (at most limit) are cached, and how many
// of those blocks are unreferenced (they leave the LRU list when touched).
func (m *kvManager) lookup(hashes []uint64, limit int) (hits, idle int) {
	if m.cache == nil {
		return 0, 0
	}
	for hits < limit && hits < len(hashes) {
		id, ok := m.cache.get(hashes[hits])
		if !ok {
			break
		}
		if m.blocks[id].ref == 0 {
			idle++
		}
		hits++
	}
	return hits, idle
}

// touch takes a reference on the first n cached blocks of the chain and appends
// their ids to dst. The caller has checked them with lookup.
func (m *kvManager) touch(hashes []uint64, n int, dst []int32) []int32 {
	for j := 0; j < n; j++ {
		id, _ := m.cache.get(hashes[j])
		b := &m.blocks[id]
		if b.ref == 0 {
			m.lruRemove(id)
			m.stats.Reused++
		}
		b.ref++
		dst = append(dst, id)
	}
	return dst
}

// register records a fully computed block under its prefix hash, unless another
// block already holds that hash (two requests computed it at once: keep the first).
func (m *kvManager) register(id int32, hash uint64) {
	if m.cache == nil {
		return
	}
	if !m.cache.put(hash, id) {
		return
	}
	b := &m.blocks[id]
	b.hashed, b.hash = true, hash
}

// release drops one reference on each block, last block first, so that the tail
// of a prompt (the least shared part) is evicted before its head, as vLLM does.
func (m *kvManager) release(ids []int32) {
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		b := &m.blocks[id]
		b.ref--
		if b.ref > 0 {
			continue
		}
		m.stats.Released++
		if b.hashed {
			m.lruPush(id)
		} else {
			m.free = append(m.free, id)
		}
	}
}

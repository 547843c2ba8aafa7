package engine

import (
	"slices"
	"unsafe"
)

// blockNone marks no block: an empty slot, a hole in the queue.
const blockNone = -1

// kvBlock is one KV block of BlockSize tokens.
//
// A hashed block holds content a later lookup can find: shared content
// (group ≥ 0: registered in its prefix group under hash) or private content
// (group = blockNone: content only its own request can name, a prompt without
// content ids or generated tokens; hash = privateKey(serial, position) and it
// is found through its owner's saved block list, never through the table).
//
// Only a hashed block can be shared (a lookup finds nothing else), so an
// unhashed block has at most one holder, and its ref is never read: blocks
// are taken from the stack and released by requests that hold no hashed
// block without touching the block array. ref is exact for a hashed block:
// a block is hashed (register, registerPrivate) while its request alone holds
// it, which sets ref to 1.
type kvBlock struct {
	ref    int32  // requests holding the block (exact while hashed)
	hashed bool   // holds findable content (shared or private)
	off    uint8  // its slot in its group, valid when hashed and shared
	hash   uint64 // valid when hashed
	group  int32  // index of its prefix group in kvManager.groups (shared), or blockNone (private)
	qpos   int32  // its index in kvManager.queue, valid while ref == 0 and it is queued
}

// blockGroup is one prefix group (workload.BlockGroups): up to groupSize
// consecutive blocks of a prompt whose content one key fixes. The prefix cache
// indexes groups, not blocks: a replay registers and evicts millions of blocks,
// and with a key per group the hash table sees one insert and one delete per
// group (32 blocks of a 512-token Mooncake id) instead of per block; the blocks
// of a group sit side by side in ids.
type blockGroup struct {
	key uint64
	ids [groupSize]int32 // block holding each slot, or blockNone
	n   int32            // slots in use
}

// groupSize is workload.GroupSize (the engine does not import workload).
const groupSize = 32

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

// PrefixCacheStats counts the prefix-cache lookups of a worker's admissions,
// in tokens, under vLLM v1's names (vllm/v1/metrics/stats.py PrefixCacheStats,
// recorded by KVCacheManager.record_prefix_cache_stats): a request admitted
// for the first time counts in Requests, Queries (its tokens) and Hits (its
// tokens found cached, its CachedTokens); a preempted request admitted again
// counts in the Preempted* fields instead, so that recomputation never
// inflates the first-admission hit rate. Nothing is counted with prefix
// caching off (vLLM skips the lookup).
type PrefixCacheStats struct {
	Requests, Queries, Hits                            int64
	PreemptedRequests, PreemptedQueries, PreemptedHits int64
}

// kvManager is the block manager of one worker.
//
// With prefix caching on it follows vLLM v1's BlockPool
// (vllm/v1/core/block_pool.py, kv_cache_utils.FreeKVCacheBlockQueue): blocks
// never used yet are taken first (vLLM's free queue starts in block id order),
// then every released block, cached or not, waits in one queue in release
// order and the least recently released is taken next, dropping its content
// if it had any (eviction). A request releases its blocks last block first
// (KVCacheManager.free), so a request's tail is evicted before its head.
//
// Only the order of blocks that hold content is observable (which content is
// evicted when); blocks without content are interchangeable. So a released
// block without content that nothing with content precedes (the queue is
// empty) goes to a stack instead, ahead of every queued block, as it would be
// in vLLM's queue; the stack is taken before the never-used blocks (both hold
// nothing) and the queue. A run that never queues content (prefix caching
// off, or no content ids and no preemption) thus never touches the queue.
type kvManager struct {
	// blocks grows as blocks are first used: a block id ≥ len(blocks) has never
	// held content, so capacity costs memory only once it is touched.
	blocks []kvBlock
	total  int     // capacity in blocks
	free   []int32 // released blocks without content, ahead of the whole queue
	// queue[qHead:] is the queue, least recently released first: block ids,
	// or blockNone where a block left from the middle (a prefix-cache hit
	// took it). An array rather than a linked list: taking n blocks reads n
	// consecutive ids instead of chasing n links through the block array.
	queue   []int32
	qHead   int
	lruLen  int         // blocks in the queue
	idleHit int         // of which hashed (cached content nobody holds)
	cache   *blockTable // prefix group key → index in groups (nil when caching is off)
	groups  []blockGroup
	freeGrp []int32 // unused group indices
	hits    []int32 // scratch: blocks found by the last lookup
	stats   KVStats
}

func newKVManager(numBlocks int, prefixCaching bool) *kvManager {
	m := &kvManager{total: numBlocks}
	if prefixCaching {
		m.cache = newBlockTable()
	}
	return m
}

// available is the number of blocks an allocation can take now.
func (m *kvManager) available() int { return len(m.free) + m.lruLen + m.total - len(m.blocks) }

// lruRemove takes block id out of the middle of the queue, leaving a hole.
func (m *kvManager) lruRemove(id int32) {
	b := &m.blocks[id]
	if b.hashed {
		m.idleHit--
	}
	m.queue[b.qpos] = blockNone
	m.lruLen--
}

// compactQueue drops the taken head and the holes from the queue once they
// outnumber its blocks (and a few thousand), so that its array stays within
// about twice the blocks queued; each compaction moves at most half of what
// was pushed since the last, so a push costs O(1) amortised.
func (m *kvManager) compactQueue() {
	if len(m.queue) <= 2*m.lruLen+4096 {
		return
	}
	j := 0
	for _, id := range m.queue[m.qHead:] {
		if id != blockNone {
			m.queue[j] = id
			m.blocks[id].qpos = int32(j)
			j++
		}
	}
	m.queue, m.qHead = m.queue[:j], 0
}

// take returns a block for new content: a released one without content (the
// stack), a never-used one, else the head of the queue (dropping its content,
// if any: an eviction). The caller has checked available().
func (m *kvManager) take() int32 {
	if n := len(m.free); n > 0 { // the common case, as takeN would take it
		id := m.free[n-1]
		m.free = m.free[:n-1]
		m.stats.Allocated++
		return id
	}
	var one [1]int32
	return m.takeN(1, one[:0])[0]
}

// takeN appends n blocks for new content to dst: the blocks n calls of take
// would return, in that order (the stack from its top, never-used blocks in
// id order, then the queue from its head, dropping each one's content, if
// any). The caller has checked available(). One call per request and pass: a
// prompt takes hundreds of blocks at once.
func (m *kvManager) takeN(n int, dst []int32) []int32 {
	if n <= 0 {
		return dst
	}
	m.stats.Allocated += int64(n)
	dst = slices.Grow(dst, n)
	if k := min(n, len(m.free)); k > 0 {
		top := len(m.free)
		for i := 1; i <= k; i++ {
			dst = append(dst, m.free[top-i]) // unhashed: its ref is not read (kvBlock)
		}
		m.free = m.free[:top-k]
		n -= k
	}
	if k := min(n, m.total-len(m.blocks)); k > 0 { // never-used blocks
		if need := len(m.blocks) + k; need > cap(m.blocks) {
			// double: append grows a large slice by 1.25×, so a worker's
			// block array of 10^5 blocks was copied some 30 times as it filled
			grown := make([]kvBlock, len(m.blocks), min(m.total, max(need, 2*cap(m.blocks), 1024)))
			copy(grown, m.blocks)
			m.blocks = grown
		}
		for range k {
			dst = append(dst, int32(len(m.blocks)))
			m.blocks = append(m.blocks, kvBlock{ref: 1})
		}
		n -= k
	}
	if n == 0 {
		return dst
	}
	// the blocks at the queue's head, then their evictions: two short loops
	// whose state fits in registers
	q, i := m.queue, m.qHead
	m.lruLen -= n
	out := len(dst)
	dst = dst[:out+n]
	for j := out; j < len(dst); i++ {
		if id := q[i]; id != blockNone { // else a hole
			dst[j] = id
			j++
		}
	}
	if i == len(q) { // drained: the array is reused from its start
		m.queue, i = q[:0], 0
	}
	m.qHead = i
	m.evict(dst[out:])
	return dst
}

// evict takes the blocks ids from the queue's head for new content: each
// one's content, if any, is dropped (an eviction; its group loses the slot,
// and an emptied group leaves the table).
func (m *kvManager) evict(ids []int32) {
	blocks, groups := m.blocks, m.groups
	evicted := 0
	for _, id := range ids {
		b := &blocks[id]
		b.ref = 1
		if !b.hashed {
			continue
		}
		evicted++
		b.hashed = false
		if gi := b.group; gi != blockNone { // a private block: nothing indexes it
			g := &groups[gi]
			g.ids[b.off&(groupSize-1)] = blockNone
			if g.n--; g.n == 0 {
				m.dropGroup(gi)
			}
		}
	}
	m.idleHit -= evicted
	m.stats.Evicted += int64(evicted)
}

// lookup counts how many leading blocks of a prompt (at most limit) are cached,
// and how many of those are unreferenced (they leave the LRU list when
// touched). hashes, groups and offs describe the prompt's blocks (their hash,
// prefix group key and slot in the group). The blocks found are kept for touch.
func (m *kvManager) lookup(hashes, groups []uint64, offs []uint8, limit int) (hits, idle int) {
	m.hits = m.hits[:0]
	if m.cache == nil {
		return 0, 0
	}
	var g *blockGroup
	for hits < limit && hits < len(hashes) {
		if hits == 0 || groups[hits] != groups[hits-1] {
			gi, ok := m.cache.get(groups[hits])
			if !ok {
				break
			}
			g = &m.groups[gi]
		}
		id := g.ids[offs[hits]]
		if id == blockNone || m.blocks[id].hash != hashes[hits] {
			break
		}
		if m.blocks[id].ref == 0 {
			idle++
		}
		m.hits = append(m.hits, id)
		hits++
	}
	return hits, idle
}

// lookupSaved continues a lookup that found the first `from` blocks of a
// request into the blocks it held before it was preempted (saved, by
// position): block j counts while it still holds the private content the
// request wrote there (privateKey(serial, j)), up to limit blocks in all. The
// blocks found join those of the last lookup, for touch. It returns the blocks
// found here; all are unreferenced (only their owner could hold them).
func (m *kvManager) lookupSaved(saved []int32, serial uint32, from, limit int) int {
	if m.cache == nil {
		return 0
	}
	n := 0
	for j := from; j < limit && j < len(saved); j++ {
		b := &m.blocks[saved[j]]
		if !b.hashed || b.group != blockNone || b.hash != privateKey(serial, j) {
			break
		}
		m.hits = append(m.hits, saved[j])
		n++
	}
	return n
}

// privateKey names the content a request (its worker-unique serial) wrote in
// its block at position j: unique to the request, so no other lookup can
// match it (vLLM hashes such a block from its token ids, chained on the
// previous block; here the content is unknown, only its owner is).
func privateKey(serial uint32, j int) uint64 { return uint64(serial)<<32 | uint64(uint32(j)) }

// registerPrivate records that block id holds private content of request
// serial at position j (a full block nobody else can name).
func (m *kvManager) registerPrivate(id int32, serial uint32, j int) {
	if m.cache == nil {
		return
	}
	b := &m.blocks[id]
	b.ref, b.hashed, b.hash, b.group = 1, true, privateKey(serial, j), blockNone
}

// forgetPrivate drops the private content (serial, j) from block id if it
// still holds it: nobody will look for it again.
func (m *kvManager) forgetPrivate(id int32, serial uint32, j int) {
	b := &m.blocks[id]
	if !b.hashed || b.group != blockNone || b.hash != privateKey(serial, j) {
		return
	}
	if b.ref == 0 { // queued: no longer cached content
		m.idleHit--
	}
	b.hashed = false
}

// touch takes a reference on the first n blocks found by the last lookup and
// appends their ids to dst.
func (m *kvManager) touch(n int, dst []int32) []int32 {
	for _, id := range m.hits[:n] {
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

// register records fully computed blocks under their prefix hashes: block
// ids[j] holds hashes[j] in slot offs[j] of group keys[j], unless another block
// already holds that slot (two requests computed it at once: keep the first; a
// slot only ever holds one content). A run of blocks of one group key looks
// the group up once: registering adds no group but its own, so the group a key
// names does not change during the call.
func (m *kvManager) register(ids []int32, hashes, keys []uint64, offs []uint8) {
	if m.cache == nil {
		return
	}
	hashes, keys, offs = hashes[:len(ids)], keys[:len(ids)], offs[:len(ids)]
	var g *blockGroup
	var gi int32
	for j, id := range ids {
		if key := keys[j]; g == nil || key != g.key {
			gi = m.group(key)
			g = &m.groups[gi]
		}
		off := offs[j] & (groupSize - 1) // a slot: < groupSize
		if g.ids[off] != blockNone {
			continue
		}
		g.ids[off] = id
		g.n++
		b := &m.blocks[id]
		b.ref, b.hashed, b.hash, b.group, b.off = 1, true, hashes[j], gi, off
	}
}

// noBlocks is an empty group's slots.
var noBlocks = func() (a [groupSize]int32) {
	for i := range a {
		a[i] = blockNone
	}
	return a
}()

// group returns the index of the prefix group of key, adding an empty one
// when the table has none.
func (m *kvManager) group(key uint64) int32 {
	gi, _ := m.cache.getOrPut(key, func() int32 {
		var gi int32
		if n := len(m.freeGrp); n > 0 {
			gi = m.freeGrp[n-1]
			m.freeGrp = m.freeGrp[:n-1]
		} else {
			m.groups = append(m.groups, blockGroup{})
			gi = int32(len(m.groups) - 1)
		}
		m.groups[gi] = blockGroup{key: key, ids: noBlocks}
		return gi
	})
	return gi
}

// dropGroup removes an emptied prefix group from the table (the last of its
// blocks was evicted); its index is reused.
func (m *kvManager) dropGroup(gi int32) {
	m.cache.del(m.groups[gi].key)
	m.freeGrp = append(m.freeGrp, gi)
}

// release drops one reference on each block, last block first, so that the tail
// of a request (the least shared part) is evicted before its head, as vLLM does.
// A block nobody holds any more joins the queue's tail, or the stack when it
// holds no content and the queue is empty.
func (m *kvManager) release(ids []int32) {
	// the queue and the stack grown once for every block, written by index
	blocks, lru0 := m.blocks, m.lruLen
	queue := slices.Grow(m.queue, len(ids))
	free := m.free
	if lru0 == 0 {
		free = slices.Grow(free, len(ids))
	}
	qn, fn := len(queue), len(free)
	queue, free = queue[:cap(queue)], free[:cap(free)]
	released := 0
	hashed := 0
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		b := &blocks[id]
		if b.hashed { // else its one holder lets go (kvBlock)
			if b.ref--; b.ref > 0 {
				continue
			}
			hashed++
		} else if lru0 == 0 && qn == len(m.queue) { // nothing queued: the stack
			released++
			free[fn] = id
			fn++
			continue
		}
		released++
		b.qpos = int32(qn)
		queue[qn] = id
		qn++
	}
	m.lruLen += qn - len(m.queue)
	m.queue, m.free = queue[:qn], free[:fn]
	m.stats.Released += int64(released)
	m.idleHit += hashed
	m.compactQueue()
}

// releaseOwn is release for blocks that only their request holds and that
// hold no findable content (none hashed: a request with no prefix-cache hit,
// no registered block and no named private content): each one's last holder
// lets go. With the queue empty they go on the stack, last block first, as
// release would put them, without touching the block array (a released
// request's blocks were each a cache miss there: a fifth of a large closed
// loop's time). Their ref is left as it was: an unhashed block's ref is never
// read (kvBlock).
func (m *kvManager) releaseOwn(ids []int32) {
	if m.lruLen != 0 {
		m.release(ids)
		return
	}
	m.stats.Released += int64(len(ids))
	m.free = slices.Grow(m.free, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		m.free = append(m.free, ids[i])
	}
}

// BytesPerBlock is the simulator's memory for one KV block the cache has
// touched (its state, its queue entry with room for as many holes, its share
// of the prefix table at half load and of its prefix group), bytes: what a
// replay's memory estimate charges per block.
// Blocks are materialised on first use, so a worker costs this for the
// blocks it has used, never for its whole capacity.
const BytesPerBlock = int64(unsafe.Sizeof(kvBlock{})) + 2*4 + 2*int64(unsafe.Sizeof(tableSlot{})) +
	int64(unsafe.Sizeof(blockGroup{}))/groupSize

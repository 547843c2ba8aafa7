package vllm

import (
	"slices"
	"unsafe"

	"github.com/aisimulate/aisimulate/core/hashtab"
)

// blockNone marks no block: an empty slot, a hole in the queue.
const blockNone = -1

// kvBlock is one KV block of BlockSize tokens.
//
// A hashed block holds content a later lookup can find: shared content
// (group ≥ 0: registered in slot off of that prefix group, which keeps its
// hash) or private content (group = groupPrivate: content only its own
// request can name, a prompt without content ids or generated tokens;
// kvManager.priv holds its privateKey(serial, position) and it is found
// through its owner's saved block list, never through the table). Any other
// block is unhashed.
//
// Eviction does not write the block (the queue's entry says what it held,
// and the group's slot is cleared): a block taken for new content keeps the
// group and off of its old content until its new holder registers it (or
// finds its registration held: group = blockNone). So group is exact for
// private content and for the blocks a request registered or found (its
// first Request.registered blocks), which is what release is told; past
// those a block holds private content or nothing; which, its group's slot
// tells (the tests' hashed).
//
// Only a hashed block can be shared (a lookup finds nothing else), so an
// unhashed block has at most one holder, and its ref is never read: blocks
// are taken from the stack and released by requests that hold no hashed
// block without touching the block array, and eviction does not set it. ref
// is exact for a hashed block: a block is hashed (register, registerPrivate)
// while its request alone holds it, which sets ref to 1.
//
// 16 bytes: the replay's blocks are touched in an order no cache predicts
// (a request's blocks are the ones another request released), so each
// block's state is a cache miss, and the less of it the fewer lines.
type kvBlock struct {
	ref   int32 // requests holding the block (exact while hashed)
	group int32 // index of its prefix group in kvManager.groups, groupPrivate, or blockNone
	// qpos is its place in the queue while ref == 0 and it is queued: a
	// sequence number, kvManager.queue[qpos − qBase] (mod 2^32)
	qpos uint32
	off  uint8 // its slot in its group, when group ≥ 0
}

// groupPrivate is kvBlock.group of a block holding private content.
const groupPrivate = -2

// qEntry is one place in the queue of released blocks: the block and where
// its content is (kvBlock.group as it was when the block was released, or
// blockNone when it held none), so that eviction at the queue's head reads
// the queue, not the blocks: a queued block keeps its content until it leaves
// the queue. A hole (a block a prefix-cache hit took out of the middle) is
// {blockNone, blockNone}.
type qEntry struct {
	id, group int32
}

// blockGroup is one prefix group (workload.BlockHashesGroups): up to groupSize
// consecutive blocks of a prompt whose content one key fixes. The prefix cache
// indexes groups, not blocks: a replay registers and evicts millions of blocks,
// and with a key per group the hash table sees one insert and one delete per
// group (32 blocks of a 512-token Mooncake id) instead of per block; the blocks
// of a group sit side by side in ids, each slot's hash beside it in hashes.
// A group whose last block was evicted leaves the table as it is; its index
// is reused for a new key, which resets its slots.
type blockGroup struct {
	key    uint64
	ids    [groupSize]int32  // block holding each slot, or blockNone
	hashes [groupSize]uint64 // the hash of each slot's content, valid where ids is set
	n      int32             // slots in use
	// states: bit i is set when a hybrid model's recurrent state at the end
	// of slot i's block is cached with it (vLLM's align mode, Config.
	// MambaAlign; in the struct's padding: no byte more per group)
	states uint32
}

// groupSize is workload.GroupSize (the engine does not import workload).
const groupSize = 32

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
	// queue[qHead:] is the queue, least recently released first: blocks, and
	// holes where a block left from the middle (a prefix-cache hit took it).
	// An array rather than a linked list: taking n blocks reads n consecutive
	// entries instead of chasing n links through the block array. queue[0] is
	// the qBase-th entry ever queued (mod 2^32), so that dropping the taken
	// head moves the entries without renumbering their blocks (kvBlock.qpos).
	queue   []qEntry
	qHead   int
	qBase   uint32
	lruLen  int            // blocks in the queue
	idleHit int            // of which hashed (cached content nobody holds)
	cache   *hashtab.Table // prefix group key → index in groups (nil when caching is off)
	groups  []blockGroup
	freeGrp []int32 // unused group indices
	hits    []int32 // scratch: blocks found by the last lookup
	// priv[id] is the privateKey of block id's content when its group is
	// groupPrivate (grown when a block is first named: only preemption does)
	priv  []uint64
	stats KVStats
	// events, when a router watches the worker (Worker.WatchKV), records the
	// shared content the cache stores and drops (kvevents.go); nil otherwise.
	events *kvEventLog
}

func newKVManager(numBlocks int, prefixCaching bool) *kvManager {
	m := &kvManager{total: numBlocks}
	if prefixCaching {
		m.cache = hashtab.New()
	}
	return m
}

// available is the number of blocks an allocation can take now.
func (m *kvManager) available() int { return len(m.free) + m.lruLen + m.total - len(m.blocks) }

// lruRemove takes block id out of the middle of the queue, leaving a hole.
func (m *kvManager) lruRemove(id int32) {
	e := &m.queue[m.blocks[id].qpos-m.qBase]
	if e.group != blockNone {
		m.idleHit--
	}
	*e = qEntry{blockNone, blockNone}
	m.lruLen--
}

// makeRoom makes room for n more entries at the queue's tail. When the
// array is full it drops the taken head, moving the entries down (their
// blocks keep their sequence numbers) if the head is at least half of it,
// else it grows; and when holes outnumber the blocks queued (and a few
// thousand), they are squeezed out and the blocks renumbered. Each move
// shifts at most what was pushed since the last, so a push costs O(1)
// amortised, and the array stays within about twice the blocks queued.
func (m *kvManager) makeRoom(n int) {
	q := m.queue
	if len(q)-m.qHead > 2*m.lruLen+queueSlack { // mostly holes
		j := 0
		for _, e := range q[m.qHead:] {
			if e.id != blockNone {
				q[j] = e
				m.blocks[e.id].qpos = uint32(j)
				j++
			}
		}
		m.queue, m.qHead, m.qBase = q[:j], 0, 0
		q = m.queue
	}
	if len(q)+n <= cap(q) {
		return
	}
	if h := m.qHead; 2*h >= len(q) {
		live := copy(q, q[h:])
		m.queue, m.qHead, m.qBase = q[:live], 0, m.qBase+uint32(h)
		if live+n <= cap(q) {
			return
		}
	}
	m.queue = slices.Grow(m.queue, max(n, len(m.queue)))
}

// queueSlack is the holes the queue keeps beyond as many as its blocks before
// makeRoom squeezes them out (a variable for the tests).
var queueSlack = 4096

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
			m.blocks = append(m.blocks, kvBlock{group: blockNone})
		}
		n -= k
	}
	if n == 0 {
		return dst
	}
	m.lruLen -= n
	// the n blocks at the queue's head, skipping holes
	out := len(dst)
	dst = dst[:out+n]
	head := m.queue[m.qHead:]
	k := popIDs(head, dst[out:])
	m.qHead += k
	if m.qHead == len(m.queue) { // drained: the array is reused from its start
		m.queue, m.qHead, m.qBase = m.queue[:0], 0, m.qBase+uint32(m.qHead)
	}
	m.evict(head[:k])
	return dst
}

// popIDs copies the ids of the first len(ids) blocks of head (skipping holes)
// into ids and returns how many entries that took. Holes are rare: it copies
// stretches without one four entries at a time (copyQuads), and steps over
// the entries around a hole one by one.
//
//go:noinline
func popIDs(head []qEntry, ids []int32) int {
	j, k := 0, 0
	for j < len(ids) && k < len(head) {
		c := copyQuads(head[k:], ids[j:])
		j, k = j+c, k+c
		for end := min(len(head), k+4); k < end && j < len(ids); k++ { // a quad with a hole, or the last entries
			if id := head[k].id; id != blockNone {
				ids[j] = id
				j++
			}
		}
	}
	return k
}

// copyQuads copies the ids of head's leading entries into ids four at a time
// while none of the four is a hole (a hole's id is blockNone, the only
// negative id: four ids or'd are negative iff one is) and both have room for
// four, and returns how many it copied.
//
//go:noinline
func copyQuads(head []qEntry, ids []int32) int {
	c := 0
	for ; c+4 <= len(head) && c+4 <= len(ids); c += 4 {
		e, d := head[c:c+4:c+4], ids[c:c+4:c+4]
		if e[0].id|e[1].id|e[2].id|e[3].id < 0 {
			break
		}
		d[0], d[1], d[2], d[3] = e[0].id, e[1].id, e[2].id, e[3].id
	}
	return c
}

// evict drops the content of the blocks of head, the entries just taken from
// the queue's head (holes included), for new content: each block that holds
// content loses it (an eviction), and its group the slot. A queued block keeps
// its content, so its entry tells where it is without a read of the block,
// and a shared block is not written either (kvBlock).
// The blocks of one group released together sit side by side in the queue
// and leave it together: a run of entries of one group is counted off the
// group at once, and a group the run empties leaves the table without its
// slots being cleared one by one.
func (m *kvManager) evict(head []qEntry) {
	evicted := 0
	for x := 0; x < len(head); {
		gi := head[x].group
		switch {
		case gi >= 0:
			run := runOf(head[x:], gi)
			if m.events != nil {
				m.events.removed(m, gi, head[x:x+run])
			}
			m.leaveGroup(gi, head[x:x+run])
			evicted += run
			x += run
		case gi == groupPrivate:
			if b := &m.blocks[head[x].id]; b.group == groupPrivate { // else forgotten while queued
				b.group = blockNone
				evicted++
			}
			x++
		default: // no content, or a hole
			x++
		}
	}
	m.idleHit -= evicted
	m.stats.Evicted += int64(evicted)
}

// runOf returns how many leading entries of head are of group gi. A call of
// its own, not inlined: its loop then keeps its state in registers.
//
//go:noinline
func runOf(head []qEntry, gi int32) int {
	k := 0
	for ; k+4 <= len(head); k += 4 { // four at a time while all four are of gi
		e := head[k : k+4 : k+4]
		if (e[0].group^gi)|(e[1].group^gi)|(e[2].group^gi)|(e[3].group^gi) != 0 {
			break
		}
	}
	for ; k < len(head); k++ {
		if head[k].group != gi {
			return k
		}
	}
	return len(head)
}

// leaveGroup takes the blocks of run (entries of group gi, just evicted) out
// of the group: an emptied group leaves the table, else each one's slot is
// cleared.
func (m *kvManager) leaveGroup(gi int32, run []qEntry) {
	g := &m.groups[gi]
	if g.n -= int32(len(run)); g.n == 0 { // its slots are reset when it is reused
		m.dropGroup(gi)
		return
	}
	for _, e := range run {
		off := m.blocks[e.id].off & (groupSize - 1)
		g.ids[off] = blockNone
		g.states &^= 1 << off
	}
}

// lookup counts how many leading blocks of a prompt (at most limit) are cached,
// and how many of those are unreferenced (they leave the LRU list when
// touched). hashes and keys describe the prompt's blocks (their hash and
// prefix group key; each block's slot in its group is slotOf's, counted on
// the way). The blocks found are kept for touch.
func (m *kvManager) lookup(hashes, keys []uint64, limit int) (hits, idle int) {
	if m.cache == nil {
		m.hits = m.hits[:0]
		return 0, 0
	}
	limit = max(0, min(limit, len(hashes)))
	found := slices.Grow(m.hits[:0], limit)[:limit]
	off := 0 // the slot of block hits
	for hits < limit {
		gi, ok := m.cache.Get(keys[hits])
		if !ok {
			break
		}
		n, idl, end := m.groups[gi].match(hashes[hits:limit], keys[hits:limit], found[hits:], m.blocks, off)
		hits, idle = hits+n, idle+idl
		if !end {
			break
		}
		off = 0 // the key's next group of slots, or the next key's first
	}
	m.hits = found[:hits]
	return hits, idle
}

// match finds the leading blocks of hashes (slots from first on, while their
// key is this group's) in the group, writes their ids into found and returns
// how many, how many of those are unreferenced, and whether it stopped only
// at the group's end (the next block, if any, starts another group).
//
//go:noinline
func (g *blockGroup) match(hashes, keys []uint64, found []int32, blocks []kvBlock, first int) (n, idle int, end bool) {
	lim := min(len(hashes), groupSize-first)
	hashes, keys, found = hashes[:lim], keys[:lim], found[:lim]
	key := g.key
	for k, h := range hashes {
		if keys[k] != key {
			return k, idle, true
		}
		off := (first + k) & (groupSize - 1) // first + k < groupSize
		id := g.ids[off]
		if id == blockNone || g.hashes[off] != h {
			return k, idle, false
		}
		if blocks[id].ref == 0 {
			idle++
		}
		found[k] = id
	}
	return lim, idle, true
}

// slotOf is block j's slot in its prefix group: its distance from the start
// of its run of equal keys, counted from 0 again every groupSize blocks (so a
// run longer than a group is several groups). workload.BlockHashesGroups starts a
// new key at least every groupSize blocks, so the walk back is shorter than
// a group there.
func slotOf(keys []uint64, j int) int {
	k := j
	for k > 0 && keys[k-1] == keys[j] {
		k--
	}
	return (j - k) % groupSize
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
		if !m.holdsPrivate(saved[j], serial, j) {
			break
		}
		m.hits = append(m.hits, saved[j])
		n++
	}
	return n
}

// holdsPrivate reports whether block id holds the private content (serial, j).
func (m *kvManager) holdsPrivate(id int32, serial uint32, j int) bool {
	return m.blocks[id].group == groupPrivate && m.priv[id] == privateKey(serial, j)
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
	if int(id) >= len(m.priv) {
		m.priv = slices.Grow(m.priv, len(m.blocks)-len(m.priv))[:len(m.blocks)]
	}
	b := &m.blocks[id]
	b.ref, b.group = 1, groupPrivate
	m.priv[id] = privateKey(serial, j)
}

// forgetPrivate drops the private content (serial, j) from block id if it
// still holds it: nobody will look for it again.
func (m *kvManager) forgetPrivate(id int32, serial uint32, j int) {
	if !m.holdsPrivate(id, serial, j) {
		return
	}
	b := &m.blocks[id]
	if b.ref == 0 { // queued: no longer cached content
		m.idleHit--
		m.queue[b.qpos-m.qBase].group = blockNone
	}
	b.group = blockNone
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
// ids[k] is the request's block from+k, which holds hashes[from+k] in slot
// slotOf(keys, from+k) of group keys[from+k], unless another block already
// holds that slot (two requests computed it at once: keep the first; a slot
// only ever holds one content). The blocks of one group take consecutive
// slots, so a run of them looks the group up once: registering adds no group
// but its own, so the group a key names does not change during the call.
func (m *kvManager) register(ids []int32, hashes, keys []uint64, from int) {
	if m.cache == nil || len(ids) == 0 {
		return
	}
	hashes, keys = hashes[from:from+len(ids)], keys[:from+len(ids)]
	off := slotOf(keys, from)
	keys = keys[from:]
	for j := 0; j < len(ids); off = 0 { // a run ends where its group's slots or its key do
		gi := m.group(keys[j])
		n := m.groups[gi].fill(gi, m.blocks, ids[j:], hashes[j:], keys[j:], off)
		if m.events != nil {
			m.events.stored(m, gi, ids[j:j+n])
		}
		j += n
	}
}

// fill registers the leading blocks of ids with this group's key (gi), in
// its slots from first on, under hashes, each one unless its slot is held
// already, and returns how many ids it went through. A call of its own, not
// inlined: its loop then keeps its state in registers (the slots indexed
// from the group itself, so that few are live).
//
//go:noinline
func (g *blockGroup) fill(gi int32, blocks []kvBlock, ids []int32, hashes, keys []uint64, first int) int {
	n := min(len(ids), groupSize-first) // the slots left in the group
	ids, hashes, keys = ids[:n], hashes[:n], keys[:n]
	key, filled := g.key, int32(0)
	for k, id := range ids {
		if keys[k] != key {
			n = k
			break
		}
		b := &blocks[id]
		off := (first + k) & (groupSize - 1) // first + k < groupSize
		if g.ids[off] != blockNone {         // another block holds the slot: this one holds nothing
			b.group = blockNone
			continue
		}
		g.ids[off], g.hashes[off] = id, hashes[k]
		filled++
		b.ref, b.group, b.off = 1, gi, uint8(off) // held: its qpos is not read
	}
	g.n += filled
	return n
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
	gi, _ := m.cache.GetOrPut(key, func() int32 {
		var gi int32
		if n := len(m.freeGrp); n > 0 {
			gi = m.freeGrp[n-1]
			m.freeGrp = m.freeGrp[:n-1]
		} else {
			m.groups = append(m.groups, blockGroup{})
			gi = int32(len(m.groups) - 1)
		}
		g := &m.groups[gi]
		g.key, g.ids, g.n, g.states = key, noBlocks, 0, 0 // hashes are read only where ids is set
		return gi
	})
	return gi
}

// dropGroup removes an emptied prefix group from the table (the last of its
// blocks was evicted); its index is reused.
func (m *kvManager) dropGroup(gi int32) {
	m.cache.Del(m.groups[gi].key)
	m.freeGrp = append(m.freeGrp, gi)
}

// release drops one reference on each block, last block first, so that the tail
// of a request (the least shared part) is evicted before its head, as vLLM does.
// A block nobody holds any more joins the queue's tail, or the stack when it
// holds no content and the queue is empty. The first known blocks are those
// its request registered or found (kvBlock: their group is exact); past them
// only private content counts.
func (m *kvManager) release(ids []int32, known int) {
	// the queue and the stack made room for every block once, written by index
	m.makeRoom(len(ids))
	q0 := len(m.queue)
	i := len(ids)      // ids[:i] are left to release, last first
	if m.lruLen == 0 { // nothing queued: blocks without content go to the stack
		f0 := len(m.free)
		m.free = slices.Grow(m.free, len(ids))
		for ; i > 0; i-- {
			b := &m.blocks[ids[i-1]]
			if gi := b.group; gi == blockNone || i > known && gi != groupPrivate {
				m.free = append(m.free, ids[i-1])
			} else if b.ref == 1 { // queued (by queueBlocks): the queue starts here
				break
			} else { // another request holds it
				b.ref--
			}
		}
		m.stats.Released += int64(len(m.free) - f0)
	}
	queue := m.queue[:q0+i]
	k := min(known, i)
	n, hashed := queueOwn(m.blocks, ids[k:i], queue[q0:], m.qBase+uint32(q0))
	n2, hashed2 := queueBlocks(m.blocks, ids[:k], queue[q0+n:], m.qBase+uint32(q0+n))
	n, hashed = n+n2, hashed+hashed2
	m.queue = queue[:q0+n]
	m.lruLen += n
	m.stats.Released += int64(n)
	m.idleHit += hashed
}

// queueBlocks drops one reference on each block of ids, last first, and
// queues each one nobody holds any more: its entry written into queue in
// order from queue[0], its qpos numbered from seq. It returns how many it
// queued and how many of those hold content. The blocks' group is exact.
func queueBlocks(blocks []kvBlock, ids []int32, queue []qEntry, seq uint32) (queued, hashed int) {
	queue = queue[:len(ids)]
	qn := 0
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		b := &blocks[id]
		gi := b.group
		if gi != blockNone { // else its one holder lets go (kvBlock)
			if b.ref--; b.ref > 0 { // another request holds it
				continue
			}
			hashed++
		}
		b.qpos = seq + uint32(qn)
		queue[qn] = qEntry{id, gi}
		qn++
	}
	return qn, hashed
}

// queueOwn is queueBlocks for blocks their request neither registered nor
// found: each holds private content (group groupPrivate) or nothing,
// whatever group its content had before it was taken (kvBlock).
func queueOwn(blocks []kvBlock, ids []int32, queue []qEntry, seq uint32) (queued, hashed int) {
	queue = queue[:len(ids)]
	qn := 0
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		b := &blocks[id]
		gi := int32(blockNone)
		if b.group == groupPrivate {
			if b.ref--; b.ref > 0 { // another request holds it
				continue
			}
			gi = groupPrivate
			hashed++
		}
		b.qpos = seq + uint32(qn)
		queue[qn] = qEntry{id, gi}
		qn++
	}
	return qn, hashed
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
		m.release(ids, 0)
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
const BytesPerBlock = int64(unsafe.Sizeof(kvBlock{})) + 2*int64(unsafe.Sizeof(qEntry{})) + 2*hashtab.SlotBytes +
	int64(unsafe.Sizeof(blockGroup{}))/groupSize

// cacheState records that the recurrent state at the end of a prompt's
// block j (hash hashes[j] in the prefix group of keys[j]) is cached with
// the block that holds it (align mode: the pass that computes up to a block
// boundary caches the state there, vLLM MambaManager.cache_blocks). A
// block no longer registered under that hash caches nothing.
func (m *kvManager) cacheState(hashes, keys []uint64, j int) {
	if m.cache == nil {
		return
	}
	gi, ok := m.cache.Get(keys[j])
	if !ok {
		return
	}
	g := &m.groups[gi]
	if off := slotOf(keys, j); g.ids[off] != blockNone && g.hashes[off] == hashes[j] {
		g.states |= 1 << off
	}
}

// trimToState cuts the last lookup's hits (the first hits blocks found) to
// those up to the last block whose end holds a cached state (a hybrid
// model's prefix hit in align mode: vLLM's MambaManager finds the last
// cached state, and the hit is no longer than it), and returns the hits and
// how many of them are unreferenced.
func (m *kvManager) trimToState(hits int) (int, int) {
	for hits > 0 {
		b := &m.blocks[m.hits[hits-1]]
		if b.group >= 0 && m.groups[b.group].states&(1<<(b.off&(groupSize-1))) != 0 {
			break
		}
		hits--
	}
	return hits, m.idleOf(hits)
}

// idleOf is how many of the first hits blocks the last lookup found are
// unreferenced.
func (m *kvManager) idleOf(hits int) int {
	idle := 0
	for _, id := range m.hits[:hits] {
		if m.blocks[id].ref == 0 {
			idle++
		}
	}
	return idle
}

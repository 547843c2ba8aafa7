package sglang

// The radix cache (python/sglang/srt/mem_cache/radix_cache.py, RadixCache):
// a tree of token sequences whose KV is in the token pool, so that a new
// request reuses the longest cached prefix of its tokens, token by token
// (page_size 1) or page by page.
//
// Tokens are not stored one by one: a request's content is a list of pieces,
// each a run of tokens of one content key (a prefix-hash block of the
// replay, the known partial block after them, or the request's own content,
// which no other request can name: generated tokens, a prompt without
// content ids). Two runs hold the same tokens where their keys and offsets
// agree, so a prefix is matched piece by piece and the match may end inside
// a piece (token level: a 1,000-token prompt of two 512-token source blocks
// finds all 1,000 tokens of an earlier request of the same content, where
// 16-token blocks find 992).
//
// What the tree keeps, as RadixCache does:
//   - match (match_prefix): the longest prefix of a key held by the tree; the
//     nodes it passes are touched (last_access_time);
//   - insert: a key's tokens become tree nodes (after a prefill, and when a
//     request finishes: cache_unfinished_req, cache_finished_req); tokens the
//     tree already held are the caller's duplicates, freed;
//   - lock (inc_lock_ref / dec_lock_ref): a request holds the path to its
//     last node; a node with lock 0 is evictable;
//   - evict: whole unlocked leaves, least recently used first, until enough
//     tokens are freed; a parent left childless and unlocked becomes a
//     candidate (heap by last_access_time, SGLang's evict).

// piece is tokens [off, off+n) of the content run key.
type piece struct {
	key    uint64
	off, n int32
}

// pieceKey identifies where a child starts: its first piece's key and offset.
type pieceKey struct {
	key uint64
	off int32
}

// node is a tree node: the tokens of its pieces follow its parent's.
type node struct {
	parent   *node
	children map[pieceKey]*node
	pieces   []piece
	tokens   int
	lock     int32  // requests whose prefix ends at or below the node
	access   uint64 // last access, on the tree's logical clock
	stamp    uint32 // changes when the node leaves the evictable leaves (stale heap entries)
	inHeap   bool   // an entry for the current stamp is in the heap
	detached bool   // evicted (or merged away): no longer in the tree
}

// evictable reports whether n is an unlocked leaf other than the root.
func (n *node) evictable() bool {
	return n.parent != nil && n.lock == 0 && len(n.children) == 0 && !n.detached
}

type leafEntry struct {
	access uint64
	stamp  uint32
	n      *node
}

// radixTree is one worker's radix cache. Its sizes are in tokens.
type radixTree struct {
	root      node
	clock     uint64
	evictable int // tokens in unlocked nodes
	protected int // tokens in locked nodes
	heap      []leafEntry
	// pageSize: matches and inserts are whole pages (RadixCache with
	// page_size > 1 matches page by page).
	pageSize int
}

func newRadixTree(pageSize int) *radixTree {
	t := &radixTree{pageSize: pageSize}
	t.root.children = map[pieceKey]*node{}
	t.root.lock = 1 // the root is never evicted
	return t
}

func (t *radixTree) tick() uint64 { t.clock++; return t.clock }

// touch sets n's last access to now and queues it if it is an evictable
// leaf.
func (t *radixTree) touch(n *node, now uint64) {
	n.access = now
	if n.evictable() {
		t.push(n)
	}
}

// push queues evictable leaf n at its current access time (earlier entries
// of n go stale: their access no longer matches).
func (t *radixTree) push(n *node) {
	n.inHeap = true
	e := leafEntry{n.access, n.stamp, n}
	t.heap = append(t.heap, e)
	i := len(t.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !t.heap[i].before(&t.heap[p]) {
			break
		}
		t.heap[i], t.heap[p] = t.heap[p], t.heap[i]
		i = p
	}
}

func (a *leafEntry) before(b *leafEntry) bool {
	if a.access != b.access {
		return a.access < b.access
	}
	return a.n.tokens < b.n.tokens // deterministic; equal access only within one walk
}

func (t *radixTree) pop() leafEntry {
	h := t.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = leafEntry{}
	t.heap = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && t.heap[r].before(&t.heap[l]) {
			m = r
		}
		if !t.heap[m].before(&t.heap[i]) {
			break
		}
		t.heap[i], t.heap[m] = t.heap[m], t.heap[i]
		i = m
	}
	return top
}

// match walks the tree along key (pieces of content), up to limit tokens,
// and returns the matched length and the node it ends at; a match that ends
// inside a node splits it there (RadixCache._split_node), so that the
// prefix ends at a node. The path is touched (last_access_time). With pages
// the match is whole pages.
func (t *radixTree) match(key []piece, limit int) (int, *node) {
	if t.pageSize > 1 {
		limit -= limit % t.pageSize
	}
	now := t.tick()
	cur, matched := &t.root, 0
	pi, off := 0, int32(0) // the position in key: piece pi, offset off in it
	for matched < limit && pi < len(key) {
		child := cur.children[pieceKey{key[pi].key, key[pi].off + off}]
		if child == nil {
			break
		}
		t.touch(child, now)
		n := min(agree(child.pieces, key, pi, off), limit-matched)
		if t.pageSize > 1 {
			n -= n % t.pageSize
		}
		if n == 0 {
			break
		}
		matched += n
		pi, off = advance(key, pi, off, n)
		if n < child.tokens { // the key leaves the tree inside child
			cur = t.split(child, n)
			break
		}
		cur = child
	}
	return matched, cur
}

// agree is how many tokens of the pieces cp agree with key from position
// (pi, off): runs of the same key at the same offsets.
func agree(cp []piece, key []piece, pi int, off int32) int {
	n := 0
	ci, coff := 0, int32(0)
	for ci < len(cp) && pi < len(key) {
		c, q := cp[ci], key[pi]
		if c.key != q.key || c.off+coff != q.off+off {
			break
		}
		m := min(c.n-coff, q.n-off)
		n += int(m)
		coff, off = coff+m, off+m
		if coff == c.n {
			ci, coff = ci+1, 0
		}
		if off == q.n {
			pi, off = pi+1, 0
		}
	}
	return n
}

// advance moves the position (piece pi, offset off) of key by n tokens.
func advance(key []piece, pi int, off int32, n int) (int, int32) {
	for n > 0 && pi < len(key) {
		left := int(key[pi].n - off)
		if n < left {
			return pi, off + int32(n)
		}
		n -= left
		pi, off = pi+1, 0
	}
	return pi, off
}

// split cuts n after its first k tokens, as RadixCache._split_node does: a
// new node takes the first k tokens and takes n's place under its parent,
// and n, with the rest (and its children), hangs below it; so whoever holds
// n (a request's last node) still holds the whole of it. It returns the new
// head node.
func (t *radixTree) split(n *node, k int) *node {
	var head, tail []piece
	acc := 0
	for i, p := range n.pieces {
		if acc+int(p.n) <= k {
			head = append(head, p)
			acc += int(p.n)
			if acc == k {
				tail = append(tail, n.pieces[i+1:]...)
				break
			}
			continue
		}
		cut := int32(k - acc)
		head = append(head, piece{p.key, p.off, cut})
		tail = append(tail, piece{p.key, p.off + cut, p.n - cut})
		tail = append(tail, n.pieces[i+1:]...)
		break
	}
	h := &node{parent: n.parent, pieces: head, tokens: k, lock: n.lock, access: n.access}
	h.children = map[pieceKey]*node{{tail[0].key, tail[0].off}: n}
	n.parent.children[pieceKey{head[0].key, head[0].off}] = h
	n.parent, n.pieces, n.tokens = h, tail, n.tokens-k
	return h
}

// insert adds the first length tokens of key below the root, creating nodes
// for what the tree lacks, and returns how many of them the tree already
// held (the caller's duplicates to free, RadixCache.insert's return) and the
// node the key ends at. New nodes are unlocked: their tokens are evictable
// until a lock. With pages the length is cut to whole pages first (the
// caller frees the rest).
func (t *radixTree) insert(key []piece, length int) (dup int, end *node) {
	if t.pageSize > 1 {
		length -= length % t.pageSize
	}
	held, cur := t.match(key, length)
	if held == length {
		return held, cur
	}
	rest := cut(key, held, length)
	c := &node{parent: cur, children: map[pieceKey]*node{}, pieces: rest, tokens: length - held, access: t.tick()}
	if len(cur.children) == 0 && cur.inHeap { // cur stops being a leaf
		cur.stamp++
		cur.inHeap = false
	}
	cur.children[pieceKey{rest[0].key, rest[0].off}] = c
	t.evictable += c.tokens
	t.push(c)
	return held, c
}

// cut is tokens [from, to) of key as pieces.
func cut(key []piece, from, to int) []piece {
	var out []piece
	pos := 0
	for _, p := range key {
		s, e := pos, pos+int(p.n)
		pos = e
		if e <= from {
			continue
		}
		if s >= to {
			break
		}
		lo, hi := max(s, from), min(e, to)
		out = append(out, piece{p.key, p.off + int32(lo-s), int32(hi - lo)})
	}
	return out
}

// lock adds a holder to n and its ancestors (inc_lock_ref) and returns the
// tokens that stopped being evictable.
func (t *radixTree) lock(n *node) int {
	moved := 0
	for ; n != nil && n.parent != nil; n = n.parent {
		if n.lock == 0 {
			t.evictable -= n.tokens
			t.protected += n.tokens
			moved += n.tokens
			if n.inHeap {
				n.stamp++
				n.inHeap = false
			}
		}
		n.lock++
	}
	return moved
}

// unlock removes a holder from n and its ancestors (dec_lock_ref) and returns
// the tokens that became evictable.
func (t *radixTree) unlock(n *node) int {
	moved := 0
	for ; n != nil && n.parent != nil; n = n.parent {
		n.lock--
		if n.lock < 0 {
			panic("sglang: radix lock below zero")
		}
		if n.lock == 0 {
			t.evictable += n.tokens
			t.protected -= n.tokens
			moved += n.tokens
			if n.evictable() {
				t.push(n)
			}
		}
	}
	return moved
}

// evict frees at least tokens of unlocked leaves, least recently used first,
// and returns how many it freed (fewer when nothing more is evictable).
func (t *radixTree) evict(tokens int) int {
	freed := 0
	for freed < tokens && len(t.heap) > 0 {
		e := t.pop()
		n := e.n
		if e.stamp != n.stamp || e.access != n.access || !n.evictable() {
			continue // stale
		}
		n.inHeap = false
		freed += n.tokens
		t.evictable -= n.tokens
		p := n.parent
		delete(p.children, pieceKey{n.pieces[0].key, n.pieces[0].off})
		n.detached, n.parent = true, nil
		if p.evictable() {
			t.push(p)
		}
	}
	return freed
}

package trtllm

import "github.com/aisimulate/aisimulate/core/engine"

// kvPool is one worker's KV cache: numBlocks blocks of tokens_per_block
// tokens, refcounted, with TensorRT-LLM's block reuse
// (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, BlockManager): a full
// block of shared content (a prompt block named by a hash of its prefix)
// stays cached when its last holder lets go, findable by later requests with
// the same prefix until an allocation evicts it. Unreferenced blocks are the
// free queue (getNumFreeBlocks counts them all, cached or not); eviction
// takes content-free blocks first, then the cached block released longest
// ago (the LRU eviction policy; a request's blocks are released last block
// first, so a prefix's leaves go before its root).
type kvPool struct {
	numBlocks int
	reuse     bool

	ref   []int32  // holders of each block
	hash  []uint64 // content of each block (valid when named)
	named []bool

	// free: unreferenced blocks without content, a stack.
	free []int32
	// the LRU list of unreferenced named blocks (oldest first): prev/next
	// links by block id, -1 at the ends.
	prev, next []int32
	head, tail int32
	lruLen     int
	// byHash finds the block holding a content, named or in use.
	byHash map[uint64]int32
	// touched counts blocks ever taken (for the memory estimate: blocks are
	// materialised on first use).
	touched int

	stats engine.KVStats
	// watched: a KV-aware router reads the pool's events (Worker.WatchKV);
	// events holds those since it last read them.
	watched bool
	events  []engine.KVEvent
}

func newKVPool(numBlocks int, reuse bool) *kvPool {
	p := &kvPool{numBlocks: numBlocks, reuse: reuse, head: -1, tail: -1}
	if reuse {
		p.byHash = map[uint64]int32{}
	}
	return p
}

// available is the blocks an allocation can take: free and cached.
func (p *kvPool) available() int { return p.numBlocks - p.touched + len(p.free) + p.lruLen }

// grow materialises block ids up to id.
func (p *kvPool) newBlock() int32 {
	id := int32(p.touched)
	p.touched++
	p.ref = append(p.ref, 0)
	p.hash = append(p.hash, 0)
	p.named = append(p.named, false)
	p.prev = append(p.prev, -1)
	p.next = append(p.next, -1)
	return id
}

// take returns one unreferenced block with a reference, evicting the oldest
// cached block when no content-free block is left. The caller has checked
// available() > 0.
func (p *kvPool) take() int32 {
	var id int32
	switch {
	case len(p.free) > 0:
		id = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
	case p.touched < p.numBlocks:
		id = p.newBlock()
	case p.lruLen > 0:
		id = p.head
		p.unlinkLRU(id)
		if p.watched && p.named[id] {
			p.events = append(p.events, engine.KVEvent{Hash: p.hash[id]})
		}
		p.forget(id)
		p.stats.Evicted++
	default:
		panic("trtllm: KV block taken with none available")
	}
	p.ref[id] = 1
	p.stats.Allocated++
	return id
}

// takeN appends n taken blocks to ids.
func (p *kvPool) takeN(n int, ids []int32) []int32 {
	for i := 0; i < n; i++ {
		ids = append(ids, p.take())
	}
	return ids
}

// forget drops a block's content.
func (p *kvPool) forget(id int32) {
	if p.named[id] {
		if b, ok := p.byHash[p.hash[id]]; ok && b == id {
			delete(p.byHash, p.hash[id])
		}
		p.named[id] = false
	}
}

// match is the number of leading blocks of hashes (at most limit) whose
// content is cached, and acquires them.
func (p *kvPool) match(hashes []uint64, limit int, ids []int32) ([]int32, int) {
	if !p.reuse {
		return ids, 0
	}
	n := 0
	for n < limit && n < len(hashes) {
		id, ok := p.byHash[hashes[n]]
		if !ok {
			break
		}
		if p.ref[id] == 0 {
			p.unlinkLRU(id)
			p.stats.Reused++
		}
		p.ref[id]++
		ids = append(ids, id)
		n++
	}
	return ids, n
}

// name gives block id the content h, unless another block holds it already
// (two requests that computed the same prefix at once: the second copy stays
// content-free).
func (p *kvPool) name(id int32, h uint64) {
	if !p.reuse || p.named[id] {
		return
	}
	if _, ok := p.byHash[h]; ok {
		return
	}
	p.byHash[h], p.hash[id], p.named[id] = id, h, true
	if p.watched {
		p.events = append(p.events, engine.KVEvent{Hash: h, Stored: true})
	}
}

// release lets go of ids, last block first: a block whose last holder it was
// joins the LRU list when it holds content, the free stack otherwise.
func (p *kvPool) release(ids []int32) {
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if p.ref[id]--; p.ref[id] > 0 {
			continue
		}
		p.stats.Released++
		if p.named[id] {
			p.pushLRU(id)
		} else {
			p.free = append(p.free, id)
		}
	}
}

func (p *kvPool) pushLRU(id int32) {
	p.prev[id], p.next[id] = p.tail, -1
	if p.tail < 0 {
		p.head = id
	} else {
		p.next[p.tail] = id
	}
	p.tail = id
	p.lruLen++
}

func (p *kvPool) unlinkLRU(id int32) {
	if p.prev[id] < 0 {
		p.head = p.next[id]
	} else {
		p.next[p.prev[id]] = p.next[id]
	}
	if p.next[id] < 0 {
		p.tail = p.prev[id]
	} else {
		p.prev[p.next[id]] = p.prev[id]
	}
	p.prev[id], p.next[id] = -1, -1
	p.lruLen--
}

// WatchKV makes the worker record its KV events from now on (KVEvents): a
// block's content stored for reuse (KVCacheEventManager's stored event, as a
// context's blocks are stored when its context completes) and removed when
// the block is evicted for other content.
func (w *Worker) WatchKV() { w.kv.watched = true }

// KVEvents returns the events since the last call, in order, and forgets
// them; the slice is valid until the worker records more. Nil unwatched.
func (w *Worker) KVEvents() []engine.KVEvent {
	if !w.kv.watched {
		return nil
	}
	ev := w.kv.events
	w.kv.events = w.kv.events[:0]
	return ev
}

package vllm

import "github.com/aisimulate/aisimulate/core/engine"

// kvEventLog is a watched worker's events since the router last read them.
type kvEventLog struct{ ev []engine.KVEvent }

// stored records BlockStored for each block of ids that group gi's fill just
// registered (a block whose slot another block held holds nothing: none).
func (l *kvEventLog) stored(m *kvManager, gi int32, ids []int32) {
	g := &m.groups[gi]
	for _, id := range ids {
		if b := &m.blocks[id]; b.group == gi {
			l.ev = append(l.ev, engine.KVEvent{Hash: g.hashes[b.off&(groupSize-1)], Stored: true})
		}
	}
}

// removed records BlockRemoved for each block of run, entries of group gi
// being evicted (before the group forgets them).
func (l *kvEventLog) removed(m *kvManager, gi int32, run []qEntry) {
	g := &m.groups[gi]
	for _, e := range run {
		l.ev = append(l.ev, engine.KVEvent{Hash: g.hashes[m.blocks[e.id].off&(groupSize-1)]})
	}
}

// WatchKV makes the worker record its KV events from now on (KVEvents,
// engine.KVEvent); a worker nobody watches keeps none, at no cost.
func (w *Worker) WatchKV() {
	if w.kv.events == nil {
		w.kv.events = &kvEventLog{}
	}
}

// KVEvents returns the worker's KV events since the last call, in the order
// they happened, and forgets them. The slice is valid until the worker's next
// pass, handoff or admission records more. Nil for a worker not watched.
func (w *Worker) KVEvents() []engine.KVEvent {
	l := w.kv.events
	if l == nil {
		return nil
	}
	ev := l.ev
	l.ev = l.ev[:0]
	return ev
}

// ForEachCached calls f with the hash of every block whose shared content the
// worker's cache holds (in use or not): what its KV events have stored and not
// removed. For checks; the order is the cache's own.
func (w *Worker) ForEachCached(f func(hash uint64)) {
	for i := range w.kv.groups {
		g := &w.kv.groups[i]
		if g.n == 0 {
			continue
		}
		for k, id := range g.ids {
			if id != blockNone {
				f(g.hashes[k])
			}
		}
	}
}

package vllm

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// kvModel is the block manager's specification written the plain way, for
// TestKVManagerMatchesModel: vLLM v1's BlockPool with its free block queue
// as a list in release order (kvManager's doc), a block's content held in the
// block itself, and a map from (group key, slot) to the block holding it. No
// run of blocks, no ring, no entry caching what a block holds: each operation
// looks at every block it concerns.
type kvModel struct {
	total   int
	used    int       // blocks ever taken: ids 0..used−1
	stack   []int32   // released blocks without content, ahead of the queue (top last)
	queue   []int32   // released blocks, least recently released first
	ref     []int     // holders of each block
	content []modelKV // what each block holds (hashed == false: nothing)
	slots   map[modelSlot]int32
	hits    []int32
	stats   KVStats
}

type modelSlot struct {
	key uint64
	off uint8
}

type modelKV struct {
	hashed  bool
	private bool
	slot    modelSlot // shared content: where the table names it
	hash    uint64    // shared: its hash; private: its privateKey
}

// modelSlots numbers each block within its run of equal keys, 0, 1, …,
// from 0 again after groupSize blocks.
func modelSlots(keys []uint64) []uint8 {
	offs := make([]uint8, len(keys))
	for j := 1; j < len(keys); j++ {
		if keys[j] == keys[j-1] && offs[j-1] < groupSize-1 {
			offs[j] = offs[j-1] + 1
		}
	}
	return offs
}

func newKVModel(total int) *kvModel {
	return &kvModel{total: total, ref: make([]int, total), content: make([]modelKV, total), slots: map[modelSlot]int32{}}
}

func (m *kvModel) available() int { return len(m.stack) + len(m.queue) + m.total - m.used }

func (m *kvModel) idleHit() int {
	n := 0
	for _, id := range m.queue {
		if m.content[id].hashed {
			n++
		}
	}
	return n
}

func (m *kvModel) take(n int) []int32 {
	var out []int32
	for range n {
		m.stats.Allocated++
		if k := len(m.stack); k > 0 {
			out = append(out, m.stack[k-1])
			m.stack = m.stack[:k-1]
			continue
		}
		if m.used < m.total {
			out = append(out, int32(m.used))
			m.used++
			continue
		}
		id := m.queue[0]
		m.queue = m.queue[1:]
		if c := m.content[id]; c.hashed {
			m.stats.Evicted++
			if !c.private {
				delete(m.slots, c.slot)
			}
			m.content[id] = modelKV{}
		}
		out = append(out, id)
	}
	for _, id := range out {
		m.ref[id] = 1
	}
	return out
}

func (m *kvModel) lookup(hashes, keys []uint64, offs []uint8, limit int) (hits, idle int) {
	m.hits = m.hits[:0]
	for hits < limit && hits < len(hashes) {
		id, ok := m.slots[modelSlot{keys[hits], offs[hits]}]
		if !ok || m.content[id].hash != hashes[hits] {
			break
		}
		if m.ref[id] == 0 {
			idle++
		}
		m.hits = append(m.hits, id)
		hits++
	}
	return hits, idle
}

func (m *kvModel) lookupSaved(saved []int32, serial uint32, from, limit int) int {
	n := 0
	for j := from; j < limit && j < len(saved); j++ {
		c := m.content[saved[j]]
		if !c.hashed || !c.private || c.hash != privateKey(serial, j) {
			break
		}
		m.hits = append(m.hits, saved[j])
		n++
	}
	return n
}

func (m *kvModel) touch(n int) []int32 {
	var out []int32
	for _, id := range m.hits[:n] {
		if m.ref[id] == 0 {
			m.queue = slices.Delete(m.queue, slices.Index(m.queue, id), slices.Index(m.queue, id)+1)
			m.stats.Reused++
		}
		m.ref[id]++
		out = append(out, id)
	}
	return out
}

func (m *kvModel) register(ids []int32, hashes, keys []uint64, offs []uint8) {
	for j, id := range ids {
		s := modelSlot{keys[j], offs[j]}
		if _, held := m.slots[s]; held {
			continue
		}
		m.slots[s] = id
		m.content[id] = modelKV{hashed: true, slot: s, hash: hashes[j]}
	}
}

func (m *kvModel) registerPrivate(id int32, serial uint32, j int) {
	m.content[id] = modelKV{hashed: true, private: true, hash: privateKey(serial, j)}
}

func (m *kvModel) forgetPrivate(id int32, serial uint32, j int) {
	if c := m.content[id]; c.hashed && c.private && c.hash == privateKey(serial, j) {
		m.content[id] = modelKV{}
	}
}

func (m *kvModel) release(ids []int32) {
	emptyBefore := len(m.queue) == 0
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if m.ref[id]--; m.ref[id] > 0 {
			continue
		}
		m.stats.Released++
		if !m.content[id].hashed && emptyBefore && len(m.queue) == 0 {
			m.stack = append(m.stack, id)
		} else {
			m.queue = append(m.queue, id)
		}
	}
}

// modelReq is one request of TestKVManagerMatchesModel: a prompt of blocks
// (hash, group key, slot) and the blocks it holds in both managers.
type modelReq struct {
	hashes, keys []uint64
	offs         []uint8
	got, want    []int32 // held blocks: kvManager's, the model's
	registered   int
	serial       uint32
	named        int // blocks named private from len(hashes) on
	saved        []int32
}

// TestKVManagerMatchesModel drives kvManager and kvModel with the same random
// admissions (lookup, touch, take), registrations, private naming,
// re-admissions through saved blocks and releases, and requires the same
// blocks, hits and counters after every step. The prompts share prefixes
// drawn from a few conversations, so blocks are shared, found idle in the
// queue (holes), evicted in group runs and partly; small and large
// capacities exercise the stack, the queue's moves, its hole squeezing (with
// a small slack) and groups that empty over several evictions.
func TestKVManagerMatchesModel(t *testing.T) {
	defer func(slack int) { queueSlack = slack }(queueSlack)
	for seed := range uint64(12) {
		queueSlack = []int{4096, 8}[seed%2] // small: the holes are squeezed out often
		rng := rand.New(rand.NewPCG(seed, 7))
		total := []int{40, 300, 6000}[seed%3]
		kv, model := newKVManager(total, true), newKVModel(total)
		// conversations: each a chain of group keys and block hashes
		var convs [][2][]uint64
		for c := range 6 {
			var hashes, keys []uint64
			for j := 0; j < 400; {
				run := 1 + rng.IntN(groupSize+12) // past groupSize: the key's slots again from 0
				key := uint64(c)<<40 | uint64(j)<<8 | 0xA5
				for k := 0; k < run && j < 400; k, j = k+1, j+1 {
					keys = append(keys, key)
					hashes = append(hashes, key^uint64(k+1)<<20)
				}
			}
			convs = append(convs, [2][]uint64{hashes, keys})
		}
		var live []*modelReq
		serial := uint32(0)
		check := func(step int) {
			require.Equal(t, model.stats, kv.stats, "seed %d step %d", seed, step)
			require.Equal(t, model.available(), kv.available(), "seed %d step %d", seed, step)
			require.Equal(t, len(model.queue), kv.lruLen, "seed %d step %d", seed, step)
			require.Equal(t, model.idleHit(), kv.idleHit, "seed %d step %d", seed, step)
		}
		// allocate gives r its hits and need new blocks in both, which must agree.
		allocate := func(r *modelReq, hits, need, step int) {
			r.got = kv.touch(hits, nil)
			r.want = model.touch(hits)
			r.got = kv.takeN(need, r.got)
			r.want = append(r.want, model.take(need)...)
			require.Equal(t, r.want, r.got, "seed %d step %d", seed, step)
		}
		for step := range 4000 {
			switch op := rng.IntN(10); {
			case op < 4 || len(live) == 0: // admit a prompt (a prefix of a conversation)
				conv := convs[rng.IntN(len(convs))]
				n := 1 + rng.IntN(min(len(conv[0]), total/2))
				r := &modelReq{hashes: conv[0][:n], keys: conv[1][:n], serial: serial}
				serial++
				r.offs = modelSlots(r.keys)
				limit := n - 1
				hits, idle := kv.lookup(r.hashes, r.keys, limit)
				mh, mi := model.lookup(r.hashes, r.keys, r.offs, limit)
				require.Equal(t, mh, hits, "seed %d step %d", seed, step)
				require.Equal(t, mi, idle)
				require.True(t, slices.Equal(model.hits, kv.hits), "%v ≠ %v", model.hits, kv.hits)
				need := n + rng.IntN(3) - hits // a few blocks past the prompt (decode)
				if need > kv.available()-idle {
					break
				}
				allocate(r, hits, need, step)
				r.registered = hits
				live = append(live, r)
			case op < 7: // register some more of a request's prompt blocks
				r := live[rng.IntN(len(live))]
				to := min(len(r.hashes), r.registered+1+rng.IntN(80))
				j := r.registered
				kv.register(r.got[j:to], r.hashes, r.keys, j)
				model.register(r.want[j:to], r.hashes[j:to], r.keys[j:to], r.offs[j:to])
				r.registered = to
			case op < 8: // preempt: name the blocks past the prompt, release, re-admit later
				i := rng.IntN(len(live))
				r := live[i]
				for j := len(r.hashes); j < len(r.got); j++ {
					kv.registerPrivate(r.got[j], r.serial, j)
					model.registerPrivate(r.want[j], r.serial, j)
				}
				r.named = len(r.got)
				r.saved = slices.Clone(r.got)
				kv.release(r.got, r.registered)
				model.release(r.want)
				// admitted again at once, through the prompt and its own blocks
				limit := len(r.saved)
				hits, idle := kv.lookup(r.hashes, r.keys, limit)
				mh, mi := model.lookup(r.hashes, r.keys, r.offs, limit)
				require.Equal(t, mh, hits)
				require.Equal(t, mi, idle)
				if hits == len(r.hashes) {
					own := kv.lookupSaved(r.saved, r.serial, hits, limit)
					require.Equal(t, model.lookupSaved(r.saved, r.serial, hits, limit), own)
					hits, idle = hits+own, idle+own
				}
				require.True(t, slices.Equal(model.hits, kv.hits), "%v ≠ %v", model.hits, kv.hits)
				need := len(r.saved) - hits
				if need > kv.available()-idle {
					live = slices.Delete(live, i, i+1) // gave up: nothing held
					break
				}
				allocate(r, hits, need, step)
				r.registered = min(hits, len(r.hashes))
			default: // finish: forget private content, release
				i := rng.IntN(len(live))
				r := live[i]
				for _, ids := range [][2][]int32{{r.got, r.want}, {r.saved, r.saved}} {
					for j := len(r.hashes); j < min(len(ids[0]), r.named); j++ {
						kv.forgetPrivate(ids[0][j], r.serial, j)
						model.forgetPrivate(ids[1][j], r.serial, j)
					}
				}
				kv.release(r.got, r.registered)
				model.release(r.want)
				live = slices.Delete(live, i, i+1)
			}
			check(step)
		}
	}
}

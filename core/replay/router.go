package replay

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/aisimulate/aisimulate/core/clock"
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/workload"
)

// The KV-aware placements (docs/routing.md): Dynamo's KV router and the vLLM
// production stack's prefix-aware router. Both see a request as the block
// hashes of its prompt's full blocks (flight.hashes, the engine's own), as
// the routers hash a request's tokens into the engine's blocks.

// streamRouter names the random stream a pool's router draws from (the
// pool's name is appended): workload.Streams, so that its draws never shift
// another subsystem's.
const streamRouter = "router"

// kvRouter is Dynamo's KV router over a pool's targets (every rank of every
// worker: Dynamo routes to a worker's data-parallel rank), as its scheduler's
// default worker selector chooses (lib/kv-router, scheduling/selector.rs, the
// cost of Dynamo's docs "KV Router", "Cost function"):
//
//	cost_t = kv_overlap_score_weight × prefill_blocks_t + decode_blocks_t
//	prefill_blocks_t = (active prefill tokens_t + isl − overlap_t × block_size) / block_size
//	decode_blocks_t  = active blocks_t + query blocks − the query's prefix among them
//
// overlap_t is the request's leading blocks the router's index says target t
// caches, known from the target's KV events (engine.KVEvent), each visible
// KVEventLagMs after it happened (Dynamo's indexer consumes vLLM's
// ZMQ-published events); query blocks are the prompt's full blocks. The
// active prefill tokens and active blocks are the router's own accounts of
// the requests it placed (Dynamo's ActiveSequences, lib/kv-router
// sequences): a request adds its new prefill tokens when placed and takes
// them off when its prefill completes (its first token, or a P/D prefill's
// handoff), and holds its blocks until it ends; blocks several active
// requests share count once. At router_temperature 0 the lowest cost wins
// (ties: the target whose index holds fewest blocks, then the lowest);
// above 0, Dynamo's softmax_sample draws a target with probability ∝
// exp(−cost / ((max − min) × temperature)).
type kvRouter struct {
	cfg    config.KVRouter
	bs     int
	first  int // global id of target 0
	lagNs  int64
	rng    *rand.Rand
	cached *blockIndex // targets' caches as the events reported them
	active *blockIndex // blocks of the requests placed and not ended
	// anon: per target, the full blocks of active requests that no hash
	// names (a prompt's own content): each counts as a block of its own
	anon   []int
	tokens []int // per target: new prefill tokens of active prefills
	// pending: events not yet visible to the router (a lag), in time order
	pending []kvPending
	ph      int
	// scratch per target
	overlap, depth []int
	cost           []float64
}

// kvPending is a KV event on its way to the router.
type kvPending struct {
	at     int64 // visible from
	target int32
	ev     engine.KVEvent
}

// kvPlaced is what a kv_router remembers of a request it placed, in its
// flight: the target, the prefill tokens it added (until its prefill
// completes), and that it holds blocks there (until it ends).
type kvPlaced struct {
	target   int32
	tokens   int
	prefill  bool // its tokens are still counted
	holds    bool // its blocks are
	hashes   int  // of its hashes counted (the leading query blocks)
	anon     int  // its full blocks no hash names
	hasRoute bool
}

func newKVRouter(p *poolRT, seed uint64) *kvRouter {
	n := p.count * p.dp
	cfg := config.DefaultKVRouter()
	if p.kvRouter != nil {
		cfg = *p.kvRouter
	}
	r := &kvRouter{cfg: cfg, bs: p.cfg.BlockSize, first: p.first,
		lagNs:  clock.Span(cfg.KVEventLagMs * 1e6),
		rng:    workload.NewStreams(seed).Get(streamRouter + "/" + p.name),
		cached: newBlockIndex(n), active: newBlockIndex(n),
		anon: make([]int, n), tokens: make([]int, n), overlap: make([]int, n), depth: make([]int, n), cost: make([]float64, n)}
	for _, w := range p.workers {
		w.WatchKV()
	}
	return r
}

// events takes the KV events target t's worker recorded, which happened at
// now: applied at once without a lag, else queued until now + lag.
func (r *kvRouter) events(t int, evs []engine.KVEvent, now int64) {
	if r.lagNs == 0 {
		for _, e := range evs {
			r.apply(t, e)
		}
		return
	}
	at := clock.Add(now, r.lagNs)
	for _, e := range evs {
		r.pending = append(r.pending, kvPending{at: at, target: int32(t), ev: e})
	}
}

func (r *kvRouter) apply(t int, e engine.KVEvent) {
	if e.Stored {
		r.cached.add(e.Hash, t)
	} else {
		r.cached.remove(e.Hash, t)
	}
}

// catchUp applies the events visible at now.
func (r *kvRouter) catchUp(now int64) {
	for r.ph < len(r.pending) && r.pending[r.ph].at <= now {
		e := r.pending[r.ph]
		r.apply(int(e.target), e.ev)
		r.ph++
	}
	if r.ph == len(r.pending) {
		r.pending, r.ph = r.pending[:0], 0
	} else if r.ph > 4096 && 2*r.ph > len(r.pending) {
		r.pending = r.pending[:copy(r.pending, r.pending[r.ph:])]
		r.ph = 0
	}
}

// place picks the target (a global worker id) for a request of isl prompt
// tokens whose full blocks hashes name (in order; its other full blocks are
// its own) and records it there (pl).
func (r *kvRouter) place(isl int, hashes []uint64, now int64, pl *kvPlaced) int {
	r.catchUp(now)
	q := isl / r.bs // the prompt's full blocks
	hs := hashes[:min(len(hashes), q)]
	r.cached.depths(hs, r.overlap)
	r.active.depths(hs, r.depth)
	w := r.cfg.KVOverlapScoreWeight
	lo, hi := math.Inf(1), math.Inf(-1)
	for t := range r.cost {
		prefill := r.tokens[t] + max(isl-r.overlap[t]*r.bs, 0)
		decode := r.active.size[t] + r.anon[t] + q - r.depth[t]
		c := w*float64(prefill)/float64(r.bs) + float64(decode)
		r.cost[t] = c
		lo, hi = min(lo, c), max(hi, c)
	}
	t := r.pick(lo, hi)
	pl.target, pl.hasRoute = int32(t), true
	pl.tokens, pl.prefill = max(isl-r.overlap[t]*r.bs, 0), true
	pl.hashes, pl.anon, pl.holds = len(hs), q-len(hs), true
	r.tokens[t] += pl.tokens
	r.anon[t] += pl.anon
	for _, h := range hs {
		r.active.add(h, t)
	}
	return r.first + t
}

// pick is Dynamo's softmax_sample over r.cost (lo, hi its extremes).
func (r *kvRouter) pick(lo, hi float64) int {
	if r.cfg.RouterTemperature == 0 || lo == hi {
		if r.cfg.RouterTemperature != 0 { // all equal: uniform
			return r.rng.IntN(len(r.cost))
		}
		best := -1
		for t, c := range r.cost {
			if c == lo && (best < 0 || r.cached.size[t] < r.cached.size[best]) {
				best = t
			}
		}
		return best
	}
	// probabilities ∝ exp(−c / ((hi − lo) T)), shifted by the largest exponent
	scale := 1 / ((hi - lo) * r.cfg.RouterTemperature)
	sum := 0.0
	for t, c := range r.cost {
		e := math.Exp((lo - c) * scale)
		r.cost[t] = e
		sum += e
	}
	u, cum := r.rng.Float64(), 0.0
	for t, e := range r.cost {
		if cum += e / sum; u <= cum {
			return t
		}
	}
	return len(r.cost) - 1
}

// prefillDone takes a placed request's prefill tokens off its target.
func (r *kvRouter) prefillDone(pl *kvPlaced) {
	if pl.hasRoute && pl.prefill {
		r.tokens[pl.target] -= pl.tokens
		pl.prefill = false
	}
}

// free ends a placed request: its prefill (if still counted) and its blocks.
func (r *kvRouter) free(pl *kvPlaced, hashes []uint64) {
	if !pl.hasRoute {
		return
	}
	r.prefillDone(pl)
	if pl.holds {
		t := int(pl.target)
		for _, h := range hashes[:pl.hashes] {
			r.active.remove(h, t)
		}
		r.anon[t] -= pl.anon
		pl.holds = false
	}
	pl.hasRoute = false
}

// prefixAffinity is the vLLM production stack's prefix-aware router
// (src/vllm_router/routers/routing_logic.py, PrefixAwareRouter, over
// prefix/hashtrie.py): it remembers every prompt it sent and where, and sends
// a request to a worker that got the longest prefix of its prompt, at random
// among those (every worker when none got its first block), without regard
// to load or to what the worker's cache has since evicted. llm-d's
// prefix-cache scorer alone (the fraction of the prompt's blocks a pod got
// before, the highest wins, ties at random) makes the same choice. Its
// targets are the pool's workers; a worker's data-parallel rank is then
// vLLM's own balancer's.
type prefixAffinity struct {
	seen *blockIndex
	rng  *rand.Rand
	set  []uint64
}

func newPrefixAffinity(p *poolRT, seed uint64) *prefixAffinity {
	x := newBlockIndex(p.count)
	return &prefixAffinity{seen: x, rng: workload.NewStreams(seed).Get(streamRouter + "/" + p.name), set: make([]uint64, x.words)}
}

// place returns the worker (pool index) for a prompt whose full blocks
// hashes name, and remembers the prompt there.
func (a *prefixAffinity) place(hashes []uint64) int {
	a.seen.longest(hashes, a.set)
	n := 0
	for _, w := range a.set {
		n += bits.OnesCount64(w)
	}
	k := a.rng.IntN(n)
	server := 0
	for w, m := range a.set {
		if c := bits.OnesCount64(m); k >= c {
			k -= c
			continue
		}
		for ; k > 0; k-- {
			m &= m - 1
		}
		server = w*64 + bits.TrailingZeros64(m)
		break
	}
	for _, h := range hashes {
		if s, ok := a.seen.slot.Get(h); !ok || a.seen.counts[int(s)*a.seen.targets+server] == 0 {
			a.seen.add(h, server)
		}
	}
	return server
}

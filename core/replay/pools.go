package replay

import (
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// poolRT is a pool at run time: its engine workers (global ids first …
// first+count·dp−1), worker by worker and, within a worker, rank by rank
// (a worker without data parallelism is one rank), and placement state.
type poolRT struct {
	*pool
	workers []engine.Worker // every rank of every worker
	first   int             // global id of workers[0]
	index   uint8           // position in the deployment's pools (report.Pass.Pool)
	rr      int             // round-robin cursor over workers
	dpRR    []int           // per worker, its round-robin cursor over ranks (dpRoundRobin)

	// lockstep pools: one batch per rank of the worker being priced
	batches []perf.Batch

	// the KV-aware placements' state (router.go), for their placements only
	kv  *kvRouter
	aff *prefixAffinity

	// a family that balances a worker's data-parallel ranks itself
	// (engine.RankBalancer), with the replay's held requests per rank
	// (heldLoad, of a global id) and a buffer for one worker's
	balancer engine.RankBalancer
	heldLoad func(w int) engine.Load
	loads    []engine.Load
	// a family whose lockstep ranks plan together (engine.GroupPlanner)
	planner engine.GroupPlanner
}

// place picks the rank for a new request of isl prompt tokens, whose full
// blocks hashes name, and returns its global id. The worker (vLLM server)
// first: round_robin cycles; least_outstanding takes the worker with the
// fewest requests on its ranks (engine.Worker.Outstanding: waiting, running,
// or handed off to it), the lowest id on ties; prefix_affinity the worker
// that got the longest prefix of the prompt (router.go). Then, with data
// parallelism, the rank the family's balancer picks (engine.RankBalancer:
// TensorRT-LLM's attention DP), else the rank of that worker with the lowest
// 4 × waiting + running, the lowest rank on ties: vLLM's internal DP load balancer
// (DPLBAsyncMPClient.get_core_engine_for_request, vllm/v1/engine/
// core_client.py), here with exact counts where vLLM's front end sees them
// refreshed every 100 ms, waiting including what the rank holds that its
// engine has not taken in yet (heldLoad: requests in input processing on the
// API server's loop, or in the engine core's input queue during a pass), as
// the front end adds each request it sends to its rank's waiting count at
// once; or, for a family that asks for it
// (engine.PoolPlan.DPRoundRobin), the worker's ranks in turn (SGLang's
// data-parallel controller, managers/data_parallel_controller.py
// round_robin_scheduler). kv_router picks the rank itself, as Dynamo routes
// to a worker's data-parallel rank, and records the request in pl.
func (p *poolRT) place(isl int, hashes []uint64, now int64, pl *kvPlaced) int {
	var server int
	switch p.placement {
	case config.PlacementKVRouter:
		return p.kv.place(isl, hashes, now, pl)
	case config.PlacementPrefixAffinity:
		server = p.aff.place(hashes[:min(len(hashes), isl/p.cfg.HashBlock())])
	case config.PlacementLeastOutstanding:
		best, load := 0, p.serverLoad(0)
		for i := 1; i < p.count; i++ {
			if l := p.serverLoad(i); l < load {
				best, load = i, l
			}
		}
		server = best
	case config.PlacementRoundRobin:
		server = p.rr
		p.rr = (p.rr + 1) % p.count
	default:
		panic("replay: placement " + p.placement + " has no policy")
	}
	rank := 0
	if p.balancer != nil {
		base := p.first + server*p.dp
		for r := range p.loads {
			p.loads[r] = p.heldLoad(base + r)
		}
		rank = p.balancer.Rank(p.workers[server*p.dp:(server+1)*p.dp], p.loads)
	} else if p.dp > 1 && p.dpRoundRobin {
		if p.dpRR == nil {
			p.dpRR = make([]int, p.count)
		}
		rank = p.dpRR[server]
		p.dpRR[server] = (rank + 1) % p.dp
	} else if p.dp > 1 {
		bestScore := -1
		for r := 0; r < p.dp; r++ {
			i := server*p.dp + r
			w := p.workers[i]
			if s := 4*(w.Waiting()+p.heldLoad(p.first+i).Requests) + w.Running(); bestScore < 0 || s < bestScore {
				rank, bestScore = r, s
			}
		}
	}
	return p.first + server*p.dp + rank
}

// serverLoad is the requests on worker i's ranks.
func (p *poolRT) serverLoad(i int) int {
	n := 0
	for r := 0; r < p.dp; r++ {
		n += p.workers[i*p.dp+r].Outstanding()
	}
	return n
}

// loopOf is the API server event loop (a global rank's index) of global rank w:
// the rank's own, or, when its server runs one API server for all its
// data-parallel ranks (pool.oneLoop), that of the server's first rank: vLLM's
// one AsyncLLM front end (its DPLBAsyncMPClient) processes the inputs of the
// requests it places on every rank and the outputs every rank sends back, on
// its one asyncio loop; SGLang's one TokenizerManager and DetokenizerManager
// serve every rank (engine.PoolPlan.OneFrontEnd).
func (p *poolRT) loopOf(w int) int {
	if p.oneLoop {
		return p.first + p.server(w)*p.dp
	}
	return w
}

// server is the pool-local worker (vLLM server) of global rank id w.
func (p *poolRT) server(w int) int { return (w - p.first) / p.dp }

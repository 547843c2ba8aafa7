package replay

import (
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
)

// poolRT is a pool at run time: its workers (global ids first … first+count−1)
// and placement state.
type poolRT struct {
	*pool
	workers []*engine.Worker
	first   int   // global id of workers[0]
	index   uint8 // position in the deployment's pools (report.Pass.Pool)
	rr      int   // round-robin cursor
}

// place picks a worker for a new request and returns its global id:
// round_robin cycles; least_outstanding takes the worker with the fewest
// requests on it (engine.Worker.Outstanding: waiting, running, or handed off
// to it), the lowest id on ties.
func (p *poolRT) place() int {
	switch p.placement {
	case config.PlacementLeastOutstanding:
		best, load := 0, p.workers[0].Outstanding()
		for i := 1; i < len(p.workers); i++ {
			if l := p.workers[i].Outstanding(); l < load {
				best, load = i, l
			}
		}
		return p.first + best
	case config.PlacementRoundRobin:
		w := p.rr
		p.rr = (p.rr + 1) % len(p.workers)
		return p.first + w
	}
	panic("replay: placement " + p.placement + " has no policy")
}

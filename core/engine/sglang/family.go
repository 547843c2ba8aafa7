package sglang

import (
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Family is SGLang as an engine family (engine.Family, engine.Planner).
type Family struct{}

var (
	_ engine.Family  = Family{}
	_ engine.Planner = Family{}
	_ engine.Worker  = (*Worker)(nil)
)

// Name is engine.backend's value for SGLang.
func (Family) Name() string { return "sglang" }

// NewRequest returns an SGLang request, bound to its shared part.
func (Family) NewRequest() *engine.Request {
	r := &Request{}
	r.Bind(r)
	return &r.Request
}

// NewWorker returns an idle SGLang worker (NewWorker).
func (Family) NewWorker(cfg engine.Config, pm perf.Model) (engine.Worker, error) {
	w, err := NewWorker(cfg, pm)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// BytesPerBlock is the simulator's memory per page of the token pool: the
// radix tree keeps a 16-byte piece per prefix hash block (16 tokens), and no
// per-token state, so a page of one token costs about a byte.
func (Family) BytesPerBlock() int64 { return 1 }

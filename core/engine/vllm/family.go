package vllm

import (
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// The shared types, under the names this package's code uses.
type (
	Config           = engine.Config
	Out              = engine.Out
	Sync             = engine.Sync
	PassStats        = engine.PassStats
	KVStats          = engine.KVStats
	PrefixCacheStats = engine.PrefixCacheStats
)

// Output kinds of a pass (engine.OutToken, engine.OutFinished).
const (
	OutToken    = engine.OutToken
	OutFinished = engine.OutFinished
)

// Family is vLLM v1 as an engine family (engine.Family).
type Family struct{}

var _ engine.Family = Family{}
var _ engine.Worker = (*Worker)(nil)

// Name is engine.backend's value for vLLM.
func (Family) Name() string { return "vllm" }

// NewRequest returns a vLLM request, bound to its shared part.
func (Family) NewRequest() *engine.Request {
	r := &Request{}
	r.Bind(r)
	return &r.Request
}

// NewWorker returns an idle vLLM worker (NewWorker).
func (Family) NewWorker(cfg Config, pm perf.Model) (engine.Worker, error) {
	w, err := NewWorker(cfg, pm)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// BytesPerBlock is the memory of one touched KV block (the package's
// BytesPerBlock).
func (Family) BytesPerBlock() int64 { return BytesPerBlock }

var _ engine.RankPlanner = Family{}

// PlanRanks fronts a worker's data-parallel ranks as its
// --api-server-count says (engine.RankPlanner): with one API server
// (config.Pool.APIServers), its one AsyncLLM front end (DPLBAsyncMPClient,
// vllm/v1/engine/core_client.py) processes the inputs of the requests it
// places on every rank and the outputs every rank sends back, on its one
// asyncio loop; with one per rank, each rank has its own.
func (Family) PlanRanks(in engine.PoolInput) engine.PoolPlan {
	return engine.PoolPlan{OneFrontEnd: in.Pool.APIServers() == 1}
}

// own is the vLLM request that r stands for (made by NewRequest or Reset).
func own(r *engine.Request) *Request { return r.Impl().(*Request) }

// Counters returns the worker's totals so far.
func (w *Worker) Counters() engine.Counters {
	return engine.Counters{KV: w.kv.stats, KVFree: w.kv.available(), KVCached: w.kv.idleHit, PrefixCache: w.prefix,
		BusyNs: w.BusyNs, Passes: w.Passes, RecomputedTokens: w.RecomputedTokens}
}

// LandSteady ends a pass of steady requests only (FinishSteadyPass).
func (w *Worker) LandSteady() (steady, unmeasured int) {
	return w.FinishSteadyPass(), w.steadyUnmeasured
}

// CruiseSteady ends a pass of steady requests only and starts the next when
// it is one too (FinishSteadyPass, then StartSteadyPass).
func (w *Worker) CruiseSteady() (steady, unmeasured int, durNs int64, ok bool) {
	steady, unmeasured = w.FinishSteadyPass(), w.steadyUnmeasured
	durNs, ok = w.StartSteadyPass()
	return steady, unmeasured, durNs, ok
}

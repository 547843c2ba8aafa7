package engine

import (
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Family is one serving engine (vLLM, SGLang, …): it makes the requests and
// the workers the replay drives. The replay gets it from core/engines by
// engine.backend and never learns which one it is.
type Family interface {
	// Name is the engine.backend value the family serves ("vllm").
	Name() string
	// NewRequest returns a request of this family, not on any worker: the
	// replay keeps one per request in flight and Resets it for each new
	// request (its buffers are reused).
	NewRequest() *Request
	// NewWorker returns an idle worker (one data-parallel rank) with an
	// empty KV cache, whose passes pm prices.
	NewWorker(cfg Config, pm perf.Model) (Worker, error)
	// BytesPerBlock is the simulator's memory for one KV block a worker's
	// cache has touched, bytes: what a replay's memory estimate charges per
	// block (blocks are materialised on first use).
	BytesPerBlock() int64
}

// RankBalancer is implemented by a family whose engine places each new
// request on one of a worker's data-parallel ranks itself (TensorRT-LLM's
// attention DP: the executor's shared request queue balanced over the
// ranks); without it the replay balances the ranks as vLLM's front end does.
type RankBalancer interface {
	// Rank returns the rank, among ranks (one worker's, of this family), for
	// a new request; held[r] is what the replay holds for rank r that has
	// not reached it yet (an overlap inbox).
	Rank(ranks []Worker, held []Load) int
}

// GroupPlanner is implemented by a family whose lockstep data-parallel
// ranks plan an iteration together (TensorRT-LLM's attention-DP balance);
// without it each rank plans its own (PlanPass).
type GroupPlanner interface {
	// PlanGroup is PlanPass for every rank of one worker (of this family),
	// all idle: whether any planned something.
	PlanGroup(ranks []Worker) bool
}

// ModelChecker is implemented by a family that refuses engine settings the
// model cannot run (TensorRT-LLM's MTP without the checkpoint's MTP layers);
// the replay asks it for each pool before the pool is sized.
type ModelChecker interface {
	// CheckModel returns a *config.Error naming the setting, or nil.
	CheckModel(in PoolInput) error
}

// Load is requests and their prompt tokens.
type Load struct{ Requests, PromptTokens int }

// Worker is one serving engine instance (TP GPUs acting as one): the calls
// the replay makes, at a request's arrival, around each pass, and along the
// P/D handoff. Every method is for a worker of the family that made the
// requests it is given. Times are integer ns of the virtual clock.
//
// The life of a request: CheckFits (or CheckPrefill) at arrival, then Add;
// passes (StartPass, or PlanPass + BeginPass for data-parallel ranks priced
// together, then FinishPass at the pass end) produce its tokens as Outs; a
// client cancel is Abort. A P/D decode worker takes its requests by Handoff
// (reserving KV for them, or queueing them until it can), ReserveWaiting
// after each pass, and KVArrived when the transfer is done; the prefill
// worker frees the held KV with ReleaseHeld.
type Worker interface {
	// CheckFits returns why a request of prompt and output tokens can never
	// run on this worker ("" if it can): the replay rejects it at arrival.
	CheckFits(prompt, output int) string
	// CheckPrefill is CheckFits for a P/D prefill worker (it holds the
	// prompt's KV only).
	CheckPrefill(prompt, output int) string
	// Add queues a request that arrived at the worker.
	Add(r *Request)
	// Abort removes r wherever it is on the worker and frees its KV (a client
	// cancel); a no-op for a request not on the worker.
	Abort(r *Request)

	// HasWork reports whether a request is waiting or running. (Whether a
	// pass is running the replay knows: it starts and ends them.)
	HasWork() bool
	// StartPass forms the next pass (admission, preemption, KV taken),
	// prices it through the worker's perf model and starts it: its duration
	// in ns (≥ 1), ok false when nothing can run. The worker must be idle.
	StartPass() (durNs int64, ok bool)
	// PlanPass forms the next pass without pricing it (false: nothing to
	// run), Batch is that pass, and BeginPass starts it for durNs: for
	// passes priced together (lockstep data-parallel ranks). A rank that
	// planned nothing still runs its (empty) pass.
	PlanPass() bool
	Batch() *perf.Batch
	BeginPass(durNs int64)
	// FinishPass applies the running pass at its end and returns its
	// explicit outputs in running order (reused by the next call) and
	// steady, the requests that each produced one token reported only by
	// count (a worker without steady decoding returns 0).
	FinishPass() (outs []Out, steady int)
	// SteadyUnmeasured is how many of the last steady count are Unmeasured.
	SteadyUnmeasured() int
	// Syncs are the requests the last StartPass or PlanPass took out of
	// steady decoding, with the tokens each produced implicitly.
	Syncs() []Sync

	// Cruising (core/replay/cruise.go): a pass of steady requests only ends
	// without an event. OnlySteady reports whether the running pass is one.
	// LandSteady ends it: its steady count, and how many of those are
	// Unmeasured. CruiseSteady is LandSteady, then the next pass started at
	// once when it is steady-only too (ok; otherwise nothing is started and
	// the caller forms the next pass): one call per cruising pass, the
	// replay's hottest path. A worker without steady decoding never has a
	// steady-only pass (OnlySteady is false).
	OnlySteady() bool
	LandSteady() (steady, unmeasured int)
	CruiseSteady() (steady, unmeasured int, durNs int64, ok bool)

	// P/D. ReleaseHeld frees the KV of a finished HoldKV request (prefill
	// side). Handoff takes a request (the client's prompt, output and
	// hashes) whose prompt's KV a prefill worker computed, and reports
	// whether its KV is reserved now (its transfer of r.PulledTokens, the
	// prompt tokens the worker's own cache lacks, may start) or it waits;
	// ReserveWaiting returns those reserved since, in order (reused by the
	// next call); KVArrived queues a reserved handoff whose KV has arrived.
	// CheckHandoff is CheckFits for a handoff.
	ReleaseHeld(r *Request)
	Handoff(r *Request) bool
	ReserveWaiting() []*Request
	KVArrived(r *Request)
	CheckHandoff(prompt, output int) string

	// KV events, for a KV-aware router: WatchKV makes the worker record its
	// KVEvents from now on (a worker nobody watches keeps none); KVEvents
	// returns those since the last call, in order, valid until the
	// worker's next pass, handoff or admission records more.
	WatchKV()
	KVEvents() []KVEvent

	// Load, for placement: Outstanding = Waiting + Running, a P/D decode
	// worker's handoffs counted as waiting.
	Outstanding() int
	Waiting() int
	Running() int
	// PassStats describes the running pass (the timeline); Counters the
	// worker's totals so far (the report's metadata).
	PassStats() PassStats
	Counters() Counters
}

// Config is what one worker needs besides its perf model.
type Config struct {
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	BlockSize           int  // tokens per KV block
	NumBlocks           int  // KV capacity of the worker, in blocks
	MaxModelLen         int  // prompt + output tokens a request may have
	PrefixCaching       bool // reuse cached full prompt blocks
	// PerTokenDecode handles every running request at every pass (no steady
	// set, steady.go; the running set is walked request by request, as vLLM's
	// scheduler does): each token is an OutToken. A replay whose client can
	// cancel requests sets it, since it pools a request's gaps only once the
	// request completes. Reports are the same either way.
	PerTokenDecode bool
	// DecodeWindows are the perf model's decode windows (perf.DecodeWindows,
	// at most maxWindows): each pass's Batch.DecodeWindowSums holds
	// Σ min(kv+1, W) for each, kept in aggregate for the steady requests
	// (steady.go). Empty for a model that reads only the KV sum.
	DecodeWindows []int
	// StateBlocks is the blocks each running request holds for its
	// recurrent state besides its KV blocks (a hybrid model's linear-attention
	// or Mamba layers: vLLM's hybrid KV cache manager gives each state
	// group one block a request, perf.HybridKV), taken at its admission and
	// released with its KV; 0 for a model without recurrent state.
	StateBlocks int
	// MambaAlign is vLLM's align mode of a hybrid model's prefix cache
	// (mamba_cache_mode "align", with PrefixCaching): a prefill chunk ends
	// on a block boundary unless it ends the prompt, the state at each
	// boundary a pass ends on is cached with the block it ends, and a hit
	// stops at the last cached state (vllm/v1/core/sched/scheduler.py
	// _mamba_block_aligned_split, MambaManager).
	MambaAlign bool
	// Options are the family's own settings beyond these (TensorRT-LLM's
	// capacity scheduler policy, CUDA-graph batch sizes, SGLang's server
	// arguments, …), of the type its package defines; core/engines makes
	// them from the spec, or the family's plan (Planner). nil: the family's
	// defaults (a family without options ignores it).
	Options any
	// HashBlockTokens is the tokens of each prefix hash the replay gives a
	// request (Request.Hashes); 0: BlockSize.
	HashBlockTokens int
	// PartialBlockHash: Hashes also ends with the hash of the known
	// content's last, partial block (Request.PartialTokens), for an engine
	// that matches prefixes token by token.
	PartialBlockHash bool
}

// HashBlock is the tokens of each prefix hash (HashBlockTokens, else
// BlockSize).
func (c *Config) HashBlock() int {
	if c.HashBlockTokens > 0 {
		return c.HashBlockTokens
	}
	return c.BlockSize
}

// Request is what the replay and every engine know of one request. The
// replay fills the first five fields (Reset) and HoldKV and Unmeasured; the
// worker owns the rest while the request is on it. Each engine's request
// type embeds it and binds itself to it (Bind), so that a worker finds its
// own request from the one the replay hands it in O(1); the engine's own
// state starts afresh when the request reaches a worker (Worker.Add,
// Worker.Handoff).
type Request struct {
	ID     int64    // the replay's request id, echoed in outputs
	Prompt int      // prompt tokens
	Output int      // output tokens to produce (0: prefill only)
	Hashes []uint64 // prefix-cache hash chain of the prompt's full blocks (nil: no reuse)
	// Groups is the prefix group key of each block of Hashes (workload.BlockHashesGroups).
	Groups []uint64
	// PartialTokens, when > 0, says that the last hash of Hashes is that of
	// a partial block of this many tokens (Config.PartialBlockHash).
	PartialTokens int

	// CachedTokens is the prefix-cache hit of the request's first admission.
	CachedTokens int
	// Preemptions counts how often the request was preempted and recomputed.
	Preemptions int
	// Generated counts output tokens produced so far.
	Generated int
	// HoldKV (P/D prefill side): when the request finishes, its KV blocks stay
	// held until the replay calls ReleaseHeld (after the KV transfer).
	HoldKV bool
	// Unmeasured: the replay does not measure the request's tokens (a load
	// generator's warm-up request). It is scheduled like any other; FinishPass
	// only counts its steady tokens apart from the measured ones.
	Unmeasured bool
	// PulledTokens (P/D decode side) is the prompt tokens the KV transfer
	// brings, set when a handoff's KV is reserved (Worker.Handoff): the
	// prompt less what the decode worker's own prefix cache held.
	PulledTokens int

	impl any
}

// Bind makes impl, the engine's request that embeds r, the one r stands for.
func (r *Request) Bind(impl any) { r.impl = impl }

// Impl is the engine's request r stands for (Bind).
func (r *Request) Impl() any { return r.impl }

// Reset makes r a new request (id, prompt and output tokens, prefix hashes
// and their group keys), the rest of the shared part cleared; it stays bound
// to its engine's request, whose state the next worker it reaches renews
// (keeping its buffers: a replay reuses its requests in flight). r must not
// be on a worker. Small enough to inline: once per request.
func (r *Request) Reset(id int64, prompt, output int, hashes, groups []uint64) {
	*r = Request{ID: id, Prompt: prompt, Output: output, Hashes: hashes, Groups: groups, impl: r.impl}
}

// Output kinds of a pass.
const (
	// OutToken: the request produced one output token at the pass end.
	OutToken = iota
	// OutFinished: the request finished (after its last token, or after its
	// prefill when it has no output); its KV blocks are released.
	OutFinished
)

// Out is one event of a finished pass.
type Out struct {
	Req  *Request
	Kind int
}

// Sync reports that a request's implicit decoding ended: it produced Tokens
// output tokens implicitly, in the passes up to the one before the pass being
// formed (its last one in that pass's predecessor). Syncs are reported by
// StartPass (Worker.Syncs).
type Sync struct {
	Req    *Request
	Tokens int
}

// KVEvent is one change of a worker's prefix cache as a KV-aware router sees
// it, vLLM's KV events (vllm/distributed/kv_events.py, published by
// vllm/v1/core/block_pool.py): BlockStored when a full block's content is
// cached (cache_full_blocks, as the step that fills it is scheduled),
// BlockRemoved when a cached block's content is evicted for new content.
// Hash is the block's hash, an entry of the Request.Hashes that named it.
// Blocks only their own request can name (a prompt without content ids,
// generated tokens) send none: no other request's hashes can match them.
type KVEvent struct {
	Hash   uint64
	Stored bool // true: BlockStored; false: BlockRemoved
}

// PassStats describes the pass a worker is running, as formed at its start
// (after scheduling: admissions and preemptions applied).
type PassStats struct {
	// PrefillTokens is the prompt tokens the pass computes, over
	// PrefillRequests chunks; DecodeRequests is the requests decoding one
	// token each.
	PrefillTokens, PrefillRequests, DecodeRequests int
	// Running is the running set (scheduled or not: a request whose turn the
	// token budget did not reach still holds its blocks); Waiting is the
	// queue left behind (waiting requests and, P/D decode side, handoffs
	// whose KV arrived).
	Running, Waiting int
	// KVBlocksUsed is the blocks held by requests; KVBlocksCached the
	// unreferenced blocks that still hold prefix-cache content (evictable).
	KVBlocksUsed, KVBlocksCached int
}

// Counters are a worker's totals so far.
type Counters struct {
	// KV counts the block manager's transitions; KVFree is the unreferenced
	// blocks (free or cached), KVCached those still holding cached content.
	KV               KVStats
	KVFree, KVCached int
	// PrefixCache counts the prefix-cache lookups at admission.
	PrefixCache PrefixCacheStats
	// BusyNs is the time spent in passes; Passes the passes run.
	BusyNs, Passes int64
	// RecomputedTokens counts tokens whose KV a preempted request had
	// computed and computed again when it was admitted again.
	RecomputedTokens int64
}

// KVStats counts block transitions; at the end of a replay (no request holding
// a block) Allocated + Reused = Released (INV-2), and Free + Cached = Capacity.
type KVStats struct {
	// Allocated counts blocks taken from the free pool or evicted from the cache.
	Allocated int64
	// Reused counts prefix-cache hits that took an unreferenced cached block.
	Reused int64
	// Released counts blocks whose last holder let go (to the free pool or the cache).
	Released int64
	// Evicted counts cached blocks dropped to serve an allocation.
	Evicted int64
}

// PrefixCacheStats counts the prefix-cache lookups of a worker's admissions,
// in tokens, under vLLM v1's names (vllm/v1/metrics/stats.py PrefixCacheStats,
// recorded by KVCacheManager.record_prefix_cache_stats): a request admitted
// for the first time counts in Requests, Queries (its tokens) and Hits (its
// tokens found cached, its CachedTokens); a preempted request admitted again
// counts in the Preempted* fields instead, so that recomputation never
// inflates the first-admission hit rate. Nothing is counted with prefix
// caching off (the engine skips the lookup).
type PrefixCacheStats struct {
	Requests, Queries, Hits                            int64
	PreemptedRequests, PreemptedQueries, PreemptedHits int64
}

// BlocksFor is the number of KV blocks of blockSize tokens that hold n tokens.
func BlocksFor(n, blockSize int) int { return (n + blockSize - 1) / blockSize }

// Planner is a family that sizes its pools' workers from the spec: the
// engine's own rules for its KV pool, batch limits and start-up checks. A
// family that is not one is sized by the replay's vLLM rules
// (core/replay/build.go).
type Planner interface {
	Plan(in PoolInput) (PoolPlan, error)
}

// RankPlanner is a family the replay sizes by its own rules (not a Planner)
// whose server still decides how a pool's data-parallel ranks are fronted
// (vLLM's --api-server-count, TensorRT-LLM's one trtllm-serve process for
// all its attention-DP ranks):
// of the plan it returns the replay reads DPRoundRobin and OneFrontEnd only.
type RankPlanner interface {
	PlanRanks(in PoolInput) PoolPlan
}

// PoolInput is one pool as the replay builds it.
type PoolInput struct {
	Spec    *config.Spec
	Arch    *model.Arch
	Sys     *hardware.System
	KVDtype model.Dtype
	// Name is "aggregated", "prefill" or "decode"; Field its spec path
	// (engine.workers.aggregated), for errors.
	Name, Field string
	// Pool is the pool's spec (engine.workers.aggregated, …prefill, …decode).
	Pool   *config.Pool
	TP, DP int
	EP     bool
}

// PoolPlan is a family's sizing of one pool.
type PoolPlan struct {
	// Config is the worker's (the replay sets PerTokenDecode and
	// DecodeWindows).
	Config Config
	// MaxPassTokens is the most tokens one pass computes (the perf model's
	// tabulation bound); CUDAGraphMaxTokens the largest decode pass that
	// runs as a CUDA graph (perf.CUDAGraphMaxTokens).
	MaxPassTokens, CUDAGraphMaxTokens int
	// Overlap: the scheduler forms pass n+1 while pass n runs, so a request
	// that arrives during a pass first runs in the pass after next (as vLLM's
	// async scheduling: core/replay/loop.go admit).
	Overlap bool
	// All2AllBackend is the MoE all-to-all the engine's own arguments
	// choose (config.All2All*: SGLang's --moe-a2a-backend deepep), priced
	// as a pool's all2all_backend; "": the pool's.
	All2AllBackend string
	// Args are the engine arguments as resolved (the report's
	// metadata.pools[].engine_args).
	Args map[string]any
	// DPRoundRobin: a worker's data-parallel ranks take its new requests in
	// turn (SGLang's data-parallel controller, load_balance_method
	// round_robin) instead of the least loaded rank (vLLM's).
	DPRoundRobin bool
	// OneFrontEnd: a worker's data-parallel ranks share one front end, one
	// event loop that processes every request's input and hands out every
	// rank's outputs (the replay's API server loop of the worker's first
	// rank, as vLLM's --api-server-count 1: config.Pool.APIServerCount);
	// else each rank has its own. Read from a Planner's and a RankPlanner's
	// plan.
	OneFrontEnd bool
}

package trtllm

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Policy is scheduler_config.capacity_scheduler_policy.
type Policy uint8

const (
	// GuaranteedNoEvict admits a request only when the blocks it needs to
	// run to completion (prompt + max_tokens) are free after every running
	// request's own remaining need is set aside: nothing is ever paused
	// (GuaranteedNoEvictScheduler, cpp/tensorrt_llm/batch_manager/
	// capacityScheduler.cpp).
	GuaranteedNoEvict Policy = iota
	// MaxUtilization admits by the blocks of the next iteration alone and,
	// when a request does not fit, pauses the newest started request after
	// it (MaxUtilizationScheduler): its blocks are freed and it computes
	// its prompt and generated tokens again as a context later
	// (PyExecutor._pause_requests, LlmRequest::pause).
	MaxUtilization
)

// Chunking is scheduler_config.context_chunking_policy.
type Chunking uint8

const (
	// FirstComeFirstServed: the iteration's context budget goes to the
	// contexts in order, each as much of its remaining prompt as is left
	// (a cut chunk ends on a block boundary).
	FirstComeFirstServed Chunking = iota
	// EqualProgress: every context grows by tokens_per_block in turn until
	// the budget is used.
	EqualProgress
)

// Options are TensorRT-LLM's settings beyond engine.Config (engine.Config.Options;
// core/engines makes them from engine.trtllm).
type Options struct {
	Policy Policy
	// ChunkedPrefill is enable_chunked_prefill, Chunking its policy.
	ChunkedPrefill bool
	Chunking       Chunking
	// CUDAGraphBatchSizes are the captured batch sizes, ascending
	// (CUDAGraphBatchSizes); empty: no CUDA graphs. CUDAGraphPadding is
	// cuda_graph_config.enable_padding.
	CUDAGraphBatchSizes []int
	CUDAGraphPadding    bool
	// StreamInterval is stream_interval (0 or 1: every iteration).
	StreamInterval int
	// MTPDraftTokens is speculative_config.num_nextn_predict_layers (0: no
	// speculative decoding); MTPAcceptance[i] the probability that draft
	// i + 1 is accepted when those before it were (at most MTPDraftTokens
	// rates; a draft beyond them is never accepted).
	MTPDraftTokens int
	MTPAcceptance  []float64
	// ADPBalance is attention_dp_config.enable_balance with
	// enable_attention_dp (Family.PlanGroup), ADPTimeoutIters and
	// ADPBatchingWaitIters its timeout_iters and batching_wait_iters.
	ADPBalance           bool
	ADPTimeoutIters      int
	ADPBatchingWaitIters int
	// BatchWaitTimeoutIters and BatchWaitMaxTokensRatio are
	// batch_wait_timeout_iters and batch_wait_max_tokens_ratio, without
	// attention DP (Worker.batchWait); both 0: off.
	BatchWaitTimeoutIters   int
	BatchWaitMaxTokensRatio float64
	// StateSlots is the recurrent-state slots of a hybrid model's worker
	// (linear-attention or Mamba layers; 0: a model without them): the
	// mamba cache manager holds one slot a request from the resources of its
	// first scheduled iteration to their release, and a context without one
	// is scheduled only while one is free (state.go).
	StateSlots int
}

// The shared types, under the names this package's code uses.
type (
	Config    = engine.Config
	Out       = engine.Out
	PassStats = engine.PassStats
)

// Family is TensorRT-LLM's PyTorch backend as an engine family (engine.Family).
type Family struct{}

var _ engine.Family = Family{}
var _ engine.Worker = (*Worker)(nil)

// Name is engine.backend's value for TensorRT-LLM.
func (Family) Name() string { return "trtllm" }

// NewRequest returns a TensorRT-LLM request, bound to its shared part.
func (Family) NewRequest() *engine.Request {
	r := &Request{}
	r.Bind(r)
	return &r.Request
}

// NewWorker returns an idle worker (NewWorker).
func (Family) NewWorker(cfg Config, pm perf.Model) (engine.Worker, error) {
	w, err := NewWorker(cfg, pm)
	if err != nil {
		return nil, err
	}
	return w, nil
}

var _ engine.RankBalancer = Family{}

// Rank is TensorRT-LLM's attention-DP placement of a new request on one of a
// worker's ranks (tensorrt_llm/_torch/pyexecutor/executor_request_queue.py,
// _schedule_attention_dp_requests and _balance_requests_across_ranks): the
// ranks are gathered with their active requests and those requests' prompt
// tokens; only a rank below the expected count,
// max(⌈(all active + the new one) / ranks⌉, the most any rank has), takes
// it, the one with the fewest active prompt tokens, then the fewest
// requests, then the lowest rank (the heap's order). Active here also counts
// what the replay holds for the rank (held). TensorRT-LLM takes new requests
// from one queue at each iteration, while every rank is below
// max_batch_size; here a request is placed when it arrives and waits on its
// rank.
func (Family) Rank(ranks []engine.Worker, held []engine.Load) int {
	n, most := 0, 0
	for r, w := range ranks {
		k := w.(*Worker).activeLoad().Requests + held[r].Requests
		n += k
		most = max(most, k)
	}
	expected := max((n+1+len(ranks)-1)/len(ranks), most)
	best, bestLoad := -1, engine.Load{}
	for r, w := range ranks {
		l := w.(*Worker).activeLoad()
		l.Requests += held[r].Requests
		l.PromptTokens += held[r].PromptTokens
		if l.Requests >= expected {
			continue
		}
		if best < 0 || l.PromptTokens < bestLoad.PromptTokens ||
			l.PromptTokens == bestLoad.PromptTokens && l.Requests < bestLoad.Requests {
			best, bestLoad = r, l
		}
	}
	return best
}

var _ engine.RankPlanner = Family{}

// PlanRanks gives a worker's attention-DP ranks one front end
// (engine.RankPlanner): trtllm-serve runs one OpenAI server over one LLM
// (tensorrt_llm/serve/openai_server.py), whose one executor proxy spawns the
// world of MPI ranks (tensorrt_llm/llmapi/llm.py, MpiPoolSession of
// parallel_config.world_size; tensorrt_llm/executor/proxy.py,
// ExecutorBindingsProxy) and talks to the leader rank alone over one
// request and one result queue; the executor's request queue spreads the
// requests over the attention-DP ranks, and its _enqueue_responses
// (tensorrt_llm/_torch/pyexecutor/py_executor.py) gathers every rank's
// responses to rank 0 (tp_gather). So every prompt is tokenized
// (BaseLLM.generate_async) and every response handled (GenerationResult, on
// the proxy's dispatch thread and the server's asyncio loop) by the one
// process, for every rank. With num_postprocess_workers > 0 the
// detokenization moves to other processes, which is not simulated.
func (Family) PlanRanks(engine.PoolInput) engine.PoolPlan {
	return engine.PoolPlan{OneFrontEnd: true}
}

var _ engine.GroupPlanner = Family{}

// PlanGroup plans the iteration of a worker's attention-DP ranks, which run
// it together: each rank schedules (capacity and micro-batch schedulers),
// then, with attention_dp_config.enable_balance, PyExecutor's
// _balance_adp_requests decides from every rank's scheduled counts (an
// all-gather) whether the contexts run: when every rank has a context and
// fewer than max_batch_size generation requests, they do (after
// batching_wait_iters more iterations if every rank also generates);
// otherwise they wait, unless timeout_iters iterations have passed so or some
// rank has no generation request. A rank with nothing active runs
// attention DP's dummy generation request (_pad_attention_dp_dummy_request)
// and counts as generating. The ranks then take their resources and form
// their batches.
func (Family) PlanGroup(ranks []engine.Worker) bool {
	lead := ranks[0].(*Worker)
	for _, rw := range ranks {
		rw.(*Worker).schedule()
	}
	if lead.opt.ADPBalance {
		allCtx, allGen, allFree := true, true, true
		for _, rw := range ranks {
			w := rw.(*Worker)
			gen := len(w.gen)
			if !w.HasWork() {
				gen = 1 // the dummy request
			}
			allCtx = allCtx && len(w.ctx) > 0
			allGen = allGen && gen > 0
			allFree = allFree && gen < w.cfg.MaxNumSeqs
		}
		st := &lead.adp
		hold := false
		if allFree && allCtx {
			st.waiting = 0
			if allGen {
				if st.batching < lead.opt.ADPBatchingWaitIters {
					st.batching++
					hold = true
				} else {
					st.batching = 0
				}
			}
		} else {
			st.waiting++
			hold = true
			if st.waiting >= lead.opt.ADPTimeoutIters || !allGen {
				st.waiting, hold = 0, false
			}
		}
		if hold {
			for _, rw := range ranks {
				w := rw.(*Worker)
				w.ctx = w.ctx[:0]
			}
		}
	}
	planned := false
	for _, rw := range ranks {
		planned = rw.(*Worker).finishPlan() || planned
	}
	return planned
}

// BytesPerBlock is the simulator's memory for one touched KV block: its
// refcount, content hash, LRU links and the block id in its holder's list.
func (Family) BytesPerBlock() int64 { return BytesPerBlock }

// BytesPerBlock is the memory of one touched KV block, bytes (kvPool's
// slices, and a map entry when it holds content).
const BytesPerBlock = 4 + 8 + 1 + 4 + 4 + 4 + 24

// own is the TensorRT-LLM request that r stands for.
func own(r *engine.Request) *Request { return r.Impl().(*Request) }

// optionsOf reads cfg.Options (nil: the defaults, a zero Options).
func optionsOf(cfg Config) (Options, error) {
	switch o := cfg.Options.(type) {
	case nil:
		return Options{}, nil
	case Options:
		return o, nil
	case *Options:
		return *o, nil
	}
	return Options{}, fmt.Errorf("trtllm: engine options of type %T, want trtllm.Options", cfg.Options)
}

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
	// speculative decoding), MTPAcceptance the probability that a draft
	// token is accepted when those before it were.
	MTPDraftTokens int
	MTPAcceptance  float64
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

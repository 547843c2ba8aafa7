package config

// Spec is one replay: a deployment (Engine), a workload (Traffic) and how to run it
// (Execution). Field names are the YAML/JSON keys of the spec; they are a contract.
type Spec struct {
	Engine    Engine    `json:"engine"`
	Traffic   Traffic   `json:"traffic"`
	Execution Execution `json:"execution"`
}

// Engine describes the serving deployment.
type Engine struct {
	// Model is a Hugging Face name (built in, or looked up in ModelConfigDir as
	// Org--Name_config.json) or a path to a config.json.
	Model string `json:"model"`
	// ModelConfigDir is the folder of Org--Name_config.json files; empty means
	// built-in models and paths only.
	ModelConfigDir string `json:"model_config_dir,omitempty"`
	// System is a built-in GPU system name (hardware.BuiltinNames: h100_sxm, b200_sxm, …)
	// or a path to a system YAML in the AIConfigurator schema.
	System string `json:"system"`
	// Backend is the serving framework, BackendVLLM or BackendTRTLLM.
	Backend string `json:"backend"`
	// BackendVersion is the engine's version as its release or image names it
	// ("0.15.1", "0.8.1.post2", "0.14.0rc1", "nightly-5b8c30d"): the defaults
	// that release sets follow from it (backend_version.go: VLLMDefaults) and
	// engine.perf's kernel tables are that release's when not named. Absent:
	// the defaults of defaults.go.
	BackendVersion string `json:"backend_version,omitempty"`
	// Perf prices each engine pass (variants.go).
	Perf      Perf      `json:"perf"`
	Workers   Workers   `json:"workers"`
	Scheduler Scheduler `json:"scheduler"`
	// Tokenization is the send leg (client → engine); absent = 0.
	Tokenization *Tokenization `json:"tokenization,omitempty"`
	// Detokenization is each worker's FIFO output processor; absent = none
	// (the client receives outputs at their pass end).
	Detokenization *Detokenization `json:"detokenization,omitempty"`
	// Quantization overrides the weight and KV cache formats; absent = the
	// checkpoint's weights and DefaultKVCacheDtype.
	Quantization *Quantization `json:"quantization,omitempty"`
	// TRTLLM holds TensorRT-LLM's options (engine.backend trtllm only;
	// trtllm.go), in place of engine.scheduler.
	TRTLLM *TRTLLM `json:"trtllm,omitempty"`
	// MoEBackend is vLLM's --moe-backend, the fused-MoE kernel of the routed
	// experts (MoEBackend* values; VLLM_MXFP4_USE_MARLIN=1 is marlin,
	// VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 flashinfer_trtllm_afp8); empty
	// or auto = vLLM's choice for the format and GPU, as the perf tables
	// timed it. Only the aic source reads it (the kernel's own rows).
	MoEBackend string `json:"moe_backend,omitempty"`
	// SGLang holds SGLang's server arguments (engine.backend sglang only;
	// sglang.go), in place of engine.scheduler.
	SGLang *SGLang `json:"sglang,omitempty"`
}

// Tokenization: a request sent at t with P prompt tokens reaches the engine at
// t + SendMs + PerTokenUs × P: the send leg, then the API server's input
// processing (request parsing, chat template, tokenization, validation), which
// grows with the prompt. Without SharedEventLoop requests in flight are
// processed side by side, not one at a time.
type Tokenization struct {
	SendMs float64 `json:"send_ms"`
	// PerTokenUs is the input processing per prompt token, µs (0: none).
	PerTokenUs float64 `json:"per_token_us,omitempty"`
	// SharedEventLoop: the input processing runs on the worker's output
	// processor (engine.detokenization), the API server's one asyncio event
	// loop, FIFO with its output handling: a request that reaches the API
	// server (SendMs after its send) waits for the jobs ahead of it (the
	// output handling of the passes that ended before, the input processing
	// of the requests that came before) and reaches the engine when its own
	// PerTokenUs × P is done. vLLM's V1 front end runs both in one process and
	// loop (vllm/v1/engine/async_llm.py: the output_handler task beside the
	// request handlers of vllm/entrypoints/openai), so it is on by default
	// for a spec naming engine.backend_version 0.8.0 or later (the V1
	// engine's default release), for engine.backend trtllm (trtllm-serve
	// tokenizes and handles every response on its one asyncio loop), and
	// always with engine.backend sglang (SGLang's TokenizerManager
	// tokenizes and dispatches the outputs on the HTTP server's one loop:
	// managers/tokenizer_manager.py); absent otherwise. Aggregated workers
	// only (a P/D deployment keeps the parallel intake).
	SharedEventLoop *bool `json:"shared_event_loop,omitempty"`
}

// Shared reports whether t's input processing shares the API server's event
// loop with the output handling (SharedEventLoop set and true).
func (t *Tokenization) Shared() bool {
	return t != nil && t.SharedEventLoop != nil && *t.SharedEventLoop
}

// Detokenization: each pass with outputs is one job of BaseUs + PerTokenUs ×
// tokens on its worker's output processor; the client receives the pass's
// outputs when the job completes.
type Detokenization struct {
	BaseUs     float64 `json:"base_us"`
	PerTokenUs float64 `json:"per_token_us"`
}

// Quantization is the numeric format of the GEMM weights (bfloat16, fp8,
// fp8_block, nvfp4; bf16 is an alias of bfloat16; empty = the checkpoint's,
// from config.json quantization_config or a ModelOpt hf_quant_config.json)
// and of the KV cache (vLLM's --kv-cache-dtype names: auto, bfloat16, fp8,
// fp8_e4m3, fp8_e5m2, and the alias bf16; fp8_e4m3 is fp8, and fp8_e5m2 is
// priced as fp8, one byte an element; empty = DefaultKVCacheDtype, auto: the
// checkpoint's calibrated format, else bfloat16).
type Quantization struct {
	Weights string `json:"weights,omitempty"`
	KVCache string `json:"kv_cache,omitempty"`
}

// Workers describes the worker pools: either one aggregated pool whose workers
// run prefill and decode, or a prefill pool and a decode pool (P/D
// disaggregation) joined by KV transfers. Exactly one of the two is set.
type Workers struct {
	Aggregated    *Pool          `json:"aggregated,omitempty"`
	Disaggregated *Disaggregated `json:"disaggregated,omitempty"`
}

// Disaggregated is P/D disaggregation: prefill workers compute prompts, their KV
// moves to a decode worker, which produces every output token.
type Disaggregated struct {
	Prefill    Pool       `json:"prefill"`
	Decode     Pool       `json:"decode"`
	KVTransfer KVTransfer `json:"kv_transfer"`
}

// KVTransfer prices moving a prompt's KV from a prefill to a decode worker:
// time = bytes / (BandwidthGBPerS × 1e9) + LatencyMs, bytes = prompt tokens ×
// KV bytes per token (the model's, all layers and heads, unless given).
type KVTransfer struct {
	// BandwidthGBPerS is the transfer's bandwidth, GB/s; left out: the
	// system's network, one NIC (node.inter_node_bw) per attention rank
	// sending its share of the KV in parallel (replay's planTransfer).
	BandwidthGBPerS float64 `json:"bandwidth_gb_per_s,omitempty"`
	LatencyMs       float64 `json:"latency_ms"`
	// KVBytesPerToken overrides the model's KV bytes per token (0 = the model's).
	KVBytesPerToken int64 `json:"kv_bytes_per_token,omitempty"`
}

// Pool is a set of identical workers. A worker is one vLLM server instance
// of TP × DataParallelSize GPUs.
type Pool struct {
	Count int `json:"count"`
	// TP is the tensor-parallel degree of one worker (vLLM
	// --tensor-parallel-size; GPUs per data-parallel rank).
	TP int `json:"tp"`
	// DataParallelSize is vLLM's --data-parallel-size: the worker's
	// data-parallel ranks, each with TP GPUs, its own scheduler and KV cache,
	// requests spread over them by vLLM's load balancer. A mixture-of-experts
	// model's MoE layers span all TP × DataParallelSize GPUs and run in
	// lockstep across the ranks. Absent = 1.
	DataParallelSize *int `json:"data_parallel_size,omitempty"`
	// EnableExpertParallel is vLLM's --enable-expert-parallel: the routed
	// experts are spread whole over the TP × DataParallelSize GPUs instead of
	// each being split across them (mixture-of-experts models only).
	EnableExpertParallel bool `json:"enable_expert_parallel,omitempty"`
	// All2AllBackend is vLLM's --all2all-backend: how a data-parallel,
	// expert-parallel worker's MoE layers dispatch tokens to the experts'
	// GPUs and combine the results (All2All* values); empty = vLLM's
	// default, allgather_reducescatter. Without data and expert parallelism
	// there is no dispatch and it changes nothing.
	All2AllBackend string `json:"all2all_backend,omitempty"`
	// APIServerCount is vLLM's --api-server-count: the API server processes
	// of one server, each one asyncio event loop that runs the input
	// processing and output handling of its requests
	// (engine.tokenization.shared_event_loop). 1: one loop for all the
	// server's data-parallel ranks, vLLM's default before 0.15.0
	// (vllm/entrypoints/openai/cli_args.py, default=1); data_parallel_size:
	// one loop per rank, the default from 0.15.0 (pull request 32525,
	// vllm/entrypoints/cli/serve.py: "Defaulting api_server_count to
	// data_parallel_size"; the simulation gives rank r's requests to loop r,
	// where vLLM's API servers take connections as the OS hands them out and
	// each balances over every rank). Absent: data_parallel_size, unless
	// engine.backend_version is a release before 0.15.0 (then 1). Only these
	// two values are simulated; vLLM only.
	APIServerCount *int `json:"api_server_count,omitempty"`
	// Placement is PlacementRoundRobin, PlacementLeastOutstanding,
	// PlacementKVRouter or PlacementPrefixAffinity.
	Placement string `json:"placement"`
	// KVRouter tunes placement kv_router (absent with another placement;
	// filled with Dynamo's defaults when left out).
	KVRouter *KVRouter `json:"kv_router,omitempty"`
	// TRTLLM (engine.backend trtllm only) is this pool's servers' own
	// options in place of engine.trtllm: a P/D context or generation
	// server's extra_llm_api_options. Absent: engine.trtllm.
	TRTLLM *TRTLLM `json:"trtllm,omitempty"`
	// SGLang is this pool's own SGLang server arguments (engine.backend
	// sglang only): a P/D prefill and decode server are launched with
	// their own flags. Its fields left out take engine.sglang's (Normalize
	// fills them); absent: engine.sglang as it is.
	SGLang *SGLang `json:"sglang,omitempty"`
	// Scheduler (engine.backend vllm only) is this pool's servers' own batch
	// limits in place of engine.scheduler's: a P/D prefill and decode server
	// are each a `vllm serve` with its own --max-num-seqs and
	// --max-num-batched-tokens. A field left out takes engine.scheduler's.
	Scheduler *PoolScheduler `json:"scheduler,omitempty"`
}

// PoolScheduler is a vLLM pool's own batch limits (Pool.Scheduler); 0 (left
// out) is engine.scheduler's value.
type PoolScheduler struct {
	// MaxNumSeqs is vLLM's --max-num-seqs for this pool's servers.
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
	// MaxNumBatchedTokens is vLLM's --max-num-batched-tokens for this pool's
	// servers.
	MaxNumBatchedTokens int `json:"max_num_batched_tokens,omitempty"`
}

// Limits are the pool's max_num_seqs and max_num_batched_tokens: its own
// where it gives them (Scheduler), else sc's (engine.scheduler).
func (p *Pool) Limits(sc *Scheduler) (seqs, tokens int) {
	seqs, tokens = sc.MaxNumSeqs, sc.MaxNumBatchedTokens
	if o := p.Scheduler; o != nil {
		if o.MaxNumSeqs > 0 {
			seqs = o.MaxNumSeqs
		}
		if o.MaxNumBatchedTokens > 0 {
			tokens = o.MaxNumBatchedTokens
		}
	}
	return seqs, tokens
}

// KVRouter is Dynamo's KV router (lib/kv-router, the scheduler's default
// worker selector): each worker's cost is KVOverlapScoreWeight × prefill
// blocks + decode blocks, where prefill blocks are the prompt tokens it would
// have to compute (its active prefills and this prompt less the blocks its
// cache holds) / block_size and decode blocks the KV blocks of its active
// requests with this one; the lowest cost wins at RouterTemperature 0, else a
// softmax over the costs draws one (docs/routing.md).
type KVRouter struct {
	// KVOverlapScoreWeight is Dynamo's --kv-overlap-score-weight, ≥ 0: how
	// much prefill work (the cache hit) counts against decode load.
	KVOverlapScoreWeight float64 `json:"kv_overlap_score_weight"`
	// RouterTemperature is Dynamo's --router-temperature, ≥ 0: 0 takes the
	// lowest cost; above, workers are drawn by a softmax of their normalised
	// costs (the "router" random stream).
	RouterTemperature float64 `json:"router_temperature"`
	// KVEventLagMs is how long a worker's KV event (a block cached or
	// evicted) takes to reach the router's index, ms, ≥ 0 (0: at once).
	KVEventLagMs float64 `json:"kv_event_lag_ms"`
}

// Scheduler holds the vLLM engine arguments the scheduler and KV manager use.
type Scheduler struct {
	// MaxNumSeqs and MaxNumBatchedTokens are 0 when not given: vLLM's
	// defaults for the system (ResolveSchedulerDefaults), which the replay
	// and Normalize fill in.
	MaxNumSeqs          int  `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens int  `json:"max_num_batched_tokens,omitempty"`
	BlockSize           int  `json:"block_size"`
	EnablePrefixCaching bool `json:"enable_prefix_caching"`
	// MaxModelLen caps prompt + output tokens; 0 in the input means the model's
	// max_position_embeddings (filled in by the replay, reported in metadata).
	MaxModelLen int `json:"max_model_len"`
	// NumGPUBlocks overrides the KV capacity derived from GPU memory; 0 = derive.
	NumGPUBlocks         int     `json:"num_gpu_blocks"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	// AsyncScheduling is vLLM's async_scheduling (on by default from vLLM
	// 0.14.0): the scheduler forms pass k+1 while pass k runs, so a request
	// that reaches the engine during a pass first runs in the pass after
	// next. Default false (the replay's behaviour before the option existed).
	AsyncScheduling bool `json:"async_scheduling,omitempty"`
	// SchedulerReserveFullISL is vLLM's scheduler_reserve_full_isl (on by
	// default from vLLM 0.19.0, VersionDefaults.SchedulerReserveFullISL): a
	// waiting request is admitted only if the free KV blocks hold its whole
	// sequence, not only its first chunk (Scheduler.schedule's
	// kv_cache_manager.can_fit_full_sequence gate). Default false without
	// engine.backend_version (the replay's behaviour before the option).
	SchedulerReserveFullISL bool `json:"scheduler_reserve_full_isl,omitempty"`
	// MambaCacheMode is vLLM's --mamba-cache-mode for models with recurrent
	// state (linear-attention or Mamba layers; ignored for others): "none",
	// no prefix caching for them, or "align", prefix caching whose states
	// are cached at block boundaries (MambaCacheMode*). Empty: vLLM's
	// default, which before 0.28.0 turns prefix caching off for hybrid models
	// (EngineArgs: is_hybrid), whatever enable_prefix_caching says, and from
	// it (engine.backend_version ≥ 0.28.0) is align with prefix caching on
	// (VersionDefaults.HybridPrefixCaching).
	MambaCacheMode string `json:"mamba_cache_mode,omitempty"`
	// SpeculativeConfig is vLLM's --speculative-config (vllm_spec.go;
	// absent: no speculative decoding).
	SpeculativeConfig *VLLMSpeculativeConfig `json:"speculative_config,omitempty"`
}

// Traffic is the workload: where requests come from, when they are sent, when
// to stop (Source and Load are discriminated blocks, variants.go).
type Traffic struct {
	Source Source `json:"source"`
	Load   Load   `json:"load"`
	Stop   Stop   `json:"stop"`
	// Benchmark is a load generator's run in its own options (benchmark.go),
	// in place of Source, Load and Stop (then absent): the replay runs the
	// traffic Benchmark.Traffic makes of it.
	Benchmark *Benchmark `json:"benchmark,omitempty"`
}

// ResponseOverhead: whatever waits on a response is released at response end
// received + BaseMs + PerOutputTokenUs × output tokens + J, where J is the
// client's timing noise (network, scheduling, response parsing): exponential
// with mean JitterMs, drawn per response from the run's "client_jitter" stream
// (absent or 0: no noise, J = 0). The noise is what desynchronises a closed
// loop whose clients start together.
type ResponseOverhead struct {
	BaseMs           float64 `json:"base_ms"`
	PerOutputTokenUs float64 `json:"per_output_token_us"`
	JitterMs         float64 `json:"jitter_ms,omitempty"`
	// Serial: the load generator finishes responses one at a time (one event
	// loop), so a response's overhead starts when the previous one's ends:
	// release = max(end, previous release) + overhead + J. Responses that end
	// together are then released one overhead apart, as from a real
	// single-threaded client. Absent or false: overheads run in parallel.
	Serial bool `json:"serial,omitempty"`
}

// Stop ends the replay: after MaxRequests measured requests are sent (warm-up
// requests, traffic.load.warmup_requests, are sent besides them; 0 = all the
// source has) and/or once the virtual clock passes MaxDurationS seconds (0 =
// no limit).
type Stop struct {
	MaxRequests  int     `json:"max_requests"`
	MaxDurationS float64 `json:"max_duration_s"`
	// GraceS (with MaxDurationS) is how long the client waits, once
	// MaxDurationS has passed, for the measured requests still in flight:
	// those not ended GraceS later are canceled by it (status canceled, in
	// no metric), as AIPerf's --benchmark-grace-period cancels a duration
	// phase's credits (PhaseRunner's wait for returns, aiperf/timing/phase/
	// runner.py: time left plus the grace). Absent: every request in flight
	// finishes, however long it takes.
	GraceS *float64 `json:"grace_s,omitempty"`
}

// Execution says how to run the replay.
type Execution struct {
	// Mode is ExecutionOffline (the only mode the core runs).
	Mode string `json:"mode"`
	Seed uint64 `json:"seed"`
	// MaxMemoryGB is the memory budget of the replay, GB (1e9 bytes): a
	// replay whose estimated peak passes it is refused before it runs, or
	// stopped when it grows past it. Absent: half of this machine's memory
	// (the smallest of physical memory, the cgroup limit and the address-
	// space limit), decided at run time and not written into the spec.
	MaxMemoryGB *float64 `json:"max_memory_gb,omitempty"`
}

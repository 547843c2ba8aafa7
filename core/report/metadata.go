package report

import "encoding/json"

// Metadata is the facts of a run (report.metadata): what ran and what the
// deployment did. docs/metrics.md ("Metadata") has the key table. The fields
// are declared in the alphabetical order of their JSON keys, so the JSON is
// the same bytes as the sorted-key object it replaced (TestMetadataKeysSorted).
type Metadata struct {
	// AisimulateVersion is the core's version (the module's one version string).
	AisimulateVersion string `json:"aisimulate_version"`
	// BackendVersion (a spec naming engine.backend_version): the version as
	// given, the release it resolved to, and notes on the resolution and on
	// that release's defaults that are not modelled.
	BackendVersion *BackendVersion `json:"backend_version,omitempty"`
	// Benchmark (a spec with traffic.benchmark): the tool, the traffic the
	// replay made of its options and notes on how they were read.
	Benchmark *Benchmark `json:"benchmark,omitempty"`
	// BlockSize is the KV block size, tokens.
	BlockSize int `json:"block_size"`
	// DataParallelSize and EnableExpertParallel (aggregated only, a worker
	// with data or expert parallelism): Pools[0]'s.
	DataParallelSize *int `json:"data_parallel_size,omitempty"`
	// Disaggregated is true for P/D disaggregation (Pools: prefill, decode).
	Disaggregated        bool  `json:"disaggregated"`
	EnableExpertParallel *bool `json:"enable_expert_parallel,omitempty"`
	// ExpertDtype is the routed experts' weight format, when the model has
	// experts of another format than WeightDtype (an NVFP4 checkpoint whose
	// attention and shared experts stay bf16, gpt-oss's MXFP4 experts);
	// omitted otherwise.
	ExpertDtype string `json:"expert_dtype,omitempty"`
	// GPUs is the GPU count of every pool.
	GPUs int `json:"gpus"`
	// KVBlocks (aggregated only): Pools[0].KVBlocks.
	KVBlocks []KVBlocks `json:"kv_blocks,omitempty"`
	// KVBytesPerToken (aggregated only) is the KV cache bytes of one token on
	// one GPU of a worker, bytes.
	KVBytesPerToken *int64 `json:"kv_bytes_per_token,omitempty"`
	// KVCacheDtype is the KV cache format in effect ("bfloat16", "fp8").
	KVCacheDtype string `json:"kv_cache_dtype"`
	// KVTransferBytesPerToken (P/D only) is the bytes a prompt token moves
	// from the prefill to the decode worker, bytes.
	KVTransferBytesPerToken *int64 `json:"kv_transfer_bytes_per_token,omitempty"`
	// MaxModelLen is the max_model_len in effect (the model's context when
	// the spec gives 0), tokens.
	MaxModelLen int `json:"max_model_len"`
	// Model is the model's name.
	Model string `json:"model"`
	// NumGPUBlocks (aggregated only): Pools[0].NumGPUBlocks.
	NumGPUBlocks *int `json:"num_gpu_blocks,omitempty"`
	// Percentiles are the percentiles the replay was asked for
	// (replay.WithPercentiles), ascending: the latency table's columns;
	// omitted when none were (the table shows p50, p90, p95, p99).
	Percentiles []float64 `json:"percentiles,omitempty"`
	// PerfMetadata is the perf model's provenance and parameters in effect
	// (roofline and aic; none for linear): each source's own keys.
	PerfMetadata map[string]any `json:"perf_metadata,omitempty"`
	// PerfModel is the perf model's name and version ("roofline-v3", "aic-v1").
	PerfModel string `json:"perf_model"`
	// Pools is each worker pool: the aggregated one, or prefill then decode.
	Pools []Pool `json:"pools"`
	// PrefixCache (aggregated only): Pools[0].PrefixCache.
	PrefixCache []PrefixCache `json:"prefix_cache,omitempty"`
	// RecomputedTokens (aggregated only): Pools[0].RecomputedTokens.
	RecomputedTokens []int64 `json:"recomputed_tokens,omitempty"`
	// Spec is the canonical spec that ran (every default filled, paths absolute).
	Spec json.RawMessage `json:"spec"`
	// System is the GPU system's name.
	System string `json:"system"`
	// TP (aggregated only): Pools[0].TP.
	TP *int `json:"tp,omitempty"`
	// TraceSessionIDs (a Mooncake trace naming its sessions by strings): the
	// names, by the number records carry in session_id.
	TraceSessionIDs []string `json:"trace_session_ids,omitempty"`
	// TraceTimeOrigin and TraceTimeOriginMs (trace sources with a timestamp):
	// the offset removed from the trace's timestamps, as written in the file
	// and in ms (docs/traces.md).
	TraceTimeOrigin   string      `json:"trace_time_origin,omitempty"`
	TraceTimeOriginMs json.Number `json:"trace_time_origin_ms,omitempty"`
	// WarmupEndMs and WarmupRequests (a closed loop with
	// traffic.load.warmup_requests): when the warm-up phase ended (every
	// warm-up response acted on), ms, and how many warm-up requests ran; the
	// warm-up requests are not in the records or the summary.
	WarmupEndMs    *float64 `json:"warmup_end_ms,omitempty"`
	WarmupRequests int      `json:"warmup_requests,omitempty"`
	// WeightDtype is the GEMM weight format in effect (the dense layers').
	WeightDtype string `json:"weight_dtype"`
	// WindowStartMs is when the first completed request was sent (0 when
	// none completed): summary.duration_ms runs from it to the last
	// completed response received, ms (report.AIPerfWindow). With tool
	// vllm_bench_serve it is the measured phase's start and the window ends
	// with the last request of any status (Accumulator.SetWindowStart).
	WindowStartMs float64 `json:"window_start_ms"`
	// WorkerBusyMs (aggregated only): Pools[0].WorkerBusyMs.
	WorkerBusyMs []float64 `json:"worker_busy_ms,omitempty"`
	// WorkerPasses (aggregated only): Pools[0].WorkerPasses.
	WorkerPasses []int64 `json:"worker_passes,omitempty"`
	// Workers (aggregated only): Pools[0].Workers.
	Workers *int `json:"workers,omitempty"`
}

// Pool is one worker pool as run (fields in JSON key order, as Metadata's).
type Pool struct {
	// DataParallelSize and EnableExpertParallel (a worker with data or
	// expert parallelism, else absent): the worker's data_parallel_size and
	// enable_expert_parallel. With them the per-worker arrays (KVBlocks,
	// PrefixCache, RecomputedTokens, WorkerBusyMs, WorkerPasses) list every
	// data-parallel rank, worker by worker.
	DataParallelSize     *int  `json:"data_parallel_size,omitempty"`
	EnableExpertParallel *bool `json:"enable_expert_parallel,omitempty"`
	// EngineArgs are the engine's arguments as its family resolved them
	// (defaults included), for an engine that sizes its own workers
	// (SGLang: mem_fraction_static, max_total_num_tokens, …); absent for vLLM,
	// whose settings the spec shows.
	EngineArgs map[string]any `json:"engine_args,omitempty"`
	// GPUHours is GPUs × the measured window, GPU·h.
	GPUHours float64 `json:"gpu_hours"`
	// GPUs is Workers × TP × data-parallel size.
	GPUs int `json:"gpus"`
	// KVBlocks is each worker's KV block counters at the end of the run.
	KVBlocks []KVBlocks `json:"kv_blocks"`
	// Name is "aggregated", "prefill" or "decode".
	Name string `json:"name"`
	// NumGPUBlocks is one worker's KV capacity, blocks.
	NumGPUBlocks int `json:"num_gpu_blocks"`
	// PerfModel is the pool's perf model name and version.
	PerfModel string `json:"perf_model"`
	// PrefixCache is each worker's prefix-cache counters.
	PrefixCache []PrefixCache `json:"prefix_cache"`
	// RecomputedTokens is, per worker, the KV tokens preempted requests had
	// computed and computed again on re-admission, tokens.
	RecomputedTokens []int64 `json:"recomputed_tokens"`
	// TP is each worker's tensor-parallel degree.
	TP int `json:"tp"`
	// WorkerBusyMs is each worker's time in passes, ms.
	WorkerBusyMs []float64 `json:"worker_busy_ms"`
	// WorkerPasses is each worker's pass count.
	WorkerPasses []int64 `json:"worker_passes"`
	// Workers is the pool's worker count.
	Workers int `json:"workers"`
}

// KVBlocks is one worker's KV block counters (blocks). Allocated + Reused =
// Released at the end of a run, and Free + Cached = the capacity (INV-2).
type KVBlocks struct {
	// Allocated counts blocks taken from the free pool or evicted from the cache.
	Allocated int64 `json:"allocated"`
	// Cached is the unreferenced blocks still holding prefix-cache content.
	Cached int64 `json:"cached"`
	// Evicted counts cached blocks dropped to serve an allocation.
	Evicted int64 `json:"evicted"`
	// Free is the unreferenced blocks without cached content.
	Free int64 `json:"free"`
	// Released counts blocks whose last holder let go (to the free pool or the cache).
	Released int64 `json:"released"`
	// Reused counts prefix-cache hits that took an unreferenced cached block.
	Reused int64 `json:"reused"`
}

// PrefixCache is one worker's prefix-cache counters, vLLM's PrefixCacheStats
// (docs/kv-cache.md): Requests, Queries and Hits (tokens) of first admissions;
// the Preempted ones of re-admissions after a preemption. Zeros with prefix
// caching off.
type PrefixCache struct {
	Hits              int64 `json:"hits"`
	PreemptedHits     int64 `json:"preempted_hits"`
	PreemptedQueries  int64 `json:"preempted_queries"`
	PreemptedRequests int64 `json:"preempted_requests"`
	Queries           int64 `json:"queries"`
	Requests          int64 `json:"requests"`
}

// BackendVersion is metadata.backend_version: engine.backend_version as given,
// the release whose defaults applied, and notes.
type BackendVersion struct {
	Given   string   `json:"given"`
	Release string   `json:"release"`
	Notes   []string `json:"notes,omitempty"`
}

// Benchmark is metadata.benchmark: traffic.benchmark's tool, the traffic it
// made (source, load and stop, as a spec would give them) and notes.
type Benchmark struct {
	Tool    string          `json:"tool"`
	Traffic json.RawMessage `json:"traffic"`
	Notes   []string        `json:"notes,omitempty"`
}

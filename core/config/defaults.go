package config

// The defaults of every optional spec field live here and nowhere else; the Python
// compiler obtains them from Normalize. Each value and its reason:
const (
	DefaultBackend = "vllm"
	// DefaultPerfSource needs no data files.
	DefaultPerfSource = "roofline"
	// DefaultMaxNumSeqs, DefaultMaxNumBatchedTokens and DefaultBlockSize are vLLM
	// v1's defaults for online serving on a data-centre GPU (vllm/engine/arg_utils.py).
	DefaultMaxNumSeqs          = 256
	DefaultMaxNumBatchedTokens = 8192
	DefaultBlockSize           = 16
	// DefaultGPUMemoryUtilization is vLLM's --gpu-memory-utilization default.
	DefaultGPUMemoryUtilization = 0.9
	DefaultPlacement            = "round_robin"
	DefaultWorkerCount          = 1
	DefaultTP                   = 1
	DefaultSpeedup              = 1.0
	DefaultArrival              = "poisson"
	// DefaultGammaCV is the coefficient of variation of gamma arrivals (1 = Poisson).
	DefaultGammaCV       = 1.0
	DefaultExecutionMode = "offline"
	// DefaultDatasetSampling is AIPerf's sampling strategy for synthetic data:
	// every entry once per pass, in a new random order each pass.
	DefaultDatasetSampling = "shuffle"
)

// Upper bounds that keep a replay within one machine's memory; each is far beyond
// a real deployment.
const (
	MaxWorkers     = 4096    // workers in one pool
	MaxBlockSize   = 1024    // tokens per KV block (vLLM's CUDA kernels stop at 256)
	MaxGPUBlocks   = 1 << 30 // KV blocks per worker (block ids are int32)
	MaxConcurrency = 1 << 24 // closed-loop clients
	// MaxDatasetEntries: a synthetic dataset's entries are held in memory
	// (workload.MaxDatasetEntries, the same bound).
	MaxDatasetEntries = 1_000_000
	// MaxNumSeqs bounds engine.scheduler.max_num_seqs (the concurrency
	// bound); MaxBatchedTokens max_num_batched_tokens; MaxModelLen
	// max_model_len (no model's context is longer than 2^30 tokens).
	MaxNumSeqs       = 1 << 24
	MaxBatchedTokens = 1 << 30
	MaxModelLen      = 1 << 30
	// MaxStringBytes bounds every string of a spec (names, paths, versions):
	// PATH_MAX on Linux is 4096 bytes, and no name is longer.
	MaxStringBytes = 4096
)

// DefaultEnablePrefixCaching: vLLM v1 enables automatic prefix caching by default.
const DefaultEnablePrefixCaching = true

// DefaultAICBackendVersion is the vLLM version whose perf tables source aic
// reads when engine.perf.backend_version is not given: the newest measured on
// h100_sxm, h200_sxm and b200_sxm (and the one to use on h200_sxm, whose 0.19.0
// context-attention table is known bad).
const DefaultAICBackendVersion = "0.24.0"

// DefaultKVCacheDtype is the KV cache format when engine.quantization.kv_cache
// is not given: vLLM's kv_cache_dtype "auto", the format the checkpoint's
// quantization config calibrated (kv_cache_quant_algo FP8 in a ModelOpt
// checkpoint, vLLM since December 2025) and otherwise the model's bf16
// activations. The replay resolves it from the model (model.Arch.KVDtype);
// the weight format likewise defaults to the checkpoint's.
const DefaultKVCacheDtype = "auto"

// applyDefaults fills every optional field that the input left unset. present
// reports whether a dotted key was given, so that an explicit false or 0 is kept.
func applyDefaults(s *Spec, present func(path string) bool) {
	e := &s.Engine
	if e.Backend == "" {
		e.Backend = DefaultBackend
	}
	if e.Perf.Source == "" {
		e.Perf.Source = DefaultPerfSource
	}
	if e.Perf.Source == "aic" && e.Perf.BackendVersion == "" {
		e.Perf.BackendVersion = DefaultAICBackendVersion
	}
	if q := e.Quantization; q != nil && q.KVCache == "" {
		q.KVCache = DefaultKVCacheDtype
	}
	if d := e.Workers.Disaggregated; d != nil {
		poolDefaults(&d.Prefill, "engine.workers.disaggregated.prefill", present)
		poolDefaults(&d.Decode, "engine.workers.disaggregated.decode", present)
	} else {
		if e.Workers.Aggregated == nil {
			e.Workers.Aggregated = &Pool{}
		}
		poolDefaults(e.Workers.Aggregated, "engine.workers.aggregated", present)
	}
	sc := &e.Scheduler
	if !present("engine.scheduler.max_num_seqs") {
		sc.MaxNumSeqs = DefaultMaxNumSeqs
	}
	if !present("engine.scheduler.max_num_batched_tokens") {
		sc.MaxNumBatchedTokens = DefaultMaxNumBatchedTokens
	}
	if !present("engine.scheduler.block_size") {
		sc.BlockSize = DefaultBlockSize
	}
	if !present("engine.scheduler.enable_prefix_caching") {
		sc.EnablePrefixCaching = DefaultEnablePrefixCaching
	}
	if !present("engine.scheduler.gpu_memory_utilization") {
		sc.GPUMemoryUtilization = DefaultGPUMemoryUtilization
	}
	if d := s.Traffic.Source.Dataset; d != nil && d.Sampling == "" {
		d.Sampling = DefaultDatasetSampling
	}
	l := &s.Traffic.Load
	if !present("traffic.load.speedup") {
		l.Speedup = DefaultSpeedup
	}
	if l.Mode == "rate" {
		if l.Arrival == "" {
			l.Arrival = DefaultArrival
		}
		if l.Arrival == "gamma" && !present("traffic.load.cv") {
			l.CV = DefaultGammaCV
		}
	}
	if s.Execution.Mode == "" {
		s.Execution.Mode = DefaultExecutionMode
	}
}

func poolDefaults(p *Pool, path string, present func(string) bool) {
	if !present(path + ".count") {
		p.Count = DefaultWorkerCount
	}
	if !present(path + ".tp") {
		p.TP = DefaultTP
	}
	if p.Placement == "" {
		p.Placement = DefaultPlacement
	}
}

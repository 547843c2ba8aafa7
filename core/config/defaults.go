package config

// The defaults of every optional spec field live here and nowhere else: the
// perf models, the engine and the workload take complete values from the spec,
// and the Python compiler obtains the defaults from Normalize, whose spec has
// every one of them filled. Each value and its evidence:
const (
	DefaultBackend = BackendVLLM
	// DefaultPerfSource needs no data files.
	DefaultPerfSource = PerfRoofline
	// DefaultBlockSize is vLLM's --block-size on CUDA GPUs. The defaults of
	// max_num_seqs and max_num_batched_tokens depend on the GPU
	// (SchedulerDefaults).
	DefaultBlockSize = 16
	// DefaultGPUMemoryUtilization is vLLM's --gpu-memory-utilization default.
	DefaultGPUMemoryUtilization = 0.9
	DefaultPlacement            = PlacementRoundRobin
	DefaultWorkerCount          = 1
	DefaultTP                   = 1
	DefaultSpeedup              = 1.0
	DefaultArrival              = ArrivalPoisson
	// DefaultGammaCV is the coefficient of variation of gamma arrivals (1 = Poisson).
	DefaultGammaCV       = 1.0
	DefaultExecutionMode = ExecutionOffline
	// DefaultDatasetSampling is AIPerf's sampling strategy for synthetic data:
	// every entry once per pass, in a new random order each pass.
	DefaultDatasetSampling = SamplingShuffle
	// DefaultISLBlockSize is the tokens per hash id of a Mooncake trace
	// (traffic.source.isl_block_size): the Mooncake traces' hash_ids are ids
	// of 512-token prompt blocks (kvcache-ai/Mooncake, FAST25-release/traces),
	// and AIPerf's --isl-block-size defaults to 512 for its mooncake_trace
	// loader (docs/reference/command-line-options.md).
	DefaultISLBlockSize = 512
)

// DefaultEnablePrefixCaching: vLLM v1 enables automatic prefix caching by default.
const DefaultEnablePrefixCaching = true

// DefaultAICBackendVersion is the vLLM version whose perf tables source aic
// reads when engine.perf.backend_version is not given: the newest measured on
// h100_sxm, h200_sxm and b200_sxm (and the one to use on h200_sxm, whose 0.19.0
// context-attention table is known bad).
const DefaultAICBackendVersion = "0.24.0"

// DefaultMoERouting is engine.perf.moe_routing when not given (source aic):
// chosen on the MoE dev rows of every engine (docs/moe.md, "Routing").
const DefaultMoERouting = MoERoutingAuto

// DefaultKVCacheDtype is the KV cache format when engine.quantization.kv_cache
// is not given: vLLM's kv_cache_dtype "auto", the format the checkpoint's
// quantization config calibrated (kv_cache_quant_algo FP8 in a ModelOpt
// checkpoint, vLLM since December 2025) and otherwise the model's bf16
// activations. The replay resolves it from the model (model.Arch.KVDtype);
// the weight format likewise defaults to the checkpoint's.
const DefaultKVCacheDtype = DtypeAuto

// The engine step's CPU cost, charged per pass by both the roofline and aic
// (engine.perf.pass_overhead_us and per_sequence_overhead_us): aic's tables time
// kernels only, and both sources price the same vLLM engine step.
const (
	// DefaultPassOverheadUs is the per-pass cost outside the kernels (vLLM v1
	// engine step: schedule, prepare inputs, sample, return outputs), µs. One
	// global constant, on the order vLLM's own step profiles show for a
	// CUDA-graph decode step, chosen on the dev silicon rows
	// (docs/accuracy.md, "The perf defaults").
	DefaultPassOverheadUs = 1000.0
	// DefaultPerSequenceOverheadUs is the per-request part, µs per request
	// scheduled in the pass (each decode and each prefill chunk). vLLM's step
	// builds inputs, samples and processes outputs request by request, so its
	// CPU time grows with the batch: on the dev silicon rows the TPOT gap
	// between the measurements and the kernel sum grew by a fixed amount per
	// concurrent request at every TP and not with the KV length, which no
	// kernel table explains. docs/accuracy.md ("The per-sequence overhead",
	// "The perf defaults") gives the measurement and the grid that chose 40.
	DefaultPerSequenceOverheadUs = 40.0
)

// The roofline's parameters (engine.perf with source roofline): starting values
// for an H100/H200-class node running vLLM with CUDA graphs.
const (
	// DefaultComputeEfficiency: large bf16 GEMMs reach about 0.8 of peak in
	// the h200_sxm tables (n = 6144, k = 4096, m = 8192: 0.507 ms against a
	// 0.417 ms roofline) while flash attention and fp8 GEMMs reach less,
	// about 0.5–0.7.
	DefaultComputeEfficiency = 0.7
	// DefaultMemoryEfficiency is the gpu.mem_bw_empirical_scaling_factor of
	// every AIConfigurator system file.
	DefaultMemoryEfficiency = 0.8
	// DefaultLayerLatencyUs: in the measured kernel tables a one-request
	// decode (vLLM 0.14.0 tables; h100_sxm Qwen3-32B and h200_sxm
	// Llama-3.1-8B, TP 1–8) sits above the roofline, per layer, by 12.1–14.0
	// µs for decode attention and 12.0–15.0 µs for the norms and activation,
	// and by 2–14 µs for the four GEMMs where their weights are small (large
	// weights stream faster than 0.8 of HBM): 30–40 µs per layer (printed by
	// AIC_LAYER_LATENCY=1 go test ./core/perf/aic -run PrintLayerLatency -v).
	// The value within that range was chosen on the dev silicon rows
	// (docs/accuracy.md, "The perf defaults").
	DefaultLayerLatencyUs = 40.0
	// DefaultMoELatencyUs is the fixed GPU time of one MoE block's kernels
	// beyond their roofline (router top-k, token alignment and permutation,
	// the two grouped GEMMs' launch and tail, the weighted sum), µs per MoE
	// layer per pass (engine.perf.moe_latency_us when not given). Read off
	// the measured MoE tables at one and two tokens (balanced routing, every
	// shape and layout measured): latency minus the roofline of the experts'
	// weights at 0.8 of HBM bandwidth has a median of 31–45 µs on h100_sxm
	// and h200_sxm (vLLM 0.14.0 to 0.24.0) and 19–31 µs on b200_sxm
	// (docs/moe.md).
	DefaultMoELatencyUs = 35.0
)

// MinOutputTokens is the least output a request may ask for (traffic.source.osl,
// a trace's output length): vLLM refuses max_tokens < 1 ("max_tokens must be at
// least 1", SamplingParams._verify_args in vllm/sampling_params.py), so every
// request it serves generates at least one token. A request of 0 would count as
// completed with no TTFT, TPOT or ITL.
const MinOutputTokens = 1

// BlockSizes are the KV block sizes (tokens) vLLM accepts for --block-size
// (engine.scheduler.block_size): its CacheConfig's
// BlockSize = Literal[1, 8, 16, 32, 64, 128, 256] in vllm/config/cache.py,
// whose values are the argument's choices. Each divides a Mooncake
// trace's 512-token hash block.
var BlockSizes = []int{1, 8, 16, 32, 64, 128, 256}

// Upper bounds that keep a replay within one machine's memory; each is far beyond
// a real deployment.
const (
	MaxWorkers = 4096 // workers in one pool
	// MaxTP bounds tp, the tensor-parallel GPUs of one data-parallel rank:
	// a TP group stays in one node, whose size is the system's
	// (node.num_gpus_per_node: 8 on HGX, 4 on GB200), checked once the
	// system is known (core/replay/build.go); this is the largest node a
	// system may declare (hardware.MaxGPUsPerNode).
	MaxTP = 1024
	// MaxWorkerGPUs bounds tp × data_parallel_size, the GPUs of one worker
	// (one vLLM server), which may span nodes (the system's
	// node.num_gpus_per_node; wide expert-parallel deployments reach a few
	// hundred).
	MaxWorkerGPUs  = 1024
	MaxGPUBlocks   = 1 << 30 // KV blocks per worker (block ids are int32)
	MaxConcurrency = 1 << 24 // closed-loop clients
	// MaxDatasetEntries: a synthetic dataset's entries are held in memory
	// (16 bytes each, plus 4 for shuffle's order: 20 MB at the bound); load
	// generators use tens to thousands.
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

// DefaultRooflinePerf is engine.perf with source roofline and every parameter
// at its default.
func DefaultRooflinePerf() RooflinePerf {
	return RooflinePerf{ComputeEfficiency: DefaultComputeEfficiency, MemoryEfficiency: DefaultMemoryEfficiency,
		PassOverheadUs: DefaultPassOverheadUs, PerSequenceOverheadUs: DefaultPerSequenceOverheadUs,
		LayerLatencyUs: DefaultLayerLatencyUs}
}

// DefaultAICPerf is engine.perf with source aic on the tables under database,
// every other field at its default.
func DefaultAICPerf(database string) AICPerf {
	return AICPerf{Database: database, BackendVersion: DefaultAICBackendVersion,
		PassOverheadUs: DefaultPassOverheadUs, PerSequenceOverheadUs: DefaultPerSequenceOverheadUs}
}

// applyDefaults fills every optional field that the input left unset. present
// reports whether a dotted key was given, so that an explicit false or 0 is kept.
func applyDefaults(s *Spec, present func(path string) bool) {
	e := &s.Engine
	if e.Backend == "" {
		e.Backend = DefaultBackend
	}
	perfDefaults(&e.Perf, "engine.perf", present)
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
	switch e.Backend {
	case BackendTRTLLM:
		trtllmDefaults(s, present) // TensorRT-LLM's own options (trtllm.go); engine.scheduler is vLLM's
	case BackendSGLang:
		sglangDefaults(s, present) // SGLang's own arguments (sglang.go); engine.scheduler is vLLM's
	default:
		schedulerDefaults(&e.Scheduler, present)
		vllmSpecDefaults(&e.Scheduler)
	}
	if b := s.Traffic.Benchmark; b != nil {
		benchmarkDefaults(b, "traffic.benchmark", present)
		rangeGiven := present("traffic.benchmark.random_range_ratio")
		if e.Backend == BackendVLLM { // another engine's release is not a vLLM client's
			b.versionDefault(e.BackendVersion, rangeGiven)
		} else {
			b.versionDefault("", rangeGiven)
		}
	}
	if src, ok := s.Traffic.Source.Type.(SyntheticSource); ok && src.Dataset != nil && src.Dataset.Sampling == "" {
		src.Dataset.Sampling = DefaultDatasetSampling
	}
	switch l := s.Traffic.Load.Mode.(type) {
	case TraceLoad:
		if !present("traffic.load.speedup") {
			l.Speedup = DefaultSpeedup
		}
		s.Traffic.Load.Mode = l
	case RateLoad:
		if l.Arrival == "" {
			l.Arrival = DefaultArrival
		}
		if l.Arrival == ArrivalGamma && !present("traffic.load.cv") {
			l.CV = DefaultGammaCV
		}
		s.Traffic.Load.Mode = l
	}
	if s.Execution.Mode == "" {
		s.Execution.Mode = DefaultExecutionMode
	}
	backendVersionDefaults(s, present) // after perfDefaults: a release's defaults win over the generic ones
}

// perfDefaults fills the parameters of engine.perf's variant that were not given.
func perfDefaults(p *Perf, path string, present func(string) bool) {
	given := func(key string) bool { return present(path + "." + key) }
	if p.Source == nil { // engine.perf left out: the default source
		p.Source = RooflinePerf{}
	}
	switch v := p.Source.(type) {
	case RooflinePerf:
		d := DefaultRooflinePerf()
		for _, f := range []struct {
			key  string
			dst  *float64
			from float64
		}{{"compute_efficiency", &v.ComputeEfficiency, d.ComputeEfficiency},
			{"memory_efficiency", &v.MemoryEfficiency, d.MemoryEfficiency},
			{"pass_overhead_us", &v.PassOverheadUs, d.PassOverheadUs},
			{"per_sequence_overhead_us", &v.PerSequenceOverheadUs, d.PerSequenceOverheadUs},
			{"layer_latency_us", &v.LayerLatencyUs, d.LayerLatencyUs}} {
			if !given(f.key) {
				*f.dst = f.from
			}
		}
		p.Source = v
	case AICPerf:
		if v.BackendVersion == "" {
			v.BackendVersion = DefaultAICBackendVersion
		}
		if !given("pass_overhead_us") {
			v.PassOverheadUs = DefaultPassOverheadUs
		}
		if !given("per_sequence_overhead_us") {
			v.PerSequenceOverheadUs = DefaultPerSequenceOverheadUs
		}
		p.Source = v
	}
}

// schedulerDefaults fills vLLM's engine.scheduler. max_num_seqs and
// max_num_batched_tokens stay 0 when not given: their defaults depend on the
// GPU (Spec.ResolveSchedulerDefaults).
func schedulerDefaults(sc *Scheduler, present func(string) bool) {
	if !present("engine.scheduler.block_size") {
		sc.BlockSize = DefaultBlockSize
	}
	if !present("engine.scheduler.enable_prefix_caching") {
		sc.EnablePrefixCaching = DefaultEnablePrefixCaching
	}
	if !present("engine.scheduler.gpu_memory_utilization") {
		sc.GPUMemoryUtilization = DefaultGPUMemoryUtilization
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
	if p.Placement == PlacementKVRouter {
		r := DefaultKVRouter()
		if p.KVRouter == nil {
			p.KVRouter = &r
		} else {
			for _, f := range []struct {
				key  string
				dst  *float64
				from float64
			}{{"kv_overlap_score_weight", &p.KVRouter.KVOverlapScoreWeight, r.KVOverlapScoreWeight},
				{"router_temperature", &p.KVRouter.RouterTemperature, r.RouterTemperature},
				{"kv_event_lag_ms", &p.KVRouter.KVEventLagMs, r.KVEventLagMs}} {
				if !present(path + ".kv_router." + f.key) {
					*f.dst = f.from
				}
			}
		}
	}
}

// DefaultKVRouter is Dynamo's KV router as its frontend starts: an overlap
// weight of 1.0 (--kv-overlap-score-weight) and temperature 0.0
// (--router-temperature), lib/kv-router's KvRouterConfig defaults; and no
// event lag.
func DefaultKVRouter() KVRouter {
	return KVRouter{KVOverlapScoreWeight: 1.0, RouterTemperature: 0, KVEventLagMs: 0}
}

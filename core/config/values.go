package config

// The allowed values of every enumerated spec field, each listed once. Go
// validation, the replay's builders and the Python compiler's messages (through
// Enums) all read these lists; a value added here and not handled by a builder
// fails the builder's coverage test in core/replay.

// engine.perf.source: how a pass is priced (variants in variants.go).
const (
	PerfRoofline = "roofline"
	PerfAIC      = "aic"
	PerfLinear   = "linear"
)

// traffic.source.type: where requests come from.
const (
	SourceMooncake = "mooncake"
	SourceAzure    = "azure"
	// SourceLLMServingSim is a JSONL trace with each prompt's token ids, as
	// LLMServingSim replays through vLLM.
	SourceLLMServingSim = "llmservingsim"
	SourceSynthetic     = "synthetic"
	SourceSessions      = "sessions"
)

// traffic.load.mode: when requests are sent.
const (
	LoadTrace       = "trace"
	LoadRate        = "rate"
	LoadConcurrency = "concurrency"
	LoadStages      = "stages"
)

// traffic.load.stages[].arrival: how an open-loop stage spreads its requests
// (inference-perf's load timers, inference_perf/loadgen/load_timer.py).
const (
	// StageSpread: the stage's requests over its duration, exponential gaps
	// scaled to sum to it (inference-perf's load type constant).
	StageSpread = "spread"
	// StagePerSecondPoisson: a Poisson count each second, spread over the
	// second (inference-perf's load type poisson).
	StagePerSecondPoisson = "per_second_poisson"
)

// kind of a token-length distribution (isl, osl, turns).
const (
	LengthFixed     = "fixed"
	LengthUniform   = "uniform"
	LengthNormal    = "normal"
	LengthLognormal = "lognormal"
)

// traffic.load.arrival: the inter-arrival process of mode rate.
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
	ArrivalGamma    = "gamma"
)

// traffic.source.dataset.sampling: how a load generator picks the dataset
// entry of its next request (AIPerf's --dataset-sampling-strategy).
const (
	// SamplingSequential takes entries 0, 1, …, N−1, then starts again.
	SamplingSequential = "sequential"
	// SamplingRandom draws an entry uniformly, with replacement.
	SamplingRandom = "random"
	// SamplingShuffle takes the entries in a random order without
	// replacement, reshuffling after each pass (AIPerf's choice for
	// synthetic data).
	SamplingShuffle = "shuffle"
)

// traffic.load.capped_arrival: what an arrival of a rate behind a cap
// (traffic.load.max_concurrency) does when it finds every slot taken.
const (
	// CappedWait: it waits for a slot, is sent when one frees, and the next
	// gap counts from that send (AIPerf before 0.5.0: RequestRateStrategy,
	// aiperf/timing/request_rate_strategy.py, acquires a semaphore slot,
	// drops the credit, then sleeps the next interval).
	CappedWait = "wait"
	// CappedSkip: the arrival passes unused and the request goes at the
	// first later arrival that finds a slot, the arrivals keeping their
	// schedule (AIPerf from 0.5.0: RequestRateStrategy.execute_phase,
	// aiperf/timing/strategies/request_rate.py, takes its next target time
	// first, and CreditIssuer.try_issue_credit issues nothing without a
	// free slot).
	CappedSkip = "skip"
	// CappedQueue: the request joins the client's queue and is sent, oldest
	// first, when a slot frees, the arrivals keeping their schedule (vLLM's
	// benchmark: get_request yields each request at its own time and each
	// waits on the --max-concurrency semaphore in limited_request_func,
	// vllm/benchmarks/serve.py).
	CappedQueue = "queue"
)

// traffic.load.warmup_prompt: what a closed loop's warm-up requests send.
const (
	// WarmupPromptSource: the source's next requests (AIPerf).
	WarmupPromptSource = "source"
	// WarmupPromptFirst: copies of the first measured request (vLLM's
	// benchmark_serving: the test prompt, input_requests[0]).
	WarmupPromptFirst = "first"
	// WarmupPromptLeading: copies of the first warmup_requests measured
	// requests: the measured phase starts the source over (perf_analyzer,
	// genai-perf's engine, restarts its data steps after the warm-up).
	WarmupPromptLeading = "leading"
	// WarmupPromptIsolated: the source's next requests, as WarmupPromptSource,
	// their prompts sharing no block with any measured request's (two
	// warm-ups of one entry still share theirs): AIPerf 0.11.0
	// and 0.12.x write "warmup" ahead of every warm-up request's system
	// message (chat) or prompt (completions) so that the warm-up cannot fill
	// the prefix cache profiling reads (Worker._system_message_for_phase,
	// aiperf/workers/worker.py; OpenAICompletionsEndpoint.format_payload), as
	// 0.13.0's --cache-bust warmup_isolation_first_turn does on request.
	WarmupPromptIsolated = "isolated"
)

// traffic.source.context_mode of a Mooncake trace: what a session's rows
// give (AIPerf's conversation context modes).
const (
	// ContextDeltasWithoutResponses: a row is its turn's new input; the
	// prompt is the conversation so far with the replies the client
	// received, then the row (AIPerf's deltas_without_responses).
	ContextDeltasWithoutResponses = "deltas_without_responses"
	// ContextMessageArrayWithResponses: a row is its turn's whole prompt
	// (AIPerf's message_array_with_responses).
	ContextMessageArrayWithResponses = "message_array_with_responses"
)

// placement of a pool: which worker a new request goes to.
const (
	// PlacementRoundRobin cycles through the workers.
	PlacementRoundRobin = "round_robin"
	// PlacementLeastOutstanding takes the worker with the fewest requests
	// on it (waiting, running or handed off to it), the lowest index on ties.
	PlacementLeastOutstanding = "least_outstanding"
	// PlacementKVRouter is Dynamo's KV router (--router-mode kv): the
	// overlap of the request's blocks with each worker's cache, known from
	// its KV events, weighed against the worker's load (Pool.KVRouter).
	PlacementKVRouter = "kv_router"
	// PlacementPrefixAffinity is the vLLM production stack's prefix-aware
	// router (--routing-logic prefixaware): the worker the longest prefix of
	// the prompt was sent to before, at random among equals.
	PlacementPrefixAffinity = "prefix_affinity"
)

// all2all_backend of a pool: vLLM's --all2all-backend
// (vllm/distributed/device_communicators/all2all.py).
const (
	// All2AllAgRs all-gathers every rank's tokens before the experts and
	// reduce-scatters their outputs (AgRsAll2AllManager): vLLM's default.
	All2AllAgRs = "allgather_reducescatter"
	// All2AllNaive was a broadcast-based gather; vLLM pull request 33728
	// (February 2026) made it an alias of allgather_reducescatter.
	All2AllNaive = "naive"
	// All2AllDeepEPHT sends each token to the ranks holding its experts
	// (DeepEP's high-throughput kernels: NVLink and RDMA).
	All2AllDeepEPHT = "deepep_high_throughput"
	// All2AllDeepEPLL sends each (token, expert) pair to the expert's rank
	// in fixed buffers (DeepEP's low-latency kernels, CUDA-graph capturable).
	All2AllDeepEPLL = "deepep_low_latency"
	// All2AllFlashInfer is FlashInfer's all-to-all-v over NVLink
	// (flashinfer_all2allv, multi-node NVLink racks).
	All2AllFlashInfer = "flashinfer_all2allv"
)

// moe_backend of the engine: vLLM's --moe-backend (the kernels the MoE
// tables time; vllm/model_executor/layers/fused_moe/oracle/).
const (
	MoEBackendAuto              = "auto"
	MoEBackendTriton            = "triton"
	MoEBackendMarlin            = "marlin"
	MoEBackendFlashInferCutlass = "flashinfer_cutlass"
	MoEBackendFlashInferTRTLLM  = "flashinfer_trtllm"
	// MoEBackendFlashInferTRTLLMAFP8 is FlashInfer's TRT-LLM-gen MoE with
	// MXFP8 activations for MXFP4 experts (vLLM's MXFP4 oracle,
	// map_mxfp4_backend: FLASHINFER_TRTLLM_MXFP4_MXFP8, Blackwell only), as
	// VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 selects it in every release
	// (quantization/mxfp4.py get_mxfp4_backend: SM100_FI_MXFP4_MXFP8_TRTLLM);
	// other expert formats read it as flashinfer_trtllm.
	MoEBackendFlashInferTRTLLMAFP8 = "flashinfer_trtllm_afp8"
)

// moe_routing of engine.perf (source aic): the routing the routed experts
// are priced at, the AIConfigurator tables' moe_perf distributions
// (core/perf/aic/moe.go MoERouting*).
const (
	MoERoutingAuto        = "auto"
	MoERoutingBalanced    = "balanced"
	MoERoutingPowerLaw101 = "power_law_1.01"
	MoERoutingPowerLaw12  = "power_law_1.2"
)

// mamba_cache_mode of the vLLM scheduler: --mamba-cache-mode, how a hybrid
// model's recurrent states are cached (vllm/config/cache.py;
// vllm/v1/core/single_type_kv_cache_manager.py MambaManager). "all" (a
// state at every block boundary, Mamba-2 only) is not modelled: vLLM itself
// falls back to "align" for models without it (Qwen3.5).
const (
	MambaCacheModeNone  = "none"
	MambaCacheModeAlign = "align"
)

// Other enumerations.
const (
	BackendVLLM      = "vllm"
	ExecutionOffline = "offline"
	DtypeAuto        = "auto" // KV cache: the checkpoint's calibrated format, else bf16
	DtypeBFloat16    = "bfloat16"
	DtypeBF16        = "bf16" // alias of bfloat16 (aisimulate's first spelling)
	DtypeFP8         = "fp8"
	DtypeFP8E4M3     = "fp8_e4m3" // KV cache: vLLM's name of fp8
	DtypeFP8E5M2     = "fp8_e5m2" // KV cache: 8-bit float e5m2, one byte, no scale
	DtypeFP8Block    = "fp8_block"
	DtypeNVFP4       = "nvfp4"
	// DtypeFP8INC is vLLM's KV cache format for Intel Gaudi (HPU) through
	// Intel Neural Compressor (docs.vllm.ai, Quantization: "FP8 INC", with
	// --kv-cache-dtype fp8_inc); refused: the systems simulated are GPUs.
	DtypeFP8INC = "fp8_inc"
)

// The lists, in documentation order. Unexported so that nothing can change
// them; Enums hands out copies. A discriminator's list is its variant table's
// (variants.go): adding a variant there adds its value here.
var (
	perfSources    = perfUnion.names()
	sourceTypes    = sourceUnion.names()
	loadModes      = loadUnion.names()
	lengthKinds    = lengthUnion.names()
	arrivals       = []string{ArrivalPoisson, ArrivalConstant, ArrivalGamma}
	samplings      = []string{SamplingSequential, SamplingRandom, SamplingShuffle}
	contextModes   = []string{ContextDeltasWithoutResponses, ContextMessageArrayWithResponses}
	placements     = []string{PlacementRoundRobin, PlacementLeastOutstanding, PlacementKVRouter, PlacementPrefixAffinity}
	warmupPrompts  = []string{WarmupPromptSource, WarmupPromptFirst, WarmupPromptLeading, WarmupPromptIsolated}
	cappedArrivals = []string{CappedWait, CappedSkip, CappedQueue}
	backends       = []string{BackendVLLM, BackendTRTLLM, BackendSGLang}
	moeBackends    = []string{MoEBackendAuto, MoEBackendTriton, MoEBackendMarlin, MoEBackendFlashInferCutlass, MoEBackendFlashInferTRTLLM,
		MoEBackendFlashInferTRTLLMAFP8}
	moeRoutings    = []string{MoERoutingAuto, MoERoutingBalanced, MoERoutingPowerLaw101, MoERoutingPowerLaw12}
	mambaModes     = []string{MambaCacheModeNone, MambaCacheModeAlign}
	executionModes = []string{ExecutionOffline}
	weightDtypes   = []string{DtypeBFloat16, DtypeFP8, DtypeFP8Block, DtypeNVFP4, DtypeBF16}
	// kvCacheDtypes: vLLM's --kv-cache-dtype names (CacheDType in
	// vllm/config/cache.py) but fp8_inc, then the alias bf16.
	kvCacheDtypes = []string{DtypeAuto, DtypeBFloat16, DtypeFP8, DtypeFP8E4M3, DtypeFP8E5M2, DtypeBF16}
)

// all2alls: vLLM's --all2all-backend values (a block of its own).
var all2alls = []string{All2AllAgRs, All2AllNaive, All2AllDeepEPHT, All2AllDeepEPLL, All2AllFlashInfer}

// stringEnum is an enumerated string field: its allowed values, the dotted
// paths it stands at in a spec (Enums), and why, which when set words a
// refusal in place of the list.
type stringEnum struct {
	values []string
	paths  []string
	why    string
}

// stringEnums: the string fields with a list of allowed values, each tied to
// its list here alone, named as the ranges are (the struct's Go type and the
// JSON key): Validate checks them with checkEnum, Schema publishes each list
// as the field's enum (so that the schema takes no value the loader
// refuses), Enums hands it out at its paths. The discriminators
// (perf.source, source.type, load.mode, a length's kind) are their variant
// tables' (variants.go), published as the oneOf's consts.
var stringEnums = map[string]stringEnum{
	"Engine.backend": {values: backends, paths: []string{"engine.backend"}},
	"TRTLLMSchedulerConfig.capacity_scheduler_policy": {values: trtllmCapacityPolicies,
		paths: []string{"engine.trtllm.scheduler_config.capacity_scheduler_policy"},
		why:   "TensorRT-LLM's GUARANTEED_NO_EVICT and MAX_UTILIZATION (STATIC_BATCH and PREFILL_FIRST are not modelled)"},
	"TRTLLMSchedulerConfig.context_chunking_policy": {values: trtllmChunkingPolicies,
		paths: []string{"engine.trtllm.scheduler_config.context_chunking_policy"}},
	"TRTLLMMoEConfig.backend": {values: trtllmMoEBackends, paths: []string{"engine.trtllm.moe_config.backend"}},
	"TRTLLM.force_alltoall_method": {values: trtllmA2AMethods, paths: []string{"engine.trtllm.force_alltoall_method"},
		why: "TensorRT-LLM 1.2's NotEnabled, DeepEP and DeepEPLowLatency (MNNVL, GB200's multi-node NVLink all-to-all, is not modelled)"},
	"Engine.moe_backend":  {values: moeBackends, paths: []string{"engine.moe_backend"}},
	"AICPerf.moe_routing": {values: moeRoutings, paths: []string{"engine.perf.moe_routing"}},
	"Scheduler.mamba_cache_mode": {values: mambaModes, paths: []string{"engine.scheduler.mamba_cache_mode"},
		why: "vLLM's none and align (all, a state at every block boundary, is not modelled)"},
	"SGLang.mamba_ssm_dtype": {values: []string{SGLangMambaFloat32, SGLangMambaBF16}, paths: []string{"engine.sglang.mamba_ssm_dtype"}},
	"SGLang.schedule_policy": {values: sglangPolicies, paths: []string{"engine.sglang.schedule_policy"},
		why: "SGLang's fcfs, lpm and lof (dfs-weight and random are not modelled)"},
	"SGLang.moe_a2a_backend": {values: []string{SGLangA2ANone, SGLangA2ADeepEP}, paths: []string{"engine.sglang.moe_a2a_backend"}},
	"SGLang.deepep_mode": {values: []string{SGLangDeepEPAuto, SGLangDeepEPNormal, SGLangDeepEPLowLatency},
		paths: []string{"engine.sglang.deepep_mode"}},
	"SGLang.speculative_algorithm": {values: sglangSpecAlgorithms, paths: []string{"engine.sglang.speculative_algorithm"},
		why: "SGLang's EAGLE worker (EAGLE, NEXTN); EAGLE3, STANDALONE and NGRAM are not modelled"},
	"Quantization.weights":  {values: weightDtypes, paths: []string{"engine.quantization.weights"}},
	"Quantization.kv_cache": {values: kvCacheDtypes, paths: []string{"engine.quantization.kv_cache"}},
	"Pool.placement": {values: placements, paths: []string{"engine.workers.aggregated.placement",
		"engine.workers.disaggregated.prefill.placement", "engine.workers.disaggregated.decode.placement"}},
	"Pool.all2all_backend": {values: all2alls, paths: []string{"engine.workers.aggregated.all2all_backend",
		"engine.workers.disaggregated.prefill.all2all_backend", "engine.workers.disaggregated.decode.all2all_backend"}},
	"Dataset.sampling":                          {values: samplings, paths: []string{"traffic.source.dataset.sampling"}},
	"MooncakeSource.context_mode":               {values: contextModes, paths: []string{"traffic.source.context_mode"}},
	"RateLoad.arrival":                          {values: arrivals, paths: []string{"traffic.load.arrival"}},
	"RateLoad.capped_arrival":                   {values: cappedArrivals, paths: []string{"traffic.load.capped_arrival"}},
	"LoadStage.arrival":                         {values: []string{StageSpread, StagePerSecondPoisson}, paths: []string{"traffic.load.stages.arrival"}},
	"ConcurrencyLoad.warmup_prompt":             {values: warmupPrompts, paths: []string{"traffic.load.warmup_prompt"}},
	"RateLoad.warmup_prompt":                    {values: warmupPrompts, paths: []string{"traffic.load.warmup_prompt"}},
	"AIPerfBenchmark.dataset_sampling_strategy": {values: samplings, paths: []string{"traffic.benchmark.dataset_sampling_strategy"}},
	"AIPerfBenchmark.request_rate_mode":         {values: arrivals, paths: []string{"traffic.benchmark.request_rate_mode"}},
	"VLLMBenchServe.variant":                    {values: []string{VariantVLLM, VariantInferenceX}, paths: []string{"traffic.benchmark.variant"}},
	"Execution.mode":                            {values: executionModes, paths: []string{"execution.mode"}, why: "the core runs offline replays only"},
}

// Enums returns, for every enumerated field of the spec (its dotted path), the
// allowed values in documentation order. The slices are copies.
func Enums() map[string][]string {
	out := map[string][]string{
		"engine.perf.source":        perfSources,
		"traffic.source.type":       sourceTypes,
		"traffic.source.isl.kind":   lengthKinds,
		"traffic.source.osl.kind":   lengthKinds,
		"traffic.source.turns.kind": lengthKinds,
		"traffic.load.mode":         loadModes,
		"traffic.benchmark.tool":    benchmarkUnion.names(),
	}
	for _, e := range stringEnums {
		for _, p := range e.paths {
			out[p] = e.values
		}
	}
	for k, v := range out {
		out[k] = append([]string(nil), v...)
	}
	return out
}

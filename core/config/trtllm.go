package config

import (
	"fmt"
	"slices"
)

// engine.backend trtllm: TensorRT-LLM's PyTorch backend (trtllm-serve and its
// LLM API), under the LLM API's own option names (tensorrt_llm/llmapi/
// llm_args.py, TorchLlmArgs, and the BuildConfig fields trtllm-serve passes,
// tensorrt_llm/builder.py), in engine.trtllm. The nesting is the LLM API's
// (kv_cache_config, scheduler_config, cuda_graph_config), as a recipe's
// extra_llm_api_options YAML writes them. engine.scheduler is vLLM's and is
// refused with this backend; the KV cache format is
// engine.quantization.kv_cache (kv_cache_config.dtype). Every field left out
// takes TensorRT-LLM's default for the release (TRTLLMDefaults); docs/trtllm.md
// states each rule with the upstream module that decides it.

// BackendTRTLLM is engine.backend's value for TensorRT-LLM.
const BackendTRTLLM = "trtllm"

// TRTLLM is engine.trtllm.
type TRTLLM struct {
	// MaxBatchSize is max_batch_size: the most requests one iteration
	// schedules (the capacity and micro-batch schedulers' bound).
	MaxBatchSize int `json:"max_batch_size"`
	// MaxNumTokens is max_num_tokens: the most tokens one iteration computes
	// (context tokens plus one per generation request, plus its draft
	// tokens), and the longest context chunk.
	MaxNumTokens int `json:"max_num_tokens"`
	// MaxSeqLen is max_seq_len: prompt + output tokens a request may have;
	// 0: the model's max_position_embeddings.
	MaxSeqLen int `json:"max_seq_len,omitempty"`
	// EnableChunkedPrefill is enable_chunked_prefill: a context longer than
	// the iteration's token budget is computed in chunks (multiples of
	// tokens_per_block); without it a context is scheduled whole or not at
	// all, and a prompt longer than max_num_tokens is refused.
	EnableChunkedPrefill bool `json:"enable_chunked_prefill"`
	// DisableOverlapScheduler is disable_overlap_scheduler: without it the
	// executor launches iteration n+1 before it has processed iteration n's
	// outputs (PyExecutor._executor_loop_overlap).
	DisableOverlapScheduler bool `json:"disable_overlap_scheduler"`
	// EnableAttentionDP is enable_attention_dp: the worker's tp GPUs run
	// attention data-parallel (tp ranks of one GPU each, with their own
	// scheduler and KV cache), the MoE layers across all of them.
	EnableAttentionDP bool `json:"enable_attention_dp"`
	// MoEExpertParallelSize is moe_expert_parallel_size (BaseLlmArgs;
	// trtllm-serve --ep_size): the routed experts spread over that many GPUs,
	// each split tp_size / moe_expert_parallel_size ways (moe_tp_size; the
	// Mapping's moe_tp_size × moe_ep_size = tp_size,
	// tensorrt_llm/mapping.py). 0: the pool's enable_expert_parallel says
	// (all tp_size GPUs, or none); not with it.
	MoEExpertParallelSize int `json:"moe_expert_parallel_size,omitempty"`
	// AttentionDPConfig is attention_dp_config (with enable_attention_dp).
	AttentionDPConfig TRTLLMAttentionDPConfig `json:"attention_dp_config"`
	// SchedulerConfig is scheduler_config.
	SchedulerConfig TRTLLMSchedulerConfig `json:"scheduler_config"`
	// KVCacheConfig is kv_cache_config.
	KVCacheConfig TRTLLMKVCacheConfig `json:"kv_cache_config"`
	// CUDAGraphConfig is cuda_graph_config; null: no CUDA graphs (every
	// iteration runs eagerly), as TensorRT-LLM reads cuda_graph_config: null.
	CUDAGraphConfig *TRTLLMCUDAGraphConfig `json:"cuda_graph_config"`
	// StreamInterval is stream_interval: a streaming request's tokens are
	// returned every StreamInterval of its iterations (its first token at
	// once, its last with the end of the response).
	StreamInterval int `json:"stream_interval"`
	// BatchWaitTimeoutIters and BatchWaitMaxTokensRatio are
	// batch_wait_timeout_iters and batch_wait_max_tokens_ratio (TorchLlmArgs,
	// both 0 by default: off): without attention DP, while generation
	// requests run, the contexts the schedulers picked are held back
	// (PyExecutor._waiting_requests, called from _schedule) until the
	// iteration's tokens (each context's whole length, one per generation
	// request plus its draft tokens) reach BatchWaitMaxTokensRatio ×
	// max_num_tokens or BatchWaitTimeoutIters iterations have held them. With
	// a ratio alone (timeout 0) nothing is held.
	BatchWaitTimeoutIters   int     `json:"batch_wait_timeout_iters,omitempty"`
	BatchWaitMaxTokensRatio float64 `json:"batch_wait_max_tokens_ratio,omitempty"`
	// SpeculativeConfig is speculative_config (absent: none).
	SpeculativeConfig *TRTLLMSpeculativeConfig `json:"speculative_config,omitempty"`
	// MoEConfig is moe_config (MoeConfig, tensorrt_llm/llmapi/llm_args.py).
	MoEConfig TRTLLMMoEConfig `json:"moe_config"`
	// ForceAlltoallMethod is the environment's TRTLLM_FORCE_ALLTOALL_METHOD
	// (an AlltoallMethodType name: TRTLLMAlltoallNotEnabled, …DeepEP,
	// …DeepEPLowLatency; "": unset), which WideEPMoE.
	// select_alltoall_method_type returns before any other rule
	// (tensorrt_llm/_torch/modules/fused_moe/fused_moe_wide_ep.py). Given
	// with moe_config.backend WIDEEP only (TRTLLMMoEConfig.A2ABackend).
	ForceAlltoallMethod string `json:"force_alltoall_method,omitempty"`
}

// TRTLLMMoEConfig is engine.trtllm.moe_config (MoeConfig,
// tensorrt_llm/llmapi/llm_args.py).
type TRTLLMMoEConfig struct {
	// Backend is backend: the fused-MoE module (create_moe.py,
	// get_moe_cls): TRTLLMMoECutlass (CutlassFusedMoE, also for ""),
	// TRTLLMMoEWideEP (WideEPMoE), or another of TRTLLMMoEBackends, priced as
	// CUTLASS's. Only WIDEEP changes what the simulation prices: its
	// attention-DP token exchange may be an all-to-all (A2ABackend).
	// TRTLLMMoEAuto is MoeConfig's default in the 1.3.0 candidates read
	// (1.3.0rc27's MoeConfig reference: backend 'AUTO', "selects default
	// backend based on model", from "Make TRTLLM MOE the default one for
	// GPTOSS on Blackwell", NVIDIA/TensorRT-LLM pull request 11074), CUTLASS
	// in 1.2; which module AUTO picks for a model and GPU is not modelled:
	// it is priced as CUTLASS's, as the other non-WIDEEP modules are.
	Backend string `json:"backend,omitempty"`
	// MaxNumTokens is max_num_tokens (0: unset): the most tokens, summed over
	// the attention-DP ranks, one fused-MoE call takes; more are split in
	// chunks (WideEPMoE.moe_max_num_tokens, else max_num_tokens × the
	// world size).
	MaxNumTokens int `json:"max_num_tokens,omitempty"`
}

// engine.trtllm.moe_config.backend values (MoeConfig.backend) and the
// AlltoallMethodType names of force_alltoall_method (fused_moe_wide_ep.py).
const (
	TRTLLMMoECutlass = "CUTLASS"
	TRTLLMMoEWideEP  = "WIDEEP"
	TRTLLMMoEAuto    = "AUTO"

	TRTLLMAlltoallNotEnabled       = "NotEnabled"
	TRTLLMAlltoallMNNVL            = "MNNVL"
	TRTLLMAlltoallDeepEP           = "DeepEP"
	TRTLLMAlltoallDeepEPLowLatency = "DeepEPLowLatency"
)

var (
	// trtllmMoEBackends: MoeConfig.backend's names in 1.2 and, from AUTO on,
	// those 1.3.0rc27's MoeConfig adds (its reference page).
	trtllmMoEBackends = []string{TRTLLMMoECutlass, "CUTEDSL", TRTLLMMoEWideEP, "TRTLLM", "DEEPGEMM", "VANILLA", "TRITON",
		TRTLLMMoEAuto, "DENSEGEMM", "MARLIN", "MEGAMOE_DEEPGEMM", "MEGAMOE_CUTEDSL"}
	trtllmA2AMethods = []string{TRTLLMAlltoallNotEnabled, TRTLLMAlltoallDeepEP, TRTLLMAlltoallDeepEPLowLatency}
)

// A2ABackend is the token exchange of a WideEPMoE pool with attention DP
// (config.All2All* names, priced as a pool's all2all_backend), by
// WideEPMoE.select_alltoall_method_type (TensorRT-LLM 1.2,
// tensorrt_llm/_torch/modules/fused_moe/fused_moe_wide_ep.py): the forced
// TRTLLM_FORCE_ALLTOALL_METHOD first (DeepEP: DeepEP's normal
// dispatch and combine, All2AllDeepEPHT; DeepEPLowLatency: All2AllDeepEPLL;
// NotEnabled: ""); unforced, MNNVL where the GPUs share a multi-node NVLink
// domain and DeepEP only with TRTLLM_CAN_USE_DEEP_EP=1, neither of which a
// spec can say, so "" (the all-gather and reduce-scatter). "" also without
// attention DP, for any other backend (CutlassFusedMoE exchanges tokens by
// all-gather and reduce-scatter off MNNVL). The forced method is returned
// before the rule's other checks (moe_ep_size ≤ top_k, tp_size 1).
func (t *TRTLLM) A2ABackend() string {
	if t == nil || !t.EnableAttentionDP || t.MoEConfig.Backend != TRTLLMMoEWideEP {
		return ""
	}
	switch t.ForceAlltoallMethod {
	case TRTLLMAlltoallDeepEP:
		return All2AllDeepEPHT
	case TRTLLMAlltoallDeepEPLowLatency:
		return All2AllDeepEPLL
	}
	return ""
}

// MoEMaxTokens is WideEPMoE.moe_max_num_tokens for a worker of worldSize
// GPUs: moe_config.max_num_tokens, else max_num_tokens × worldSize (the
// tokens of every attention-DP rank). A fused-MoE call over more tokens
// (summed over the ranks) runs in chunks, and WideEPMoE.can_use_alltoall
// then turns the all-to-all off: the chunks are all-gathered and
// reduce-scattered.
func (t *TRTLLM) MoEMaxTokens(worldSize int) int {
	if t.MoEConfig.MaxNumTokens > 0 {
		return t.MoEConfig.MaxNumTokens
	}
	return t.MaxNumTokens * worldSize
}

// TRTLLMSpeculativeConfig is engine.trtllm.speculative_config: MTP
// (MTPDecodingConfig, tensorrt_llm/llmapi/llm_args.py;
// tensorrt_llm/_torch/speculative/mtp.py), the only decoding_type modelled.
type TRTLLMSpeculativeConfig struct {
	// DecodingType is decoding_type: "MTP".
	DecodingType string `json:"decoding_type"`
	// NumNextnPredictLayers is num_nextn_predict_layers: the draft tokens
	// each generation step proposes and verifies (the model's MTP module
	// run that many times).
	NumNextnPredictLayers int `json:"num_nextn_predict_layers"`
	// AcceptanceRates and AcceptanceRate are the simulation's, not options
	// TensorRT-LLM takes (at most one of them given). AcceptanceRates[i] is
	// the probability that draft i + 1 is accepted when every draft before
	// it was (AIConfigurator's nextn_accept_rates), at most
	// NumNextnPredictLayers of them, a draft beyond the list never accepted:
	// a step yields 1 + a₁ + a₁a₂ + … + a₁⋯a_N tokens on average.
	// AcceptanceRate is one rate for every draft, 1 + a + a² + … + a^N.
	// Neither given: DefaultMTPAcceptanceRates, its first
	// NumNextnPredictLayers.
	AcceptanceRates []float64 `json:"acceptance_rates,omitempty"`
	AcceptanceRate  *float64  `json:"acceptance_rate,omitempty"`
}

// Rates is the acceptance of each of the NumNextnPredictLayers drafts (a
// validated, normalized block): AcceptanceRates, 0 beyond the list, or
// AcceptanceRate for each.
func (sp *TRTLLMSpeculativeConfig) Rates() []float64 {
	return acceptanceRates(sp.NumNextnPredictLayers, sp.AcceptanceRates, sp.AcceptanceRate)
}

// TRTLLMAttentionDPConfig is engine.trtllm.attention_dp_config
// (AttentionDpConfig, tensorrt_llm/llmapi/llm_args.py), read by the
// executor's attention-DP balance (PyExecutor._balance_adp_requests).
type TRTLLMAttentionDPConfig struct {
	// EnableBalance is enable_balance: a rank's scheduled contexts wait
	// until every rank has one (and room for it), at most TimeoutIters
	// iterations, and not while some rank has no generation request.
	EnableBalance bool `json:"enable_balance"`
	// TimeoutIters is timeout_iters (default 50).
	TimeoutIters int `json:"timeout_iters"`
	// BatchingWaitIters is batching_wait_iters (default 10): with every
	// rank holding a context and a generation request, the contexts wait
	// that many iterations more to batch.
	BatchingWaitIters int `json:"batching_wait_iters"`
}

// TRTLLMSchedulerConfig is engine.trtllm.scheduler_config.
type TRTLLMSchedulerConfig struct {
	// CapacitySchedulerPolicy: TRTLLMGuaranteedNoEvict or
	// TRTLLMMaxUtilization.
	CapacitySchedulerPolicy string `json:"capacity_scheduler_policy"`
	// ContextChunkingPolicy: TRTLLMFirstComeFirstServed or
	// TRTLLMEqualProgress (with enable_chunked_prefill).
	ContextChunkingPolicy string `json:"context_chunking_policy"`
}

// TRTLLMKVCacheConfig is engine.trtllm.kv_cache_config.
type TRTLLMKVCacheConfig struct {
	// FreeGPUMemoryFraction is free_gpu_memory_fraction: the share of the
	// GPU memory left after the weights and the profiled peak of a
	// max_num_tokens iteration that the KV cache takes.
	FreeGPUMemoryFraction float64 `json:"free_gpu_memory_fraction"`
	// EnableBlockReuse is enable_block_reuse: blocks of finished requests
	// stay cached for later requests with the same prefix.
	EnableBlockReuse bool `json:"enable_block_reuse"`
	// TokensPerBlock is tokens_per_block.
	TokensPerBlock int `json:"tokens_per_block"`
	// MaxTokens is max_tokens: caps the KV cache, tokens (0: what
	// free_gpu_memory_fraction leaves).
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxAttentionWindow is max_attention_window: the KV cache manager's
	// attention window of each layer, tokens, layer i taking
	// MaxAttentionWindow[i mod len] (BaseKVCacheManager::
	// groupLayersByWindowSize, cpp/tensorrt_llm/batch_manager/
	// kvCacheManager.cpp); a window of max_seq_len or more is full attention.
	// Absent, or one size: every layer keeps full-length KV, a model's
	// sliding-window layers too (the window is the attention op's alone).
	// Two sizes or more: variable sliding-window attention, a block pool per
	// window (trtllmWindows, core/replay/trtllmwindows.go).
	MaxAttentionWindow []int `json:"max_attention_window,omitempty"`
}

// TRTLLMCUDAGraphConfig is engine.trtllm.cuda_graph_config.
type TRTLLMCUDAGraphConfig struct {
	// BatchSizes is batch_sizes: the batch sizes captured (any order);
	// absent: generated from MaxBatchSize (CUDAGraphBatchSizes in
	// core/engine/trtllm).
	BatchSizes []int `json:"batch_sizes,omitempty"`
	// MaxBatchSize is max_batch_size: the largest generation-only batch
	// captured (0 given: 128, TensorRT-LLM's default; with BatchSizes,
	// their largest).
	MaxBatchSize int `json:"max_batch_size"`
	// EnablePadding is enable_padding: a generation-only batch runs at the
	// next captured batch size (dummy requests fill it); without it only a
	// batch of exactly a captured size runs as a graph.
	EnablePadding bool `json:"enable_padding"`
}

// engine.trtllm.scheduler_config values (tensorrt_llm/llmapi/llm_args.py,
// CapacitySchedulerPolicy and ContextChunkingPolicy).
const (
	TRTLLMGuaranteedNoEvict    = "GUARANTEED_NO_EVICT"
	TRTLLMMaxUtilization       = "MAX_UTILIZATION"
	TRTLLMFirstComeFirstServed = "FIRST_COME_FIRST_SERVED"
	TRTLLMEqualProgress        = "EQUAL_PROGRESS"
)

// TRTLLMDecodingMTP is speculative_config.decoding_type's value for MTP.
const TRTLLMDecodingMTP = "MTP"

var (
	trtllmCapacityPolicies = []string{TRTLLMGuaranteedNoEvict, TRTLLMMaxUtilization}
	trtllmChunkingPolicies = []string{TRTLLMFirstComeFirstServed, TRTLLMEqualProgress}
)

// TensorRT-LLM's fixed defaults, from the release's source.
const (
	// DefaultTRTLLMMaxBatchSize and DefaultTRTLLMMaxNumTokens are
	// BuildConfig's max_batch_size and max_num_tokens (tensorrt_llm/
	// builder.py), trtllm-serve's --max_batch_size and --max_num_tokens
	// defaults.
	DefaultTRTLLMMaxBatchSize = 2048
	DefaultTRTLLMMaxNumTokens = 8192
	// DefaultTRTLLMFreeGPUMemoryFraction: KvCacheConfig's "Default is 90%".
	DefaultTRTLLMFreeGPUMemoryFraction = 0.9
	// DefaultTRTLLMTokensPerBlock: KvCacheConfig.tokens_per_block.
	DefaultTRTLLMTokensPerBlock = 32
	// DefaultTRTLLMCUDAGraphMaxBatchSize: CudaGraphConfig's
	// "max_batch_size or 128" when no batch sizes are given.
	DefaultTRTLLMCUDAGraphMaxBatchSize = 128
	// DefaultTRTLLMStreamInterval: stream_interval's default, every
	// iteration (TorchLlmArgs).
	DefaultTRTLLMStreamInterval = 1
	// DefaultTRTLLMADPTimeoutIters and DefaultTRTLLMADPBatchingWaitIters:
	// AttentionDpConfig's timeout_iters and batching_wait_iters.
	DefaultTRTLLMADPTimeoutIters      = 50
	DefaultTRTLLMADPBatchingWaitIters = 10
	// MaxMTPLayers bounds num_nextn_predict_layers.
	MaxMTPLayers = 16
	// DefaultTRTLLMRelease is the TensorRT-LLM release whose defaults and
	// kernel tables stand in when engine.backend_version is not given: the
	// newest release of AIConfigurator's dev measurements
	// (../shared/data/silicon/trtllm_dev.csv).
	DefaultTRTLLMRelease = "1.2.0rc6.post1"
)

// DefaultMTPAcceptanceRates is speculative_config.acceptance_rates when
// neither it nor acceptance_rate is given: AIConfigurator's default for its
// TensorRT-LLM MTP estimate (nextn_accept_rates [0.85, 0.3, 0, 0, 0]:
// aiconfigurator sdk/task_v1_compat.py, convert_v1_to_v2, folded by
// _fold_accept_rates as E = Σᵢ Πⱼ≤ᵢ pⱼ; sdk/config_builders.py, apply_nextn,
// before). Its first rate is DeepSeek-V3's report's for the second token
// (arXiv 2412.19437, 85–90 %), which measured one MTP depth only.
var DefaultMTPAcceptanceRates = []float64{0.85, 0.3, 0, 0, 0}

// TRTLLMTokensPerBlock are the tokens_per_block values taken: powers of two
// up to 256 (the KV cache manager's block layout).
var TRTLLMTokensPerBlock = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// Releases at which a modelled TensorRT-LLM default changed.
var (
	// trtllmOverlapSince: the PyTorch backend's overlap scheduler on by
	// default (TorchLlmArgs.disable_overlap_scheduler = False, replacing
	// the opt-in enable_overlap_scheduler of 0.19).
	trtllmOverlapSince = Release{0, 20, 0}
	// trtllmCUDAGraphSince: cuda_graph_config defaults to CudaGraphConfig()
	// (CUDA graphs on, batch sizes up to 128) from 1.0, where it replaced
	// use_cuda_graph (default False).
	trtllmCUDAGraphSince = Release{1, 0, 0}
)

// TRTLLMVersionDefaults are the defaults a TensorRT-LLM release sets that the
// simulation prices, and the notes on what it does not model.
type TRTLLMVersionDefaults struct {
	Release Release
	// Overlap: the overlap scheduler runs unless disable_overlap_scheduler.
	Overlap bool
	// CUDAGraphs: CUDA graphs are on unless cuda_graph_config is null.
	CUDAGraphs bool
	Notes      []string
}

// TRTLLMDefaults is what TensorRT-LLM release r sets by default among the
// settings the simulation prices. Every release of the rows (1.0–1.3) has
// max_batch_size 2048, max_num_tokens 8192, GUARANTEED_NO_EVICT,
// FIRST_COME_FIRST_SERVED chunking (chunked prefill off), block reuse on,
// tokens_per_block 32 and free_gpu_memory_fraction 0.9; the overlap
// scheduler is on from 0.20 and CUDA graphs from 1.0 (above). The later
// releases read (1.3.0rc27, 1.4.0rc4) keep all of these; the rules that changed
// inside the 1.3.0 candidates (a context charged less its reusable prefix, the
// +64 CUDA-graph list with padding) are not modelled: docs/trtllm.md, "Releases
// after 1.2.0rc6.post1".
func TRTLLMDefaults(r Release) TRTLLMVersionDefaults {
	d := TRTLLMVersionDefaults{Release: r, Overlap: !r.Before(trtllmOverlapSince), CUDAGraphs: !r.Before(trtllmCUDAGraphSince)}
	if r.Before(trtllmCUDAGraphSince) {
		d.Notes = append(d.Notes, fmt.Sprintf("TensorRT-LLM %s served the TensorRT engine backend by default; the PyTorch backend's rules stand in", r))
	}
	return d
}

// TRTLLMRelease is the TensorRT-LLM release a spec runs: engine.backend_version
// resolved, else DefaultTRTLLMRelease. Validate has checked the version.
func (e *Engine) TRTLLMRelease() Release {
	v := e.BackendVersion
	if v == "" {
		v = DefaultTRTLLMRelease
	}
	r, _, _ := ResolveEngineVersion(v, BackendTRTLLM)
	return r
}

// trtllmDefaults fills engine.trtllm's defaults for the release (TRTLLMDefaults),
// and a pool's own block's, a given engine.tokenization's shared_event_loop
// (on: trtllm-serve's one event loop), and, for source aic, the release's kernel tables
// (the version as given: the tables are named by release candidate, 1.2.0rc5)
// when not named.
func trtllmDefaults(s *Spec, present func(string) bool) {
	e := &s.Engine
	if e.TRTLLM == nil {
		e.TRTLLM = &TRTLLM{}
	}
	d := TRTLLMDefaults(e.TRTLLMRelease())
	e.TRTLLM.fill(d, "engine.trtllm.", present)
	for _, pl := range e.Workers.pools() {
		if pl.pool.TRTLLM != nil {
			pl.pool.TRTLLM.fill(d, pl.path+".trtllm.", present)
		}
	}
	if t := e.Tokenization; t != nil && !present("engine.tokenization.shared_event_loop") {
		// trtllm-serve's OpenAI server runs a request's input processing
		// (BaseLLM.generate_async: tokenization) and each of its responses'
		// handling (GenerationResult.aresult_step: handle_response and the
		// detokenization) on its one asyncio event loop
		// (tensorrt_llm/serve/openai_server.py, tensorrt_llm/executor/result.py)
		on := true
		t.SharedEventLoop = &on
	}
	if a, ok := e.Perf.Source.(AICPerf); ok && !present("engine.perf.backend_version") {
		v := e.BackendVersion
		if v == "" {
			v = DefaultTRTLLMRelease
		}
		a.BackendVersion = v
		e.Perf.Source = a
	}
}

// fill sets the fields of a TensorRT-LLM block (at path p) that the input
// left out to release d's defaults.
func (t *TRTLLM) fill(d TRTLLMVersionDefaults, p string, present func(string) bool) {
	if !present(p + "max_batch_size") {
		t.MaxBatchSize = DefaultTRTLLMMaxBatchSize
	}
	if !present(p + "max_num_tokens") {
		t.MaxNumTokens = DefaultTRTLLMMaxNumTokens
	}
	if !present(p + "disable_overlap_scheduler") {
		t.DisableOverlapScheduler = !d.Overlap
	}
	sc := &t.SchedulerConfig
	if sc.CapacitySchedulerPolicy == "" {
		sc.CapacitySchedulerPolicy = TRTLLMGuaranteedNoEvict
	}
	if sc.ContextChunkingPolicy == "" {
		sc.ContextChunkingPolicy = TRTLLMFirstComeFirstServed
	}
	kv := &t.KVCacheConfig
	if !present(p + "kv_cache_config.free_gpu_memory_fraction") {
		kv.FreeGPUMemoryFraction = DefaultTRTLLMFreeGPUMemoryFraction
	}
	if !present(p + "kv_cache_config.enable_block_reuse") {
		kv.EnableBlockReuse = true
	}
	if !present(p + "kv_cache_config.tokens_per_block") {
		kv.TokensPerBlock = DefaultTRTLLMTokensPerBlock
	}
	switch {
	case t.CUDAGraphConfig == nil && !present(p+"cuda_graph_config") && d.CUDAGraphs:
		t.CUDAGraphConfig = &TRTLLMCUDAGraphConfig{MaxBatchSize: DefaultTRTLLMCUDAGraphMaxBatchSize}
	case t.CUDAGraphConfig != nil && t.CUDAGraphConfig.MaxBatchSize == 0:
		t.CUDAGraphConfig.MaxBatchSize = DefaultTRTLLMCUDAGraphMaxBatchSize
		if b := t.CUDAGraphConfig.BatchSizes; len(b) > 0 {
			t.CUDAGraphConfig.MaxBatchSize = slices.Max(b)
		}
	}
	if !present(p + "stream_interval") {
		t.StreamInterval = DefaultTRTLLMStreamInterval
	}
	if !present(p + "attention_dp_config.timeout_iters") {
		t.AttentionDPConfig.TimeoutIters = DefaultTRTLLMADPTimeoutIters
	}
	if !present(p + "attention_dp_config.batching_wait_iters") {
		t.AttentionDPConfig.BatchingWaitIters = DefaultTRTLLMADPBatchingWaitIters
	}
	if sp := t.SpeculativeConfig; sp != nil {
		sp.AcceptanceRates = defaultAcceptance(sp.NumNextnPredictLayers, sp.AcceptanceRates, sp.AcceptanceRate)
	}
}

// validateTRTLLM checks engine.trtllm and the pools' own blocks, and that
// engine.scheduler (vLLM's) is not given with them.
func (e *Engine) validateTRTLLM() error {
	if e.Backend != BackendTRTLLM {
		if e.TRTLLM != nil {
			where := "vLLM's engine arguments in engine.scheduler"
			if e.Backend == BackendSGLang {
				where = "SGLang's server arguments in engine.sglang"
			}
			return errorf("engine.trtllm", "holds TensorRT-LLM's options: set engine.backend: trtllm, or give %s", where)
		}
		for _, pl := range e.Workers.pools() {
			if pl.pool.TRTLLM != nil {
				return errorf(pl.path+".trtllm", "holds TensorRT-LLM's options: set engine.backend: trtllm")
			}
		}
		return nil
	}
	if f := nonZeroField(e.Scheduler); f != "" {
		return errorf("engine.scheduler."+f, "engine.scheduler holds vLLM's engine arguments; with engine.backend trtllm give TensorRT-LLM's options in engine.trtllm (%s)",
			trtllmNameOf(f))
	}
	for _, pl := range e.Workers.pools() {
		t := pl.pool.TRTLLM
		if t == nil {
			t = e.TRTLLM
		} else if err := t.validate(pl.path + ".trtllm."); err != nil {
			return err
		}
		if t != nil && t.EnableAttentionDP && pl.pool.DataParallelSize != nil && *pl.pool.DataParallelSize > 1 {
			return errorf(pl.path+".data_parallel_size", "with enable_attention_dp the pool's tp GPUs are the attention data-parallel ranks (TensorRT-LLM's tp_size): leave data_parallel_size out")
		}
	}
	if e.TRTLLM == nil {
		return nil // Normalize fills it
	}
	return e.TRTLLM.validate("engine.trtllm.")
}

// validate checks one TensorRT-LLM block at path p.
func (t *TRTLLM) validate(p string) error {
	kv := t.KVCacheConfig
	if err := firstErr(checkInt(p+"max_batch_size", "TRTLLM.max_batch_size", t.MaxBatchSize),
		checkInt(p+"max_num_tokens", "TRTLLM.max_num_tokens", t.MaxNumTokens),
		checkIntOrUnset(p+"max_seq_len", "TRTLLM.max_seq_len", t.MaxSeqLen),
		checkFloat(p+"kv_cache_config.free_gpu_memory_fraction", "TRTLLMKVCacheConfig.free_gpu_memory_fraction", kv.FreeGPUMemoryFraction),
		checkInt(p+"kv_cache_config.tokens_per_block", "TRTLLMKVCacheConfig.tokens_per_block", kv.TokensPerBlock),
		checkIntOrUnset(p+"kv_cache_config.max_tokens", "TRTLLMKVCacheConfig.max_tokens", kv.MaxTokens),
		checkEnum(p+"scheduler_config.capacity_scheduler_policy", "TRTLLMSchedulerConfig.capacity_scheduler_policy",
			t.SchedulerConfig.CapacitySchedulerPolicy),
		checkEnum(p+"scheduler_config.context_chunking_policy", "TRTLLMSchedulerConfig.context_chunking_policy",
			t.SchedulerConfig.ContextChunkingPolicy)); err != nil {
		return err
	}
	for i, w := range kv.MaxAttentionWindow { // a window is tokens of a sequence: max_seq_len's range
		if err := checkInt(fmt.Sprintf("%skv_cache_config.max_attention_window[%d]", p, i), "TRTLLM.max_seq_len", w); err != nil {
			return err
		}
	}
	if g := t.CUDAGraphConfig; g != nil {
		// batch_sizes first: a max_batch_size left out is the largest of them
		for i, b := range g.BatchSizes {
			f := fmt.Sprintf("%scuda_graph_config.batch_sizes[%d]", p, i)
			if b < 1 {
				return errorf(f, "must be ≥ 1, got %d", b)
			}
			if err := checkInt(f, "TRTLLMCUDAGraphConfig.max_batch_size", b); err != nil {
				return err
			}
		}
		if err := checkInt(p+"cuda_graph_config.max_batch_size", "TRTLLMCUDAGraphConfig.max_batch_size", g.MaxBatchSize); err != nil {
			return err
		}
		if len(g.BatchSizes) > 0 && slices.Max(g.BatchSizes) != g.MaxBatchSize {
			// CudaGraphConfig: "max_batch_size must equal max(batch_sizes)"
			return errorf(p+"cuda_graph_config.max_batch_size", "must equal the largest of batch_sizes (%d) when both are given, got %d",
				slices.Max(g.BatchSizes), g.MaxBatchSize)
		}
	}
	if err := firstErr(checkIntOrUnset(p+"moe_expert_parallel_size", "TRTLLM.moe_expert_parallel_size", t.MoEExpertParallelSize),
		checkInt(p+"stream_interval", "TRTLLM.stream_interval", t.StreamInterval),
		checkInt(p+"batch_wait_timeout_iters", "TRTLLM.batch_wait_timeout_iters", t.BatchWaitTimeoutIters),
		checkFloat(p+"batch_wait_max_tokens_ratio", "TRTLLM.batch_wait_max_tokens_ratio", t.BatchWaitMaxTokensRatio),
		checkInt(p+"attention_dp_config.timeout_iters", "TRTLLMAttentionDPConfig.timeout_iters", t.AttentionDPConfig.TimeoutIters),
		checkInt(p+"attention_dp_config.batching_wait_iters", "TRTLLMAttentionDPConfig.batching_wait_iters",
			t.AttentionDPConfig.BatchingWaitIters)); err != nil {
		return err
	}
	if b := t.MoEConfig.Backend; b != "" {
		if err := checkEnum(p+"moe_config.backend", "TRTLLMMoEConfig.backend", b); err != nil {
			return err
		}
	}
	if err := checkIntOrUnset(p+"moe_config.max_num_tokens", "TRTLLMMoEConfig.max_num_tokens", t.MoEConfig.MaxNumTokens); err != nil {
		return err
	}
	if m := t.ForceAlltoallMethod; m != "" {
		if err := checkEnum(p+"force_alltoall_method", "TRTLLM.force_alltoall_method", m); err != nil {
			return err
		}
		if t.MoEConfig.Backend != TRTLLMMoEWideEP {
			return errorf(p+"force_alltoall_method", "is read by WideEPMoE: give it with moe_config.backend %s", TRTLLMMoEWideEP)
		}
	}
	if t.MoEConfig.Backend == TRTLLMMoEWideEP && !t.EnableAttentionDP {
		// WideEPMoE.__init__ asserts self.use_dp, the mapping's
		// enable_attention_dp (fused_moe_wide_ep.py, every release read)
		return errorf(p+"moe_config.backend", "%s needs enable_attention_dp: true (WideEPMoE asserts \"Attention DP should be used with WideEP\": TensorRT-LLM does not start without it)", TRTLLMMoEWideEP)
	}
	if sp := t.SpeculativeConfig; sp != nil {
		q := p + "speculative_config."
		if sp.DecodingType != TRTLLMDecodingMTP {
			return errorf(q+"decoding_type", "%s is not modelled (only MTP)", quote(sp.DecodingType))
		}
		if err := checkInt(q+"num_nextn_predict_layers", "TRTLLMSpeculativeConfig.num_nextn_predict_layers", sp.NumNextnPredictLayers); err != nil {
			return err
		}
		if err := validateAcceptance(q, "TRTLLMSpeculativeConfig.acceptance_rate", "num_nextn_predict_layers", sp.NumNextnPredictLayers,
			sp.AcceptanceRates, sp.AcceptanceRate); err != nil {
			return err
		}
	}
	return nil
}

// TRTLLMOf is the TensorRT-LLM block that serves pool p: its own, else
// engine.trtllm.
func (e *Engine) TRTLLMOf(p *Pool) *TRTLLM {
	if p != nil && p.TRTLLM != nil {
		return p.TRTLLM
	}
	return e.TRTLLM
}

// refuseTRTLLMZeros refuses a 0 given for a field of a TensorRT-LLM block
// (engine.trtllm, a pool's trtllm) whose 0 means "left out", where it is
// still told from one left out.
func (e *Engine) refuseTRTLLMZeros(seen map[string]bool) error {
	blocks := []struct {
		p string
		t *TRTLLM
	}{{"engine.trtllm.", e.TRTLLM}}
	for _, pl := range e.Workers.pools() {
		blocks = append(blocks, struct {
			p string
			t *TRTLLM
		}{pl.path + ".trtllm.", pl.pool.TRTLLM})
	}
	for _, b := range blocks {
		if b.t == nil {
			continue
		}
		if seen[b.p+"max_seq_len"] && b.t.MaxSeqLen == 0 {
			return checkInt(b.p+"max_seq_len", "TRTLLM.max_seq_len", 0)
		}
		if seen[b.p+"kv_cache_config.max_tokens"] && b.t.KVCacheConfig.MaxTokens == 0 {
			return checkInt(b.p+"kv_cache_config.max_tokens", "TRTLLMKVCacheConfig.max_tokens", 0)
		}
		if seen[b.p+"moe_expert_parallel_size"] && b.t.MoEExpertParallelSize == 0 {
			return checkInt(b.p+"moe_expert_parallel_size", "TRTLLM.moe_expert_parallel_size", 0)
		}
		if seen[b.p+"moe_config.max_num_tokens"] && b.t.MoEConfig.MaxNumTokens == 0 {
			return checkInt(b.p+"moe_config.max_num_tokens", "TRTLLMMoEConfig.max_num_tokens", 0)
		}
	}
	return nil
}

// namedPool is a pool of the spec with its dotted path.
type namedPool struct {
	path string
	pool *Pool
}

// pools are the spec's worker pools (aggregated, or prefill and decode).
func (w Workers) pools() []namedPool {
	if d := w.Disaggregated; d != nil {
		return []namedPool{{"engine.workers.disaggregated.prefill", &d.Prefill}, {"engine.workers.disaggregated.decode", &d.Decode}}
	}
	if w.Aggregated != nil {
		return []namedPool{{"engine.workers.aggregated", w.Aggregated}}
	}
	return nil
}

// trtllmNameOf says where a vLLM scheduler setting goes with TensorRT-LLM.
func trtllmNameOf(vllmKey string) string {
	switch vllmKey {
	case "max_num_seqs":
		return "max_batch_size"
	case "max_num_batched_tokens":
		return "max_num_tokens"
	case "block_size":
		return "kv_cache_config.tokens_per_block"
	case "enable_prefix_caching":
		return "kv_cache_config.enable_block_reuse"
	case "max_model_len":
		return "max_seq_len"
	case "num_gpu_blocks":
		return "kv_cache_config.max_tokens, in tokens"
	case "gpu_memory_utilization":
		return "kv_cache_config.free_gpu_memory_fraction, a share of the memory left after the weights and activations"
	case "async_scheduling":
		return "disable_overlap_scheduler"
	case "speculative_config":
		return "speculative_config"
	}
	return "see docs/trtllm.md"
}

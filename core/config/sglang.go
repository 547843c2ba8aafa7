package config

import (
	"math"
	"reflect"
	"strings"
)

// engine.backend sglang: SGLang's server arguments (python/sglang/srt/
// server_args.py, ServerArgs) that the simulation prices, under SGLang's own
// names, in engine.sglang. engine.scheduler is vLLM's and is refused with
// this backend. A field left out takes SGLang's default: the fixed ones here
// (Normalize fills them), the ones SGLang derives from the GPU, the TP degree
// and its release (chunked_prefill_size, cuda_graph_max_bs,
// mem_fraction_static) when a worker is built (SGLangDefaults), and the ones
// derived from the KV pool (max_running_requests, the token pool's size) by
// the engine (core/engine/sglang).

// SGLang is engine.sglang.
type SGLang struct {
	// MaxRunningRequests is --max-running-requests; 0: derived from the KV
	// pool (min(max_total_tokens / 2, the request pool), the engine's
	// rule).
	MaxRunningRequests int `json:"max_running_requests,omitempty"`
	// ChunkedPrefillSize is --chunked-prefill-size: the most prompt tokens
	// one pass computes (-1: no chunking); 0: by GPU memory and release.
	ChunkedPrefillSize int `json:"chunked_prefill_size,omitempty"`
	// MaxPrefillTokens is --max-prefill-tokens: the prompt token budget of
	// one prefill pass's admissions (default 16384).
	MaxPrefillTokens int `json:"max_prefill_tokens"`
	// MaxTotalTokens is --max-total-tokens: caps the KV pool, tokens; 0:
	// what mem_fraction_static leaves.
	MaxTotalTokens int `json:"max_total_tokens,omitempty"`
	// MemFractionStatic is --mem-fraction-static: the share of GPU memory
	// for the weights and the KV pool; 0: by GPU memory, TP and release.
	MemFractionStatic float64 `json:"mem_fraction_static,omitempty"`
	// PageSize is --page-size: tokens per KV page (default 1: the radix
	// cache matches prefixes token by token).
	PageSize int `json:"page_size"`
	// ContextLength is --context-length; 0: the model's
	// max_position_embeddings.
	ContextLength int `json:"context_length,omitempty"`
	// SchedulePolicy is --schedule-policy: SGLangPolicyFCFS (default),
	// SGLangPolicyLPM or SGLangPolicyLOF.
	SchedulePolicy string `json:"schedule_policy"`
	// ScheduleConservativeness is --schedule-conservativeness: scales the
	// initial new_token_ratio (default 1).
	ScheduleConservativeness float64 `json:"schedule_conservativeness"`
	// DisableRadixCache is --disable-radix-cache: no prefix reuse (SGLang's
	// ChunkCache).
	DisableRadixCache bool `json:"disable_radix_cache,omitempty"`
	// EnableMixedChunk is --enable-mixed-chunk: a prefill pass also decodes
	// the running requests.
	EnableMixedChunk bool `json:"enable_mixed_chunk,omitempty"`
	// DisableOverlapSchedule is --disable-overlap-schedule: without it the
	// scheduler forms pass n+1 while pass n runs.
	DisableOverlapSchedule bool `json:"disable_overlap_schedule,omitempty"`
	// CUDAGraphMaxBS is --cuda-graph-max-bs: decode passes of up to this
	// many requests run as CUDA graphs; 0: by GPU memory, TP and release.
	CUDAGraphMaxBS int `json:"cuda_graph_max_bs,omitempty"`
	// Hybrid models (linear-attention or Mamba layers: a recurrent state per
	// request, in SGLang's mamba pool). MaxMambaCacheSize is
	// --max-mamba-cache-size: the states the pool holds; 0: SGLang's rule
	// (max_running_requests with disable_radix_cache, else a share of the
	// memory, MambaFullMemoryRatio). MambaSSMDtype is --mamba-ssm-dtype,
	// the recurrent state's format (SGLangMambaFloat32, SGLangMambaBF16);
	// "": the checkpoint's mamba_ssm_dtype. MambaFullMemoryRatio is
	// --mamba-full-memory-ratio, the mamba pool's memory over the KV pool's
	// (0: 0.9).
	MaxMambaCacheSize    int     `json:"max_mamba_cache_size,omitempty"`
	MambaSSMDtype        string  `json:"mamba_ssm_dtype,omitempty"`
	MambaFullMemoryRatio float64 `json:"mamba_full_memory_ratio,omitempty"`
	// SpeculativeAlgorithm is --speculative-algorithm: SGLangSpecEAGLE, or
	// SGLangSpecNEXTN (a DeepSeek-style MTP layer as the draft, run by the
	// same EAGLE worker); "": none.
	SpeculativeAlgorithm string `json:"speculative_algorithm,omitempty"`
	// SpeculativeNumSteps is --speculative-num-steps: the draft model's
	// steps per decode iteration, each proposing one token (required with an
	// algorithm).
	SpeculativeNumSteps int `json:"speculative_num_steps,omitempty"`
	// SpeculativeEagleTopk is --speculative-eagle-topk: 1 (a chain of
	// drafts; the tree of topk > 1 is not modelled).
	SpeculativeEagleTopk int `json:"speculative_eagle_topk,omitempty"`
	// SpeculativeNumDraftTokens is --speculative-num-draft-tokens: the
	// tokens each decode verifies; with topk 1, speculative_num_steps + 1
	// (server_args.py sets it so).
	SpeculativeNumDraftTokens int `json:"speculative_num_draft_tokens,omitempty"`
	// SpeculativeAcceptanceRates and SpeculativeAcceptanceRate are the
	// simulation's, not flags SGLang takes: the probability that draft i is
	// accepted when every draft before it was, one per draft (a draft beyond
	// the list is never accepted), or one rate for every draft; neither
	// given, the first speculative_num_steps of DefaultMTPAcceptanceRates,
	// as TensorRT-LLM's and vLLM's speculative blocks (speculative.go).
	SpeculativeAcceptanceRates []float64 `json:"speculative_acceptance_rates,omitempty"`
	SpeculativeAcceptanceRate  *float64  `json:"speculative_acceptance_rate,omitempty"`
	// EnableSpecV2 is the environment's SGLANG_ENABLE_SPEC_V2=1: the EAGLE
	// worker of spec v2, which keeps the overlap scheduler (without it
	// speculative decoding turns the overlap scheduler off).
	EnableSpecV2 bool `json:"enable_spec_v2,omitempty"`
	// MoEA2ABackend is --moe-a2a-backend: SGLangA2ADeepEP sends the routed
	// tokens to the GPUs of their experts and back with DeepEP (expert
	// parallelism over data-parallel attention ranks: the pool's
	// enable_expert_parallel and data_parallel_size > 1); "" or
	// SGLangA2ANone: the experts' outputs are all-reduced.
	MoEA2ABackend string `json:"moe_a2a_backend,omitempty"`
	// EPSize is --ep-size (--expert-parallel-size): the routed experts
	// spread over that many of the worker's GPUs, each group of experts split
	// tp / ep_size ways (distributed/parallel_state.py
	// initialize_model_parallel: moe_tp_size = tensor_model_parallel_size //
	// moe_ep_size // moe_dp_size; server_args.py: ep_size, default 1). 0:
	// the pool's enable_expert_parallel says (all its GPUs, else 1). The
	// split both ways is simulated without data-parallel attention.
	EPSize int `json:"ep_size,omitempty"`
	// DeepEPMode is --deepep-mode, DeepEP's kernels: SGLangDeepEPNormal
	// (high throughput), SGLangDeepEPLowLatency, or SGLangDeepEPAuto (the
	// default: normal for a batch with a prefill, low-latency for a decode
	// batch; layers/moe/utils.py DeepEPMode.resolve).
	DeepEPMode string `json:"deepep_mode,omitempty"`
	// EagerLaunchUsPerLayer is the simulation's, not a flag SGLang takes:
	// the host's time to launch one decoder layer's kernels, µs, in a pass
	// that runs eagerly. SGLang replays CUDA graphs for decode passes
	// (model_executor/cuda_graph_runner.py can_run: decode batches of at
	// most cuda_graph_max_bs) and, from 0.5.10, piecewise ones for extend
	// passes up to their largest captured size (SGLangPiecewiseByDefault;
	// through 0.5.9 off unless --enable-piecewise-cuda-graph), so any other
	// extend pass, or a decode pass above cuda_graph_max_bs, launches every
	// layer's kernels from Python, and the pass lasts at least
	// layers × this (perf.Breakdown.PassNs). Left out: the model's measured
	// value (SGLangEagerLaunchUsPerLayer: DeepSeek's and Llama's decoder
	// layers, 0 for the others); 0: not modelled.
	EagerLaunchUsPerLayer *float64 `json:"eager_launch_us_per_layer,omitempty"`
	// StreamInterval is --stream-interval: the scheduler sends a streaming
	// request's new tokens to the detokenizer only at some output lengths
	// (scheduler_output_processor_mixin.py, stream_output_generation;
	// SGLangStreamsFirstToken says which); 0: 1, every pass.
	StreamInterval int `json:"stream_interval,omitempty"`
}

// SGLangStreamsFirstToken reports whether SGLang release r sends a
// streaming request's output at the lengths ≡ 1 modulo an interval above 1,
// so its first token at once (stream_output_generation from 0.4.9: `len(
// req.output_ids) % stream_interval == 1`, the wheels of 0.4.9, 0.4.10.post2,
// 0.5.1.post1, 0.5.6.post2, 0.5.8 and 0.5.9), rather than at the multiples of
// the interval, which hold the first token until the interval's length
// (0.4.8.post1 and before: `% stream_interval == 0`). A finished request's
// output is sent in both.
func SGLangStreamsFirstToken(r Release) bool { return !r.Before(sglangFirstTokenSince) }

// sglangFirstTokenSince is the first release whose stream_output_generation
// sends the first token at once (SGLangStreamsFirstToken).
var sglangFirstTokenSince = Release{0, 4, 9}

// SGLangDeepSeekEagerLaunchUsPerLayer is a DeepSeek-V3 (MLA and MoE) layer's
// eager launch time in SGLang, µs (engine.sglang.eager_launch_us_per_layer):
// sgl-project/sglang pull request 12160 ("support prefill-cuda-graph based
// on cuda-graph-runner"), its benchmark log of a one-token prefill
// ("#new-token: 1"), "forward cost" 82.64 ms eager and 23.10 ms from a CUDA
// graph. The GPU's work of that forward is at most 23.10 ms, so the eager
// forward is the host's launch of its 61 layers: 82.64 / 61.
const SGLangDeepSeekEagerLaunchUsPerLayer = 82640.0 / 61

// sglangDeepSeekLayerArchitectures are the architectures (config.json
// "architectures") SGLang serves with DeepSeek's decoder layer
// (models/deepseek_v2.py: DeepseekV2ForCausalLM, and its subclasses
// DeepseekV3ForCausalLM and DeepseekV32ForCausalLM; GLM-5's
// GlmMoeDsaForCausalLM subclasses DeepseekV2ForCausalLM in 0.5.9).
var sglangDeepSeekLayerArchitectures = map[string]bool{
	"DeepseekV2ForCausalLM": true, "DeepseekV3ForCausalLM": true,
	"DeepseekV32ForCausalLM": true, "GlmMoeDsaForCausalLM": true,
}

// SGLangLlamaEagerLaunchUsPerLayer is a Llama (models/llama.py
// LlamaForCausalLM) layer's eager launch time in SGLang, µs
// (engine.sglang.eager_launch_us_per_layer): sgl-project/sglang pull request
// 1401 ("Support cuda graph in the triton attention backend"), its
// sglang.bench_latency logs of Meta-Llama-3-8B (32 layers), batch size 1,
// input 128, FlashInfer attention: "Decode. median latency" 0.00823 s with
// --disable-cuda-graph and 0.00735 s from a CUDA graph. The GPU's work of that
// one-token-per-request forward is at most 7.35 ms, so under
// perf.Breakdown.PassNs (max of kernels and launch) the eager forward is the
// host's launch of its 32 layers: 8.23 / 32. Its limits, for the reader: a
// decode pass, not an extend (the layer launches the same kernels; the
// extend's attention kernel differs), of the SGLang of 2024-09 (0.3.0), and
// because the eager forward is only 0.88 ms above the graph's the launch is
// an upper bound, not pinned as DeepSeek's is (82.64 against 23.10 ms).
const SGLangLlamaEagerLaunchUsPerLayer = 8230.0 / 32

// sglangLlamaLayerArchitectures are the architectures served with Llama's
// decoder layer whose eager forward is measured (SGLangLlamaEagerLaunchUsPerLayer).
var sglangLlamaLayerArchitectures = map[string]bool{"LlamaForCausalLM": true}

// SGLangEagerLaunchUsPerLayer is g's eager launch time of one decoder layer
// of a model of the given architecture, µs: engine.sglang's
// eager_launch_us_per_layer when given, else the measured value of the
// architecture's layer (SGLangDeepSeekEagerLaunchUsPerLayer for DeepSeek's
// layer, SGLangLlamaEagerLaunchUsPerLayer for Llama's), else 0 (no measured
// value: not modelled). Searched and not found, so 0: a measured eager
// against CUDA-graph forward of a short pass in SGLang's pull requests,
// issues and docs for Qwen3ForCausalLM, Qwen3MoeForCausalLM (pull request
// 11845 gives only a 7k-token TTFT, 310 against 289 ms, which the GPU's work
// dominates), Qwen3_5MoeForConditionalGeneration and Qwen3-Next's hybrid
// layer (pull requests 13081, 14502 and 17613: TTFTs of 1k to 4k-token
// prompts), GptOssForCausalLM; docs/advanced_features/piecewise_cuda_graph.md
// and cuda_graphs.md give no timings.
func SGLangEagerLaunchUsPerLayer(g *SGLang, architecture string) float64 {
	switch {
	case g.EagerLaunchUsPerLayer != nil:
		return *g.EagerLaunchUsPerLayer
	case sglangDeepSeekLayerArchitectures[architecture]:
		return SGLangDeepSeekEagerLaunchUsPerLayer
	case sglangLlamaLayerArchitectures[architecture]:
		return SGLangLlamaEagerLaunchUsPerLayer
	}
	return 0
}

// SGLangPiecewiseByDefault reports whether release r replays extend passes
// from piecewise CUDA graphs unless a rule turns them off: from 0.5.10
// (server_args.py disable_piecewise_cuda_graph = False, its
// _handle_piecewise_cuda_graph auto-disabling; model_runner.py
// forward_extend replays piecewise_cuda_graph_runner.py when can_run: the
// pass's tokens at most the largest captured size). Before, an extend
// pass runs eagerly unless --enable-piecewise-cuda-graph: the wheels of
// 0.5.6.post2 and 0.5.9 (enable_piecewise_cuda_graph = False); 0.5.1.post1
// has no piecewise graphs (no piecewise_cuda_graph_runner.py).
func SGLangPiecewiseByDefault(r Release) bool { return !r.Before(sglangPiecewiseSince) }

// sglangPiecewiseSince is the first release with piecewise CUDA graphs on
// by default (SGLangPiecewiseByDefault).
var sglangPiecewiseSince = Release{0, 5, 10}

// SGLangPiecewiseOff reports whether SGLang release r's
// _handle_piecewise_cuda_graph turns piecewise CUDA graphs off for a model
// of the given architecture: configs/model_config.py
// piecewise_cuda_graph_disabled_model_archs of that release, and the
// multimodal architectures (model_config.py multimodal_model_archs, with
// is_multimodal true: enable_multimodal left out, which turns it off only
// for Llama-4 among the simulator's architectures) that the simulator
// serves. The disabled list, in the wheels: DeepseekV32ForCausalLM,
// Qwen3NextForCausalLM, GlmMoeDsaForCausalLM, BailingMoeV2_5ForCausalLM and
// LLaDAModelLM in 0.5.10, 0.5.10.post1 and 0.5.11; DeepseekV4ForCausalLM
// added in 0.5.12; DeepseekV32ForCausalLM and GlmMoeDsaForCausalLM (the
// DSA models) removed in 0.5.13 (and 0.5.13.post1).
func SGLangPiecewiseOff(r Release, architecture string) bool {
	switch architecture {
	case "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM":
		return r.Before(sglangPiecewiseDSASince)
	case "DeepseekV4ForCausalLM":
		return true // first served in 0.5.12, in the disabled list from it
	}
	return sglangPiecewiseOffArchitectures[architecture]
}

// sglangPiecewiseDSASince is the first release that keeps piecewise CUDA
// graphs for the DSA architectures (SGLangPiecewiseOff).
var sglangPiecewiseDSASince = Release{0, 5, 13}

var sglangPiecewiseOffArchitectures = map[string]bool{
	// piecewise_cuda_graph_disabled_model_archs (0.5.10 to 0.5.13)
	"Qwen3NextForCausalLM": true, "BailingMoeV2_5ForCausalLM": true, "LLaDAModelLM": true,
	// multimodal_model_archs (0.5.10 to 0.5.13)
	"Qwen3_5ForConditionalGeneration": true, "Qwen3_5MoeForConditionalGeneration": true,
	"Qwen3VLForConditionalGeneration": true, "Qwen3VLMoeForConditionalGeneration": true,
	"KimiK25ForConditionalGeneration": true,
}

// SGLangPiecewiseWithSpeculative reports whether release r keeps piecewise
// CUDA graphs (the target model's extend passes) with speculative decoding:
// from 0.5.11, whose _handle_piecewise_cuda_graph drops 0.5.10's rule "2.
// Speculative decoding" (model_runner.py init_piecewise_cuda_graphs still
// skips the draft worker).
func SGLangPiecewiseWithSpeculative(r Release) bool { return !r.Before(sglangSpecV2DefaultSince) }

// SGLangSpecV2ByDefault reports whether release r runs EAGLE's spec v2
// worker, which keeps the overlap scheduler, unless the environment sets
// SGLANG_ENABLE_SPEC_V2 to false or --disable-overlap-schedule is given:
// from 0.5.11 (environ.py SGLANG_ENABLE_SPEC_V2 = EnvBool(True), False
// through 0.5.10; server_args.py _handle_speculative_decoding, in 0.5.13
// arg_groups/speculative_hook.py _handle_eagle_family).
func SGLangSpecV2ByDefault(r Release) bool { return !r.Before(sglangSpecV2DefaultSince) }

var sglangSpecV2DefaultSince = Release{0, 5, 11}

// SGLangPiecewiseOffForTRTLLMMoE reports whether release r turns piecewise
// CUDA graphs off when the MoE runner backend is flashinfer_trtllm or
// flashinfer_mxfp4 for a model other than GptOssForCausalLM (server_args.py
// _handle_moe_kernel_config, "bypassed topk is incompatible with
// torch.compile"): 0.5.10 to 0.5.12.post1; the rule is gone in 0.5.13.
// The rule runs after _handle_gpu_memory_settings, so the memory reserved
// for the graphs stays reserved.
func SGLangPiecewiseOffForTRTLLMMoE(r Release) bool {
	return !r.Before(sglangPiecewiseSince) && r.Before(sglangPiecewiseDSASince)
}

// engine.sglang.moe_a2a_backend and deepep_mode values (server_args.py
// --moe-a2a-backend, --deepep-mode).
const (
	SGLangA2ANone          = "none"
	SGLangA2ADeepEP        = "deepep"
	SGLangDeepEPAuto       = "auto"
	SGLangDeepEPNormal     = "normal"
	SGLangDeepEPLowLatency = "low_latency"
)

// DeepEP reports whether g dispatches the MoE tokens with DeepEP.
func (g *SGLang) DeepEP() bool { return g != nil && g.MoEA2ABackend == SGLangA2ADeepEP }

// engine.sglang.mamba_ssm_dtype values (server_args.py --mamba-ssm-dtype).
const (
	SGLangMambaFloat32 = "float32"
	SGLangMambaBF16    = "bfloat16"
)

// DefaultSGLangMambaFullMemoryRatio is --mamba-full-memory-ratio's default.
const DefaultSGLangMambaFullMemoryRatio = 0.9

// engine.sglang.speculative_algorithm values (server_args.py: NEXTN is run
// by the EAGLE worker, speculative/eagle_worker.py).
const (
	SGLangSpecEAGLE = "EAGLE"
	SGLangSpecNEXTN = "NEXTN"
	// DefaultSGLangSpeculativeMaxRunningRequests: server_args.py
	// _handle_speculative_decoding's max_running_requests with EAGLE when
	// none is given.
	DefaultSGLangSpeculativeMaxRunningRequests = 48
)

var sglangSpecAlgorithms = []string{SGLangSpecEAGLE, SGLangSpecNEXTN}

// Speculative reports whether g runs EAGLE speculative decoding.
func (g *SGLang) Speculative() bool { return g != nil && g.SpeculativeAlgorithm != "" }

// AcceptanceRates is the acceptance of each of the speculative_num_steps
// drafts of a validated, normalized block (0 beyond a shorter list).
func (g *SGLang) AcceptanceRates() []float64 {
	return acceptanceRates(g.SpeculativeNumSteps, g.SpeculativeAcceptanceRates, g.SpeculativeAcceptanceRate)
}

// BackendSGLang is engine.backend's value for SGLang.
const BackendSGLang = "sglang"

// engine.sglang.schedule_policy values (python/sglang/srt/managers/
// schedule_policy.py, CacheAwarePolicy and CacheAgnosticPolicy).
const (
	// SGLangPolicyFCFS: first come first served.
	SGLangPolicyFCFS = "fcfs"
	// SGLangPolicyLPM: longest prefix match first (fcfs while more than
	// 128 requests wait, or without the radix cache).
	SGLangPolicyLPM = "lpm"
	// SGLangPolicyLOF: longest output (max_new_tokens) first.
	SGLangPolicyLOF = "lof"
)

// SGLang's fixed defaults (ServerArgs).
const (
	DefaultSGLangMaxPrefillTokens         = 16384
	DefaultSGLangPageSize                 = 1
	DefaultSGLangSchedulePolicy           = SGLangPolicyFCFS
	DefaultSGLangScheduleConservativeness = 1.0
	// DefaultSGLangRelease is the SGLang release whose defaults and kernel
	// tables stand in when engine.backend_version is not given: the newest
	// release of the dev measurements (../shared/data/silicon/sglang_dev.csv).
	DefaultSGLangRelease = "0.5.9"
	// NewestSGLangRelease is the newest SGLang release whose defaults and
	// rules are read here (release by release from the wheels'
	// server_args.py, 0.5.10.post1 to 0.5.13.post1: docs/design.md, "The
	// SGLang engine"); a later release runs its rules, with a note. Kernel
	// tables are chosen apart from it (the nearest measured version).
	NewestSGLangRelease = "0.5.13"
	// SGLangNewestPartlyRead is the newest release whose wheel was read in
	// part: the rules that decide the simulated quantities, read in the
	// wheels of 0.5.14 to 0.5.23, apply by release; the rest of each
	// (docs/design.md, "The SGLang engine", says what was not read) is
	// NewestSGLangRelease's.
	SGLangNewestPartlyRead = "0.5.23"
	// MaxSGLangPageSize bounds --page-size (SGLang's MLA kernels use 64 and
	// 128).
	MaxSGLangPageSize = 256
)

var sglangPolicies = []string{SGLangPolicyFCFS, SGLangPolicyLPM, SGLangPolicyLOF}

// newestSGLangRead is SGLangNewestPartlyRead resolved.
var newestSGLangRead = Release{0, 5, 23}

// Releases at which SGLang's GPU-memory defaults changed.
var (
	// sglangReservedRuleSince: pull request 7054 ("Simplify the heuristics
	// for setting --mem-fraction-static", merged 2025-06-10): the reserved
	// memory by GPU memory bucket and TP × PP.
	sglangReservedRuleSince = Release{0, 4, 8}
	// sglangGeneralRuleSince: pull request 10975 ("Use more general
	// heuristics to set the default value of --mem-fraction-static",
	// merged 2025-09-27): the reserved memory from chunked_prefill_size and
	// cuda_graph_max_bs, themselves by GPU memory bucket.
	sglangGeneralRuleSince = Release{0, 5, 3}
	// sglangSmallGPURuleSince: the wheel of 0.5.10's
	// _handle_gpu_memory_settings has a bucket below 20 GiB (chunked 2048,
	// cuda_graph_max_bs 8) and gives 24 GPUs below 35 GiB at tp < 4, and
	// reserves 4 GiB, not 2, for EAGLE's draft model (the 0.5.9 wheel has
	// the same buckets and 2 GiB: the buckets are kept as they were for
	// 0.5.9 and before, whose reports stay as they were).
	sglangSmallGPURuleSince = Release{0, 5, 10}
	// sglangContextClampSince: 0.5.13's _handle_gpu_memory_settings caps
	// piecewise_cuda_graph_max_tokens at a given context_length, through
	// 0.5.16 (sglangContextClampUntil: gone in 0.5.17).
	sglangContextClampSince = Release{0, 5, 13}
	sglangContextClampUntil = Release{0, 5, 17}
	// sglangRoleReserveSince: 0.5.15's reserve by the server's role
	// (sglangRoleReserve).
	sglangRoleReserveSince = Release{0, 5, 15}
	// sglang32GiBRuleSince: 0.5.20's bucket of 20 to 35 GiB, chunked 4096
	// and cuda_graph_max_bs 48 (tp < 4) or 160 ("32GB Blackwell (RTX 5090)
	// can hold decode cuda graphs well past bs=24").
	sglang32GiBRuleSince = Release{0, 5, 20}
	// sglangGraphCapSince: 0.5.22 cuts a default decode max_bs to a given
	// max_running_requests.
	sglangGraphCapSince = Release{0, 5, 22}
	// sglangMLAGraph8KSince: 0.5.23's MLA prefill graphs capture up to
	// min(8192, chunked_prefill_size) tokens, not 2048.
	sglangMLAGraph8KSince = Release{0, 5, 23}
	// sglangBreakableDeepEPSince: 0.5.19 reserves 1 GiB more for breakable
	// prefill graphs with DeepEP ("Prefill-BCG DeepEP delta").
	sglangBreakableDeepEPSince = Release{0, 5, 19}
)

// SGLangPiecewiseMemory is what release 0.5.10 and later's
// _handle_gpu_memory_settings reads of the piecewise CUDA graphs: On, they
// are still on when it runs (after _handle_piecewise_cuda_graph's rules;
// the MoE runner rule, SGLangPiecewiseOffForTRTLLMMoE, comes after it and
// leaves the memory reserved); MLA, the model runs the MLA attention
// backend (use_mla_backend); Llama2, the model path names a Llama-2
// ("llama-2" in it); ContextLength, --context-length as given (0: none).
//
// From 0.5.15 it also reads the server's role, Mode ("aggregated",
// "prefill", "decode": --disaggregation-mode), and Breakable, whether the
// prefill graphs on are breakable ones (SGLangPrefillGraphs).
type SGLangPiecewiseMemory struct {
	On, MLA, Llama2 bool
	ContextLength   int
	Mode            string
	Breakable       bool
}

// SGLangGPUDefaults are the server arguments SGLang derives from the GPU.
type SGLangGPUDefaults struct {
	ChunkedPrefillSize int
	CUDAGraphMaxBS     int
	MemFractionStatic  float64
	// PiecewiseMaxTokens is piecewise_cuda_graph_max_tokens,
	// PiecewiseSizes the count of piecewise_cuda_graph_tokens (its capture
	// sizes) and PiecewiseLargest the largest of them, the most tokens a
	// replayed extend pass holds (piecewise_cuda_graph_runner.py:
	// max_num_tokens = max(capture_num_tokens), can_run), when
	// SGLangPiecewiseMemory.On (0 otherwise).
	PiecewiseMaxTokens, PiecewiseSizes, PiecewiseLargest int
	// Rule names the release's rule (for the report).
	Rule string
}

// SGLangDefaults is what SGLang release r sets for a server of tp × pp GPUs
// of memBytes each when the launch leaves chunked_prefill_size,
// cuda_graph_max_bs or mem_fraction_static out (given values win; a given
// chunked_prefill_size and cuda_graph_max_bs enter the later rule's reserved
// memory). The rules, in MiB of GPU memory g (server_args.py,
// ServerArgs.__post_init__ / _handle_gpu_memory_settings):
//
//	from 0.5.3: chunked 2048 (g < 35 GiB), 4096 (< 60), 8192 (< 160), 16384;
//	            cuda_graph_max_bs (tp < 4 / ≥ 4) 8/80 (< 35 GiB), 32/160 (< 60),
//	            256/512 (< 160), 512;
//	            reserved = 512 + 1.5 · max(chunked, 2048) + 2 · cuda_graph_max_bs
//	                       + tp·pp/8 · 1024, at least 10 GiB when g > 60 GiB
//	from 0.4.8: chunked 2048 (< 35 GiB), 8192 (< 160), 16384; reserved
//	            (2.8 + tp·pp/10) GiB (< 35), (9.5 + tp·pp/2) GiB (< 90),
//	            (12 + tp·pp/2) GiB (< 160), 32 GiB
//	then       mem_fraction_static = round((g − reserved) / g, 3)
//	before:    mem_fraction_static 0.88, 0.87, 0.85, 0.81, 0.79 at tp ≥ 1, 2,
//	           4, 8, 16; chunked 2048 below 25 GB, else 8192
//
// With DP attention over dp > 1 ranks (--enable-dp-attention --dp-size dp)
// the later rule reserves 3 · cuda_graph_max_bs · dp MiB more, and 1.5 ·
// cuda_graph_max_bs · dp more above a cuda_graph_max_bs of 300 (server_args.py:
// "DP attention needs more padding"). tp is SGLang's --tp-size, every GPU of
// the server. EAGLE's draft model adds 2 GiB to the later rule's reserve,
// after the floor (4 GiB from 0.5.10: SGLangDefaultsPiecewise; none from
// 0.5.14, SGLangDraftWeightsInKV). From 0.5.15 the reserve follows the
// server's role (sglangRoleReserve).
func SGLangDefaults(r Release, memBytes int64, tp, pp, dp int, given *SGLang) SGLangGPUDefaults {
	return SGLangDefaultsPiecewise(r, memBytes, tp, pp, dp, given, SGLangPiecewiseMemory{})
}

// SGLangDefaultsPiecewise is SGLangDefaults with the piecewise CUDA graphs
// of pcg (release 0.5.10 and later; SGLangPiecewiseByDefault). From 0.5.10
// the buckets below 35 GiB are chunked 2048 with cuda_graph_max_bs 8 (g <
// 20 GiB) and 24/80 (tp < 4 / ≥ 4, g < 35 GiB), and, when pcg.On,
//
//	piecewise_cuda_graph_max_tokens = 2048 (MLA) or chunked_prefill_size,
//	    at most max_total_tokens when given, 4096 for a Llama-2, and (from
//	    0.5.13) context_length when given
//	piecewise_cuda_graph_tokens = 4..32 step 4, 48..256 step 16, 288..512
//	    step 32, 576..1024 step 64, 1280..4096 step 256, 4608.. step 512,
//	    those at most the max (_generate_piecewise_cuda_graph_tokens)
//	reserved += 1.5 GiB (MLA) or 8 MiB per capture size, before the
//	    10 GiB floor
//
// and EAGLE's draft model reserves 4 GiB (2 GiB through 0.5.9), after it,
// through 0.5.13: from 0.5.14 nothing (SGLangDraftWeightsInKV).
func SGLangDefaultsPiecewise(r Release, memBytes int64, tp, pp, dp int, given *SGLang, pcg SGLangPiecewiseMemory) SGLangGPUDefaults {
	g := float64(memBytes) / (1 << 20) // MiB, as SGLang's get_nvgpu_memory_capacity
	const gib = 1024.0
	par := float64(tp * pp)
	var d SGLangGPUDefaults
	switch {
	case !r.Before(sglangGeneralRuleSince):
		d.Rule = "sglang>=0.5.3 (pull request 10975)"
		if !r.Before(sglangSmallGPURuleSince) {
			d.Rule = "sglang>=0.5.10 (pull request 10975, piecewise CUDA graphs)"
		}
		if !r.Before(sglangRoleReserveSince) {
			d.Rule = "sglang>=0.5.15 (reserve by server role, breakable prefill CUDA graphs)"
		}
		small, large := 0, 0
		switch {
		case g < 20*gib && !r.Before(sglangSmallGPURuleSince):
			d.ChunkedPrefillSize, small, large = 2048, 8, 8
		case g < 35*gib && !r.Before(sglang32GiBRuleSince):
			d.ChunkedPrefillSize, small, large = 4096, 48, 160
		case g < 35*gib && !r.Before(sglangSmallGPURuleSince):
			d.ChunkedPrefillSize, small, large = 2048, 24, 80
		case g < 35*gib:
			d.ChunkedPrefillSize, small, large = 2048, 8, 80
		case g < 60*gib:
			d.ChunkedPrefillSize, small, large = 4096, 32, 160
		case g < 160*gib:
			d.ChunkedPrefillSize, small, large = 8192, 256, 512
		default:
			d.ChunkedPrefillSize, small, large = 16384, 512, 512
		}
		d.CUDAGraphMaxBS = small
		if tp >= 4 {
			d.CUDAGraphMaxBS = large
		}
	case !r.Before(sglangReservedRuleSince):
		d.Rule = "sglang>=0.4.8 (pull request 7054)"
		d.CUDAGraphMaxBS = 160
		switch {
		case g < 35*gib:
			d.ChunkedPrefillSize = 2048
			if tp < 4 {
				d.CUDAGraphMaxBS = 8
			} else {
				d.CUDAGraphMaxBS = 80
			}
		case g < 160*gib:
			d.ChunkedPrefillSize = 8192
		default:
			d.ChunkedPrefillSize = 16384
		}
	default:
		d.Rule = "sglang<0.4.8 (by TP)"
		d.ChunkedPrefillSize, d.CUDAGraphMaxBS = 8192, 160
		if g < 25e9/(1<<20) {
			d.ChunkedPrefillSize = 2048
		}
	}
	if given != nil && given.ChunkedPrefillSize != 0 {
		d.ChunkedPrefillSize = given.ChunkedPrefillSize
	}
	if given != nil && given.CUDAGraphMaxBS != 0 {
		d.CUDAGraphMaxBS = given.CUDAGraphMaxBS
	} else if given != nil && given.MaxRunningRequests > 0 && !r.Before(sglangGraphCapSince) {
		// 0.5.22: a default decode max_bs above a given
		// max_running_requests is cut to it
		d.CUDAGraphMaxBS = min(d.CUDAGraphMaxBS, given.MaxRunningRequests)
	}
	piecewise := pcg.On && !r.Before(sglangPiecewiseSince)
	if piecewise {
		d.PiecewiseMaxTokens, d.PiecewiseSizes, d.PiecewiseLargest = sglangPiecewiseTokens(r, d.ChunkedPrefillSize, given, pcg)
	}
	if given != nil && given.MemFractionStatic != 0 {
		d.MemFractionStatic = given.MemFractionStatic
		return d
	}
	var reserved float64
	switch {
	case !r.Before(sglangRoleReserveSince):
		reserved = sglangRoleReserve(r, g, par, dp, d, given, pcg, piecewise)
	case !r.Before(sglangGeneralRuleSince):
		prefill := float64(d.ChunkedPrefillSize)
		if d.ChunkedPrefillSize < 0 {
			prefill = DefaultSGLangMaxPrefillTokens
			if given != nil && given.MaxPrefillTokens > 0 {
				prefill = float64(given.MaxPrefillTokens)
			}
		}
		reserved = 512 + math.Max(prefill, 2048)*1.5 + float64(d.CUDAGraphMaxBS)*2 + par/8*1024
		if dp > 1 {
			bs := float64(d.CUDAGraphMaxBS)
			reserved += bs * float64(dp) * 3
			if bs > 300 {
				reserved += bs * float64(dp) * 1.5
			}
		}
		if piecewise {
			if pcg.MLA {
				reserved += 1.5 * gib // "the memory overhead is much higher than expected with fa3"
			} else {
				reserved += float64(d.PiecewiseSizes) * 8
			}
		}
		if g > 60*gib {
			reserved = math.Max(reserved, 10*gib)
		}
		if given.Speculative() && r.Before(sglangDraftInKVSince) {
			if r.Before(sglangSmallGPURuleSince) {
				reserved += 2 * gib // "eagle draft models and cuda graphs"
			} else {
				reserved += 4 * gib
			}
		}
	case !r.Before(sglangReservedRuleSince):
		switch {
		case g < 35*gib:
			reserved = (2.8 + par/10) * gib
		case g < 90*gib:
			reserved = (9.5 + par/2) * gib
		case g < 160*gib:
			reserved = (12 + par/2) * gib
		default:
			reserved = 32 * gib
		}
	default:
		switch {
		case tp >= 16:
			d.MemFractionStatic = 0.79
		case tp >= 8:
			d.MemFractionStatic = 0.81
		case tp >= 4:
			d.MemFractionStatic = 0.85
		case tp >= 2:
			d.MemFractionStatic = 0.87
		default:
			d.MemFractionStatic = 0.88
		}
		return d
	}
	d.MemFractionStatic = math.Round((g-reserved)/g*1000) / 1000
	return d
}

// sglangPiecewiseTokens is piecewise_cuda_graph_max_tokens, the count of its
// capture sizes and the largest of them (SGLangDefaultsPiecewise) for
// chunked_prefill_size chunk.
func sglangPiecewiseTokens(r Release, chunk int, given *SGLang, pcg SGLangPiecewiseMemory) (maxTokens, sizes, largest int) {
	n := chunk
	if pcg.MLA {
		n = 2048
		if !r.Before(sglangMLAGraph8KSince) {
			n = min(8192, chunk)
		}
	}
	if given != nil && given.MaxTotalTokens > 0 {
		n = min(n, given.MaxTotalTokens)
	}
	if pcg.Llama2 {
		n = min(n, 4096)
	}
	if pcg.ContextLength > 0 && !r.Before(sglangContextClampSince) && r.Before(sglangContextClampUntil) {
		n = min(n, pcg.ContextLength)
	}
	for _, run := range [][3]int{{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}, {4608, n, 512}} {
		for s := run[0]; s <= min(run[1], n); s += run[2] {
			sizes, largest = sizes+1, s
		}
	}
	return n, sizes, largest
}

// SGLangRelease is the SGLang release a spec runs: engine.backend_version
// resolved, else DefaultSGLangRelease. Validate has checked the version.
func (e *Engine) SGLangRelease() Release {
	v := e.BackendVersion
	if v == "" {
		v = DefaultSGLangRelease
	}
	r, _, _ := ResolveEngineVersion(v, BackendSGLang)
	return r
}

// SGLangOf is the SGLang server arguments of pool name ("aggregated",
// "prefill" or "decode"): the pool's own block, else engine.sglang.
func (e *Engine) SGLangOf(name string) *SGLang {
	for _, pl := range e.Workers.pools() {
		if strings.HasSuffix(pl.path, "."+name) && pl.pool.SGLang != nil {
			return pl.pool.SGLang
		}
	}
	return e.SGLang
}

// sglangDefaults fills engine.sglang's fixed defaults and, for source aic, the
// kernel tables of the release (engine.perf.backend_version) when not given;
// then a pool's own block takes engine.sglang's value for each field it
// leaves out.
func sglangDefaults(s *Spec, present func(string) bool) {
	e := &s.Engine
	if e.SGLang == nil {
		e.SGLang = &SGLang{}
	}
	sglangFixedDefaults(e.SGLang, "engine.sglang.", present)
	if t := e.Tokenization; t != nil && !present("engine.tokenization.shared_event_loop") {
		// the TokenizerManager tokenizes each request and hands every
		// output to its request on the HTTP server's one asyncio loop
		// (managers/tokenizer_manager.py: _tokenize_one_request, and
		// handle_loop's _handle_batch_output), in every release
		on := true
		t.SharedEventLoop = &on
	}
	if a, ok := e.Perf.Source.(AICPerf); ok && !present("engine.perf.backend_version") {
		a.BackendVersion = e.SGLangRelease().String()
		e.Perf.Source = a
	}
	for _, pl := range e.Workers.pools() {
		if g := pl.pool.SGLang; g != nil {
			prefix := pl.path + ".sglang."
			inheritSGLang(g, e.SGLang, prefix, present)
			sglangSpecDefaults(g, func(k string) bool { return present(prefix+k) || present("engine.sglang."+k) })
		}
	}
}

// inheritSGLang sets every field of pool block g that is not given (no
// present(prefix + its json name)) to engine.sglang's value.
func inheritSGLang(g, from *SGLang, prefix string, present func(string) bool) {
	dst, src := reflect.ValueOf(g).Elem(), reflect.ValueOf(from).Elem()
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if !present(prefix + name) {
			dst.Field(i).Set(src.Field(i))
		}
	}
}

// sglangFixedDefaults fills the fixed defaults of block g (at prefix).
func sglangFixedDefaults(g *SGLang, p string, present func(string) bool) {
	if !present(p + "max_prefill_tokens") {
		g.MaxPrefillTokens = DefaultSGLangMaxPrefillTokens
	}
	if !present(p + "page_size") {
		g.PageSize = DefaultSGLangPageSize
	}
	if g.SchedulePolicy == "" {
		g.SchedulePolicy = DefaultSGLangSchedulePolicy
	}
	if !present(p + "schedule_conservativeness") {
		g.ScheduleConservativeness = DefaultSGLangScheduleConservativeness
	}
	sglangSpecDefaults(g, func(k string) bool { return present(p + k) })
}

// sglangSpecDefaults fills EAGLE's defaults of block g: topk 1, its draft
// tokens speculative_num_steps + 1 (server_args.py), the simulation's
// acceptance of each draft; given(k) reports whether field k was given.
func sglangSpecDefaults(g *SGLang, given func(string) bool) {
	if !g.Speculative() {
		return
	}
	if g.SpeculativeEagleTopk == 0 {
		g.SpeculativeEagleTopk = 1
	}
	if g.SpeculativeNumDraftTokens == 0 && g.SpeculativeEagleTopk == 1 {
		g.SpeculativeNumDraftTokens = g.SpeculativeNumSteps + 1
	}
	if !given("speculative_acceptance_rate") && !given("speculative_acceptance_rates") {
		// a pool's block inherits engine.sglang's normalized list: the
		// default follows the pool's own speculative_num_steps
		g.SpeculativeAcceptanceRate = nil
		g.SpeculativeAcceptanceRates = defaultAcceptance(g.SpeculativeNumSteps, nil, nil)
	}
}

// validateSGLang checks engine.sglang, and that engine.scheduler (vLLM's) is
// not given with it.
func (e *Engine) validateSGLang() error {
	if e.Backend != BackendSGLang {
		if e.SGLang != nil {
			return errorf("engine.sglang", "holds SGLang's server arguments: set engine.backend: sglang (it is %s)", e.Backend)
		}
		for _, pl := range e.Workers.pools() {
			if pl.pool.SGLang != nil {
				return errorf(pl.path+".sglang", "holds SGLang's server arguments: set engine.backend: sglang (it is %s)", e.Backend)
			}
		}
		return nil
	}
	if path := e.Workers.kvRouterPool(); path != "" {
		// Dynamo's KV router reads SGLang's KV events (radix_cache.py's
		// BlockStored per page, --kv-events-config), which the radix tree
		// here does not send yet.
		return errorf(path+".placement", "%s is not modelled with engine.backend sglang (SGLang's KV events are not): use %s or %s",
			PlacementKVRouter, PlacementLeastOutstanding, PlacementPrefixAffinity)
	}
	if f := nonZeroField(e.Scheduler); f != "" {
		return errorf("engine.scheduler."+f, "engine.scheduler holds vLLM's engine arguments; with engine.backend sglang give SGLang's server arguments in engine.sglang (%s)",
			sglangNameOf(f))
	}
	for _, pl := range e.Workers.pools() {
		if pl.pool.All2AllBackend != "" {
			return errorf(pl.path+".all2all_backend", "is vLLM's --all2all-backend; SGLang's is engine.sglang.moe_a2a_backend (%s) with deepep_mode (%s, %s or %s)",
				SGLangA2ADeepEP, SGLangDeepEPAuto, SGLangDeepEPNormal, SGLangDeepEPLowLatency)
		}
	}
	if e.SGLang == nil {
		return nil // Normalize fills it
	}
	if err := e.SGLang.validate("engine.sglang."); err != nil {
		return err
	}
	for _, pl := range e.Workers.pools() {
		if g := pl.pool.SGLang; g != nil {
			if err := g.validate(pl.path + ".sglang."); err != nil {
				return err
			}
		}
	}
	return nil
}

// validate checks one block of SGLang server arguments at path prefix p.
func (g *SGLang) validate(p string) error {
	if err := firstErr(checkIntOrUnset(p+"max_running_requests", "SGLang.max_running_requests", g.MaxRunningRequests),
		checkInt(p+"max_prefill_tokens", "SGLang.max_prefill_tokens", g.MaxPrefillTokens),
		checkIntOrUnset(p+"max_total_tokens", "SGLang.max_total_tokens", g.MaxTotalTokens),
		checkInt(p+"page_size", "SGLang.page_size", g.PageSize),
		checkIntOrUnset(p+"context_length", "SGLang.context_length", g.ContextLength),
		checkIntOrUnset(p+"cuda_graph_max_bs", "SGLang.cuda_graph_max_bs", g.CUDAGraphMaxBS),
		checkIntOrUnset(p+"ep_size", "SGLang.ep_size", g.EPSize),
		checkFloat(p+"schedule_conservativeness", "SGLang.schedule_conservativeness", g.ScheduleConservativeness),
		checkFloatPtr(p+"eager_launch_us_per_layer", "SGLang.eager_launch_us_per_layer", g.EagerLaunchUsPerLayer),
		checkIntOrUnset(p+"stream_interval", "SGLang.stream_interval", g.StreamInterval)); err != nil {
		return err
	}
	if c := g.ChunkedPrefillSize; c != 0 && c != -1 {
		if err := checkInt(p+"chunked_prefill_size", "SGLang.chunked_prefill_size", c); err != nil {
			return err
		}
		if c%g.PageSize != 0 {
			// server_args.py: assert chunked_prefill_size % page_size == 0
			return errorf(p+"chunked_prefill_size", "must be a multiple of page_size (%d), got %d", g.PageSize, c)
		}
	}
	if g.MemFractionStatic != 0 {
		if err := checkFloat(p+"mem_fraction_static", "SGLang.mem_fraction_static", g.MemFractionStatic); err != nil {
			return err
		}
	}
	if err := checkIntOrUnset(p+"max_mamba_cache_size", "SGLang.max_mamba_cache_size", g.MaxMambaCacheSize); err != nil {
		return err
	}
	if g.MambaFullMemoryRatio != 0 {
		if err := checkFloat(p+"mamba_full_memory_ratio", "SGLang.mamba_full_memory_ratio", g.MambaFullMemoryRatio); err != nil {
			return err
		}
	}
	if g.MambaSSMDtype != "" {
		if err := checkEnum(p+"mamba_ssm_dtype", "SGLang.mamba_ssm_dtype", g.MambaSSMDtype); err != nil {
			return err
		}
	}
	if err := checkEnum(p+"schedule_policy", "SGLang.schedule_policy", g.SchedulePolicy); err != nil {
		return err
	}
	for _, f := range [][2]string{{"moe_a2a_backend", g.MoEA2ABackend}, {"deepep_mode", g.DeepEPMode}} {
		if f[1] != "" {
			if err := checkEnum(p+f[0], "SGLang."+f[0], f[1]); err != nil {
				return err
			}
		}
	}
	if g.DeepEPMode != "" && !g.DeepEP() {
		return errorf(p+"deepep_mode", "belongs to DeepEP: give moe_a2a_backend %s", SGLangA2ADeepEP)
	}
	return g.validateSpeculative(p)
}

// validateSpeculative checks the EAGLE arguments of block g (at prefix p).
func (g *SGLang) validateSpeculative(p string) error {
	if !g.Speculative() {
		for _, f := range []struct {
			key string
			set bool
		}{{"speculative_num_steps", g.SpeculativeNumSteps != 0}, {"speculative_eagle_topk", g.SpeculativeEagleTopk != 0},
			{"speculative_num_draft_tokens", g.SpeculativeNumDraftTokens != 0}, {"speculative_acceptance_rate", g.SpeculativeAcceptanceRate != nil},
			{"speculative_acceptance_rates", g.SpeculativeAcceptanceRates != nil},
			{"enable_spec_v2", g.EnableSpecV2}} {
			if f.set {
				return errorf(p+f.key, "belongs to speculative decoding: give speculative_algorithm (%s)", strings.Join(sglangSpecAlgorithms, " or "))
			}
		}
		return nil
	}
	if err := checkEnum(p+"speculative_algorithm", "SGLang.speculative_algorithm", g.SpeculativeAlgorithm); err != nil {
		return err
	}
	if g.SpeculativeNumSteps == 0 {
		return errorf(p+"speculative_num_steps", "is required with speculative_algorithm %s (SGLang's automatic choice by model is not modelled)", g.SpeculativeAlgorithm)
	}
	if err := firstErr(checkInt(p+"speculative_num_steps", "SGLang.speculative_num_steps", g.SpeculativeNumSteps),
		validateAcceptance(p+"speculative_", "SGLang.speculative_acceptance_rate", "speculative_num_steps", g.SpeculativeNumSteps,
			g.SpeculativeAcceptanceRates, g.SpeculativeAcceptanceRate)); err != nil {
		return err
	}
	if g.SpeculativeEagleTopk != 1 {
		return errorf(p+"speculative_eagle_topk", "%d is not modelled: only 1 (a chain of draft tokens; EAGLE's token tree is not)", g.SpeculativeEagleTopk)
	}
	if g.SpeculativeNumDraftTokens != g.SpeculativeNumSteps+1 {
		return errorf(p+"speculative_num_draft_tokens", "must be speculative_num_steps + 1 (%d) with speculative_eagle_topk 1, got %d",
			g.SpeculativeNumSteps+1, g.SpeculativeNumDraftTokens)
	}
	return nil
}

// refuseGivenZeros refuses a 0 given for a field of engine.sglang, or of a
// pool's sglang block, whose 0 means "left out" (SGLang's derived default),
// where it is still told from one left out. g is nil without engine.sglang.
func (e *Engine) refuseSGLangZeros(seen map[string]bool) error {
	if err := e.SGLang.refuseGivenZeros(seen, "engine.sglang."); err != nil {
		return err
	}
	for _, pl := range e.Workers.pools() {
		if err := pl.pool.SGLang.refuseGivenZeros(seen, pl.path+".sglang."); err != nil {
			return err
		}
	}
	return nil
}

func (g *SGLang) refuseGivenZeros(seen map[string]bool, p string) error {
	if g == nil {
		return nil
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"max_running_requests", float64(g.MaxRunningRequests)}, {"chunked_prefill_size", float64(g.ChunkedPrefillSize)},
		{"max_total_tokens", float64(g.MaxTotalTokens)}, {"mem_fraction_static", g.MemFractionStatic},
		{"context_length", float64(g.ContextLength)}, {"cuda_graph_max_bs", float64(g.CUDAGraphMaxBS)},
		{"max_mamba_cache_size", float64(g.MaxMambaCacheSize)}, {"mamba_full_memory_ratio", g.MambaFullMemoryRatio},
		{"stream_interval", float64(g.StreamInterval)}, {"ep_size", float64(g.EPSize)}} {
		if seen[p+f.key] && f.v == 0 {
			if f.key == "mem_fraction_static" || f.key == "mamba_full_memory_ratio" {
				return checkFloat(p+f.key, "SGLang."+f.key, 0)
			}
			return checkInt(p+f.key, "SGLang."+f.key, 0)
		}
	}
	return nil
}

// sglangNameOf says where a vLLM scheduler setting goes with SGLang.
func sglangNameOf(vllmKey string) string {
	switch vllmKey {
	case "max_num_seqs":
		return "max_running_requests"
	case "max_num_batched_tokens":
		return "chunked_prefill_size, max_prefill_tokens"
	case "block_size":
		return "page_size"
	case "enable_prefix_caching":
		return "disable_radix_cache"
	case "max_model_len":
		return "context_length"
	case "num_gpu_blocks":
		return "max_total_tokens, in tokens"
	case "gpu_memory_utilization":
		return "mem_fraction_static"
	case "async_scheduling":
		return "disable_overlap_schedule"
	case "speculative_config":
		return "speculative_algorithm, speculative_num_steps"
	}
	return "see docs/config.md"
}

// kvRouterPool returns the path of the first pool placed by kv_router ("":
// none).
func (w *Workers) kvRouterPool() string {
	if a := w.Aggregated; a != nil && a.Placement == PlacementKVRouter {
		return "engine.workers.aggregated"
	}
	if d := w.Disaggregated; d != nil {
		if d.Prefill.Placement == PlacementKVRouter {
			return "engine.workers.disaggregated.prefill"
		}
		if d.Decode.Placement == PlacementKVRouter {
			return "engine.workers.disaggregated.decode"
		}
	}
	return ""
}

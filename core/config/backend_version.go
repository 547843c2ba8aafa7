package config

import (
	"fmt"
	"strconv"
	"strings"
)

// engine.backend_version: the serving engine's version, from which the
// defaults of that release follow (VLLMDefaults) and the kernel tables of
// engine.perf (source aic) are chosen when engine.perf.backend_version is not
// given. Unset: the defaults of defaults.go, as before the field existed.

// NewestVLLMRelease is the newest vLLM release the defaults table knows:
// every rule VLLMDefaults names was read in the wheels of 0.25.0 to 0.34.0
// against 0.24.0's (and the CUDA-graph rules in those of 0.12.0 to 0.23.0).
// A nightly build resolves to it. The kernel tables are another choice:
// engine.perf.backend_version (aic) reads the nearest release the database
// holds, and without a version the newest measured, DefaultAICBackendVersion.
const NewestVLLMRelease = "0.34.0"

// Release is a resolved MAJOR.MINOR.PATCH release.
type Release struct{ Major, Minor, Patch int }

// String is "MAJOR.MINOR.PATCH".
func (r Release) String() string { return fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch) }

// Before reports whether r is an earlier release than o.
func (r Release) Before(o Release) bool {
	if r.Major != o.Major {
		return r.Major < o.Major
	}
	if r.Minor != o.Minor {
		return r.Minor < o.Minor
	}
	return r.Patch < o.Patch
}

// ResolveBackendVersion resolves a version as engines and images name it to
// the release whose code it carries, with a note when the two differ:
//
//	0.15.1, v0.15.1, 0.15           the release (a missing patch is 0)
//	0.8.1.post2, 1.3.0rc5,          the release MAJOR.MINOR.PATCH: a post
//	0.11.1rc2.dev143+g5b8c30d       release rebuilds it, a release candidate
//	                                is cut from its release branch (vLLM tags
//	                                vX.Y.ZrcN on releases/vX.Y.Z), and a dev
//	                                wheel's version names the release it
//	                                builds toward
//	nightly, nightly-5b8c30d…,      the newest release this table knows
//	latest, main                    (NewestVLLMRelease): a build from main
//	                                follows the last release
//
// Anything else (no MAJOR.MINOR numbers and no nightly name) is an error.
// The version is vLLM's; ResolveEngineVersion resolves another engine's.
func ResolveBackendVersion(v string) (rel Release, note string, err error) {
	return ResolveEngineVersion(v, BackendVLLM)
}

// NewestRelease is the newest release of backend's engine known here (its
// defaults table and kernel tables): vLLM's NewestVLLMRelease, SGLang's
// NewestSGLangRelease, TensorRT-LLM's DefaultTRTLLMRelease.
func NewestRelease(backend string) string {
	switch backend {
	case BackendSGLang:
		return NewestSGLangRelease
	case BackendTRTLLM:
		return DefaultTRTLLMRelease
	}
	return NewestVLLMRelease
}

// engineNames names each backend's engine in the notes.
var engineNames = map[string]string{BackendVLLM: "vLLM", BackendSGLang: "SGLang", BackendTRTLLM: "TensorRT-LLM"}

// ResolveEngineVersion is ResolveBackendVersion for backend's engine: a
// nightly build resolves to that engine's newest release known
// (NewestRelease), and a release after it is noted: its rules are not
// tabulated, the newest's stand in.
func ResolveEngineVersion(v, backend string) (rel Release, note string, err error) {
	s := strings.TrimSpace(v)
	low := strings.ToLower(s)
	newest, _, _ := parseRelease(NewestRelease(backend))
	for _, name := range []string{"nightly", "latest", "main"} {
		if low == name || strings.HasPrefix(low, name+"-") || strings.HasPrefix(low, name+"_") {
			of := ""
			if backend == BackendSGLang || backend == BackendTRTLLM {
				of = engineNames[backend] + " "
			}
			return newest, fmt.Sprintf("%s is a build from main: the newest %srelease known, %s", quote(s), of, newest), nil
		}
	}
	rel, note, err = parseRelease(s)
	if err == nil && newest.Before(rel) {
		later := fmt.Sprintf("%s %s is newer than the newest release known here (%s): that release's rules stand in", engineNames[backend], rel, newest)
		if backend == BackendSGLang && !newestSGLangRead.Before(rel) {
			// read in part: SGLangNewestPartlyRead
			later = fmt.Sprintf("SGLang %s is newer than the newest release whose rules are all read here (%s): the rules read in its wheel apply, %s's stand in for the rest (docs/design.md, \"The SGLang engine\")",
				rel, newest, newest)
		}
		if note != "" {
			note += "; " + later
		} else {
			note = later
		}
	}
	return rel, note, err
}

// parseRelease reads MAJOR.MINOR[.PATCH] with an optional suffix (ResolveBackendVersion).
func parseRelease(s string) (rel Release, note string, err error) {
	low := strings.ToLower(s)
	num := strings.TrimPrefix(low, "v")
	var parts [3]int
	i, n := 0, 0
	for n < 3 {
		j := i
		for j < len(num) && num[j] >= '0' && num[j] <= '9' {
			j++
		}
		if j == i {
			break
		}
		x, perr := strconv.Atoi(num[i:j])
		if perr != nil {
			return Release{}, "", fmt.Errorf("%s: %w", quote(s), perr)
		}
		parts[n], n, i = x, n+1, j
		if i < len(num) && num[i] == '.' && n < 3 && i+1 < len(num) && num[i+1] >= '0' && num[i+1] <= '9' {
			i++
			continue
		}
		break
	}
	if n < 2 {
		return Release{}, "", fmt.Errorf("%s is not a version (want MAJOR.MINOR[.PATCH] with an optional suffix such as rc1 or .post2, or nightly)", quote(s))
	}
	rel = Release{parts[0], parts[1], parts[2]}
	switch {
	case strings.HasPrefix(num[i:], "+"): // PEP 440's local label: pip's 0.15.1+cu128
		note = fmt.Sprintf("%s is release %s (%s is a local build label)", quote(s), rel, s[len(s)-len(num[i:]):])
	case num[i:] != "":
		note = fmt.Sprintf("%s resolves to release %s (a release candidate, post or dev build carries that release's code)", quote(s), rel)
	case s != rel.String():
		note = fmt.Sprintf("%s is release %s", quote(s), rel)
	}
	return rel, note, nil
}

// VersionDefaults are the engine defaults a release sets that the simulation
// prices, and the notes on what it does not model.
type VersionDefaults struct {
	Release Release
	// AsyncScheduling: vLLM's scheduler runs one step ahead by default from
	// 0.14.0 (vllm-project/vllm pull request 27614, "[Core] Enable async
	// scheduling by default"; vllm/config/vllm.py resolves
	// scheduler_config.async_scheduling None to True unless pipeline
	// parallelism, a speculative method other than EAGLE/MTP, a pooling model
	// or an executor without support forbids it — none of which the
	// simulation runs).
	AsyncScheduling bool
	// EnablePrefixCaching: on by default in the V1 engine, the default
	// engine from 0.8.0 (VLLM_USE_V1=1 by default, vLLM 0.8.0 release notes);
	// the V0 engine before it kept automatic prefix caching off by default.
	EnablePrefixCaching bool
	// SharedEventLoop: the API server's input processing and output handling
	// share one asyncio event loop (Tokenization.SharedEventLoop) in the V1
	// engine's front end, the default from 0.8.0 (AsyncLLM, whose
	// output_handler task runs in the API server's loop; V0's front end
	// handed requests to the engine process over ZMQ, MQLLMEngine, and is
	// not modelled).
	SharedEventLoop bool
	// APIServerPerRank: a data-parallel server runs one API server (one
	// event loop) per data-parallel rank by default from 0.15.0 (vLLM pull
	// request 32525, "Default api_server_count to dp_size if not
	// specified"); before it --api-server-count defaulted to 1, one loop for
	// every rank (Pool.APIServerCount).
	APIServerPerRank bool
	// HugeGPUBatchRule: from 0.28.0 a GPU of at least 160 GiB gets
	// max_num_batched_tokens 16,384 for `vllm serve` (SchedulerDefaultsAt;
	// get_batch_defaults in 0.28.0's vllm/engine/arg_utils.py; 0.27.1 gave
	// it 8,192).
	HugeGPUBatchRule bool
	// BlackwellCUDAGraphs: from 0.28.0 the largest default CUDA-graph
	// capture size is 1,024 tokens on a GPU of compute capability 10.x (B200,
	// B300, GB200), 512 elsewhere (VllmConfig._set_cudagraph_sizes in 0.28.0's
	// vllm/config/vllm.py: default_max_graph_size, by
	// is_device_capability_family(100)); before it 512 on every GPU.
	BlackwellCUDAGraphs bool
	// HybridPrefixCaching: from 0.28.0 a hybrid model (recurrent-state
	// layers) keeps prefix caching on by default, in align mode: 0.28.0's
	// EngineArgs._set_default_chunked_prefill_and_prefix_caching_args
	// (vllm/engine/arg_utils.py) takes is_prefix_caching_supported, true for
	// generative hybrid models since 0.26.0, without 0.26.0–0.27.1's "and not
	// model_config.is_hybrid", and MambaModelConfig.verify_and_update_config
	// (vllm/model_executor/models/config.py) sets mamba_cache_mode "none" to
	// "align" when prefix caching is on. Before it prefix caching was off for
	// them unless asked for.
	HybridPrefixCaching bool
	// GPUMemoryUtilization: --gpu-memory-utilization's default, 0.9 through
	// 0.19.1 and 0.92 from 0.20.0 (CacheConfig.gpu_memory_utilization,
	// Field(default=…), in each release's vllm/config/cache.py, which
	// EngineArgs takes as its default in vllm/engine/arg_utils.py).
	GPUMemoryUtilization float64
	// SchedulerReserveFullISL: from 0.19.0 scheduler_reserve_full_isl is
	// True (SchedulerConfig in vllm/config/scheduler.py; vLLM pull request
	// 37307): Scheduler.schedule (vllm/v1/core/sched/scheduler.py) admits a
	// waiting request only if KVCacheManager.can_fit_full_sequence, its
	// whole sequence's blocks (num_tokens, at most max_model_len, less its
	// prefix-cache hit) free; before it only the first chunk's.
	SchedulerReserveFullISL bool
	// CUDA-graph capture rules (perf.VLLMGraphs, whose fields cite the
	// source): SpecCUDAGraphCeiling from 0.13.0, CaptureTokenBudget from
	// 0.21.0, ModelRunnerV2 and UniformDecodeGraphs from 0.29.0,
	// CaptureMaxNumSeqs from 0.31.0, SplitCUDAGraphs from 0.34.0.
	SpecCUDAGraphCeiling, CaptureTokenBudget, ModelRunnerV2, UniformDecodeGraphs, CaptureMaxNumSeqs, SplitCUDAGraphs bool
	// BlockSize is --block-size's default on a CUDA GPU: 16, and 64 from
	// 0.34.0 (CacheConfig.DEFAULT_BLOCK_SIZE in vllm/config/cache.py), which
	// Platform.update_block_size_for_backend (vllm/platforms/interface.py)
	// keeps when the attention backend supports it (FlashAttention: multiples
	// of 16; FlashInfer: 16, 32, 64; FlashMLA: 64).
	BlockSize int
	// ExtensibleKVCache: from 0.34.0 the KV cache is sized from the memory
	// measured after warmup and CUDA-graph capture (enable_extensible_kv_cache,
	// on by default on CUDA; vllm/v1/worker/extensible_kv_cache.py,
	// measure_kv_cache_bytes), and gpu_memory_utilization defaults to 1.0
	// with it (CacheConfig.resolved_gpu_memory_utilization): perf.PlanMemoryExtensible.
	ExtensibleKVCache bool
	// Notes say which defaults of that release are not modelled.
	Notes []string
}

// MaxCUDAGraphSize is the ceiling of vLLM's default largest CUDA-graph
// capture size on a GPU of compute capability smVersion (major·10 + minor):
// 1,024 on 10.x with BlackwellCUDAGraphs, else 512 (the min(2 ×
// max_num_seqs, ceiling, max_num_batched_tokens) of _set_cudagraph_sizes).
func (d VersionDefaults) MaxCUDAGraphSize(smVersion int) int {
	if d.BlackwellCUDAGraphs && smVersion/10 == 10 {
		return 1024
	}
	return 512
}

// Releases at which a modelled default changed.
var (
	vllmV1Default      = Release{0, 8, 0}
	vllmBatchRuleSince = Release{0, 9, 0}
	vllmAsyncSince     = Release{0, 14, 0}
	vllmAPIServerPerDP = Release{0, 15, 0}
	vllmReserveFullISL = Release{0, 19, 0}
	vllmGPUMem092Since = Release{0, 20, 0}
	vllmHugeGPUSince   = Release{0, 28, 0} // also the Blackwell capture ceiling and hybrid prefix caching
	// the CUDA-graph capture rules (VersionDefaults, perf.VLLMGraphs);
	// vllmCUDAGraphsRead is the oldest release whose rules were read
	vllmCUDAGraphsRead   = Release{0, 12, 0}
	vllmSpecCeiling      = Release{0, 13, 0}
	vllmCaptureBudget    = Release{0, 21, 0}
	vllmV2RunnerSome     = Release{0, 24, 0} // the V2 runner for DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES only
	vllmV2RunnerDefault  = Release{0, 29, 0}
	vllmCaptureMaxSeqs   = Release{0, 31, 0}
	vllmSplitCUDAGraphs  = Release{0, 34, 0}
	vllmBlockSize64Since = Release{0, 34, 0}
	vllmExtensibleKV     = Release{0, 34, 0}
)

// VLLMDefaults is what vLLM release r sets by default among the settings the
// simulation prices: async scheduling and prefix caching (above); block size
// 16 on CUDA GPUs, 64 from 0.34.0 (BlockSize); max_num_seqs and
// max_num_batched_tokens by GPU from 0.9.0 (SchedulerDefaults; earlier
// releases keyed them on other rules, which are not tabulated: the 0.9.0 rule
// stands in, noted), and from 0.28.0 the 160 GiB rule (HugeGPUBatchRule);
// the largest CUDA-graph capture size, whose ceiling is 1,024 on Blackwell
// from 0.28.0 (BlackwellCUDAGraphs), and the capture sizes under each
// release's rules (the replay pads a MoE layer's tokens to them and runs a
// larger pass eagerly: perf.VLLMGraphs); from 0.34.0 the extensible KV cache.
func VLLMDefaults(r Release) VersionDefaults {
	d := VersionDefaults{Release: r, AsyncScheduling: !r.Before(vllmAsyncSince), EnablePrefixCaching: !r.Before(vllmV1Default),
		SharedEventLoop: !r.Before(vllmV1Default), APIServerPerRank: !r.Before(vllmAPIServerPerDP),
		HugeGPUBatchRule: !r.Before(vllmHugeGPUSince), BlackwellCUDAGraphs: !r.Before(vllmHugeGPUSince),
		HybridPrefixCaching: !r.Before(vllmHugeGPUSince), GPUMemoryUtilization: DefaultGPUMemoryUtilization,
		SchedulerReserveFullISL: !r.Before(vllmReserveFullISL), SpecCUDAGraphCeiling: !r.Before(vllmSpecCeiling),
		CaptureTokenBudget: !r.Before(vllmCaptureBudget), ModelRunnerV2: !r.Before(vllmV2RunnerDefault),
		UniformDecodeGraphs: !r.Before(vllmV2RunnerDefault), CaptureMaxNumSeqs: !r.Before(vllmCaptureMaxSeqs),
		SplitCUDAGraphs: !r.Before(vllmSplitCUDAGraphs), BlockSize: DefaultBlockSize,
		ExtensibleKVCache: !r.Before(vllmExtensibleKV)}
	if !r.Before(vllmGPUMem092Since) {
		d.GPUMemoryUtilization = 0.92
	}
	if d.ExtensibleKVCache {
		d.GPUMemoryUtilization = 1 // resolved_gpu_memory_utilization with the extensible KV cache
	}
	if !r.Before(vllmBlockSize64Since) {
		d.BlockSize = 64
	}
	if r.Before(vllmV1Default) {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s runs the V0 engine by default, which is not modelled (the V1 scheduler stands in; prefix caching off, V0's default)", r))
	}
	if r.Before(vllmBatchRuleSince) {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s's default max_num_seqs and max_num_batched_tokens are not tabulated: the rule of 0.9.0 and later stands in", r))
	}
	if r.Before(vllmCUDAGraphsRead) {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s's default CUDA-graph capture sizes are not tabulated: those of 0.12.0 stand in", r))
	}
	if !r.Before(vllmV2RunnerSome) && r.Before(vllmV2RunnerDefault) {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s runs the V2 model runner for some architectures (DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES), whose CUDA graphs under speculative decoding are not modelled: the V1 runner's stand in", r))
	}
	if d.BlockSize != DefaultBlockSize {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s defaults block_size to %d where the attention backend takes it; a backend that needs larger blocks (CUTLASS MLA, FlashAttention 4 at head size 256 on Blackwell) is not modelled", r, d.BlockSize))
	}
	if d.ExtensibleKVCache {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s sizes the KV cache from measured memory (the extensible KV cache, on unless a KV connector lacks an IMEX channel, which is not modelled): the activation estimate stands for the measured transient peak", r))
	}
	return d
}

// VLLMReleaseDefaults is the defaults of the vLLM release engine.backend_version
// names (VLLMDefaults), ok false when none is named or it does not resolve
// (then the rules of before the field existed stand).
func (e *Engine) VLLMReleaseDefaults() (d VersionDefaults, ok bool) {
	if e.BackendVersion == "" {
		return VersionDefaults{}, false
	}
	rel, _, err := ResolveBackendVersion(e.BackendVersion)
	if err != nil {
		return VersionDefaults{}, false
	}
	return VLLMDefaults(rel), true
}

// backendVersionDefaults fills, for a spec that names engine.backend_version,
// the defaults of that release wherever the input was silent: the scheduler's
// async_scheduling, enable_prefix_caching, gpu_memory_utilization,
// block_size and scheduler_reserve_full_isl, a given engine.tokenization's
// shared_event_loop, a data-parallel pool's api_server_count, and engine.perf.backend_version
// of source aic (the kernel tables of the release that ran). A version that
// does not resolve is left for Validate to refuse.
func backendVersionDefaults(s *Spec, present func(string) bool) {
	e := &s.Engine
	if e.BackendVersion == "" || e.Backend != BackendVLLM {
		return
	}
	rel, _, err := ResolveBackendVersion(e.BackendVersion)
	if err != nil {
		return
	}
	d := VLLMDefaults(rel)
	if !present("engine.scheduler.async_scheduling") {
		e.Scheduler.AsyncScheduling = d.AsyncScheduling
	}
	if !present("engine.scheduler.enable_prefix_caching") {
		e.Scheduler.EnablePrefixCaching = d.EnablePrefixCaching
	}
	if !present("engine.scheduler.gpu_memory_utilization") {
		e.Scheduler.GPUMemoryUtilization = d.GPUMemoryUtilization
	}
	if !present("engine.scheduler.block_size") {
		e.Scheduler.BlockSize = d.BlockSize
	}
	if !present("engine.scheduler.scheduler_reserve_full_isl") {
		e.Scheduler.SchedulerReserveFullISL = d.SchedulerReserveFullISL
	}
	if t := e.Tokenization; t != nil && !present("engine.tokenization.shared_event_loop") && d.SharedEventLoop {
		on := true
		t.SharedEventLoop = &on
	}
	for _, pl := range e.Workers.pools() {
		if pl.pool.APIServerCount == nil && !d.APIServerPerRank && pl.pool.DP() > 1 {
			one := 1
			pl.pool.APIServerCount = &one
		}
	}
	if p, ok := e.Perf.Source.(AICPerf); ok && !present("engine.perf.backend_version") {
		p.BackendVersion = rel.String()
		e.Perf.Source = p
	}
}

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

// NewestVLLMRelease is the newest vLLM release the defaults table knows (the
// newest whose kernel tables the shared data holds, DefaultAICBackendVersion).
// A nightly build resolves to it.
const NewestVLLMRelease = DefaultAICBackendVersion

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
	// Notes say which defaults of that release are not modelled.
	Notes []string
}

// Releases at which a modelled default changed.
var (
	vllmV1Default      = Release{0, 8, 0}
	vllmBatchRuleSince = Release{0, 9, 0}
	vllmAsyncSince     = Release{0, 14, 0}
	vllmAPIServerPerDP = Release{0, 15, 0}
)

// VLLMDefaults is what vLLM release r sets by default among the settings the
// simulation prices: async scheduling and prefix caching (above); block size
// 16 on CUDA GPUs in every release (DefaultBlockSize); max_num_seqs and
// max_num_batched_tokens by GPU from 0.9.0 (SchedulerDefaults; earlier
// releases keyed them on other rules, which are not tabulated: the 0.9.0 rule
// stands in, noted). CUDA-graph capture sizes are not priced (the perf models
// price a pass as the graph-captured kernels at every batch size).
func VLLMDefaults(r Release) VersionDefaults {
	d := VersionDefaults{Release: r, AsyncScheduling: !r.Before(vllmAsyncSince), EnablePrefixCaching: !r.Before(vllmV1Default),
		SharedEventLoop: !r.Before(vllmV1Default), APIServerPerRank: !r.Before(vllmAPIServerPerDP)}
	if r.Before(vllmV1Default) {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s runs the V0 engine by default, which is not modelled (the V1 scheduler stands in; prefix caching off, V0's default)", r))
	}
	if r.Before(vllmBatchRuleSince) {
		d.Notes = append(d.Notes, fmt.Sprintf("vLLM %s's default max_num_seqs and max_num_batched_tokens are not tabulated: the rule of 0.9.0 and later stands in", r))
	}
	return d
}

// backendVersionDefaults fills, for a spec that names engine.backend_version,
// the defaults of that release wherever the input was silent: the scheduler's
// async_scheduling and enable_prefix_caching, a given engine.tokenization's
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

package config

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Versions as releases, images and wheels name them resolve to the release
// whose code they carry; nightly builds to the newest release known.
func TestResolveBackendVersion(t *testing.T) {
	for _, c := range []struct {
		in, release string
		noted       bool
	}{
		{"0.15.1", "0.15.1", false},
		{"v0.15.1", "0.15.1", true},
		{"0.15", "0.15.0", true},
		{"0.8.1.post2", "0.8.1", true},
		{"1.3.0rc5", "1.3.0", true},
		{"0.11.1rc2.dev143+g5b8c30d", "0.11.1", true},
		{"0.14.0rc1", "0.14.0", true},
		{"nightly-5b8c30d0a1", NewestVLLMRelease, true},
		{"nightly", NewestVLLMRelease, true},
		{" 0.19.0 ", "0.19.0", false},
	} {
		rel, note, err := ResolveBackendVersion(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.release, rel.String(), c.in)
		assert.Equal(t, c.noted, note != "", "%s: note %q", c.in, note)
	}
	for _, bad := range []string{"", "abc", "1", "glm5-hopper", "v", ".5.1"} {
		_, _, err := ResolveBackendVersion(bad)
		assert.Error(t, err, bad)
	}
}

// A nightly build resolves to the newest release of the engine in use, and a
// release after the newest known is noted: SGLang's and TensorRT-LLM's are
// their defaults (0.5.9, 1.2.0rc6.post1 → 1.2.0), not vLLM's.
func TestResolveEngineVersion(t *testing.T) {
	for _, c := range []struct {
		backend, in, release, note string
	}{
		{BackendSGLang, "nightly", "0.5.13", "the newest SGLang release known, 0.5.13"},
		{BackendTRTLLM, "nightly-1a2b3c", "1.2.0", "the newest TensorRT-LLM release known, 1.2.0"},
		{BackendVLLM, "nightly", NewestVLLMRelease, "the newest release known, " + NewestVLLMRelease},
		{BackendVLLM, "99.0.0", "99.0.0", "vLLM 99.0.0 is newer than the newest release known here (" + NewestVLLMRelease + ")"},
		{BackendSGLang, "0.15.1", "0.15.1", "SGLang 0.15.1 is newer than the newest release known here (0.5.13)"},
		{BackendTRTLLM, "1.2.0rc5", "1.2.0", "resolves to release 1.2.0"},
	} {
		rel, note, err := ResolveEngineVersion(c.in, c.backend)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.release, rel.String(), "%s %s", c.backend, c.in)
		assert.Contains(t, note, c.note, "%s %s", c.backend, c.in)
	}
	_, note, _ := ResolveEngineVersion("0.5.9", BackendSGLang)
	assert.Empty(t, note, "the newest release itself")
}

// A PEP 440 local label (a wheel built for CUDA 12.8) is that release, named
// as a label, not as a release candidate, post or dev build.
func TestALocalBuildLabelIsTheRelease(t *testing.T) {
	rel, note, err := ResolveBackendVersion("0.15.1+cu128")
	require.NoError(t, err)
	assert.Equal(t, "0.15.1", rel.String())
	assert.Equal(t, `"0.15.1+cu128" is release 0.15.1 (+cu128 is a local build label)`, note)
	_, note, _ = ResolveBackendVersion("0.11.1rc2.dev143+g5b8c30d")
	assert.Contains(t, note, "resolves to release 0.11.1 (a release candidate, post or dev build")
}

// The defaults table against the releases it cites: async scheduling is on by
// default from vLLM 0.14.0 (pull request 27614; 0.13.0 needed
// --async-scheduling), prefix caching from the V1 engine's default in 0.8.0.
func TestVLLMDefaultsByRelease(t *testing.T) {
	for _, c := range []struct {
		r             Release
		async, prefix bool
		notes         int
	}{
		{Release{0, 7, 3}, false, false, 3}, // V0, the batch rule, the capture sizes
		{Release{0, 8, 0}, false, true, 2},
		{Release{0, 9, 0}, false, true, 1},
		{Release{0, 12, 0}, false, true, 0},
		{Release{0, 13, 0}, false, true, 0},
		{Release{0, 14, 0}, true, true, 0},
		{Release{0, 15, 1}, true, true, 0},
		{Release{0, 24, 0}, true, true, 1}, // the V2 runner for some architectures
		{Release{0, 28, 0}, true, true, 1},
		{Release{0, 29, 0}, true, true, 0},
		{Release{0, 33, 0}, true, true, 0},
		{Release{0, 34, 0}, true, true, 2}, // block size 64's backends, the extensible KV cache's connectors
		{Release{1, 0, 0}, true, true, 2},
	} {
		d := VLLMDefaults(c.r)
		assert.Equal(t, c.async, d.AsyncScheduling, c.r.String())
		assert.Equal(t, c.prefix, d.EnablePrefixCaching, c.r.String())
		assert.Len(t, d.Notes, c.notes, c.r.String())
		assert.Equal(t, c.prefix, d.SharedEventLoop, "the V1 front end, from 0.8.0: "+c.r.String())
	}
}

// The CUDA-graph rules and the cache defaults against the wheels that
// introduced them: _set_cudagraph_sizes (vllm/config/vllm.py) scales its
// limit by 1 + num_speculative_tokens from 0.13.0 (0.12.0 has no
// decode_query_len), captures max_num_batched_tokens from 0.21.0, the
// uniform decode sizes from 0.29.0 (when the V2 model runner became the
// default for every architecture: DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES is
// gone), max_num_seqs from 0.31.0, and splits prefill and decode sizes in
// 0.34.0, whose CacheConfig.DEFAULT_BLOCK_SIZE is 64 (16 in 0.33.0) and
// whose gpu_memory_utilization resolves to 1.0 with the extensible KV cache
// (0.92 from 0.20.0, 0.9 before).
func TestVLLMCUDAGraphAndCacheDefaultsByRelease(t *testing.T) {
	for _, c := range []struct {
		r                                       Release
		spec, budget, v2, maxSeqs, split, extKV bool
		block                                   int
		util                                    float64
	}{
		{Release{0, 12, 0}, false, false, false, false, false, false, 16, 0.9},
		{Release{0, 13, 0}, true, false, false, false, false, false, 16, 0.9},
		{Release{0, 20, 0}, true, false, false, false, false, false, 16, 0.92},
		{Release{0, 21, 0}, true, true, false, false, false, false, 16, 0.92},
		{Release{0, 28, 0}, true, true, false, false, false, false, 16, 0.92},
		{Release{0, 29, 0}, true, true, true, false, false, false, 16, 0.92},
		{Release{0, 31, 0}, true, true, true, true, false, false, 16, 0.92},
		{Release{0, 33, 0}, true, true, true, true, false, false, 16, 0.92},
		{Release{0, 34, 0}, true, true, true, true, true, true, 64, 1},
	} {
		d := VLLMDefaults(c.r)
		got := []bool{d.SpecCUDAGraphCeiling, d.CaptureTokenBudget, d.ModelRunnerV2, d.UniformDecodeGraphs, d.CaptureMaxNumSeqs, d.SplitCUDAGraphs, d.ExtensibleKVCache}
		assert.Equal(t, []bool{c.spec, c.budget, c.v2, c.v2, c.maxSeqs, c.split, c.extKV}, got, c.r.String())
		assert.Equal(t, c.block, d.BlockSize, c.r.String())
		assert.Equal(t, c.util, d.GPUMemoryUtilization, c.r.String())
	}
	// backend_version 0.34.0 fills block_size 64 and gpu_memory_utilization
	// 1.0 where the spec is silent; a given value wins
	s := decodeWith(t, "backend_version: 0.34.0")
	assert.Equal(t, 64, s.Engine.Scheduler.BlockSize)
	assert.Equal(t, 1.0, s.Engine.Scheduler.GPUMemoryUtilization)
	s = decodeWith(t, "backend_version: 0.34.0, scheduler: {block_size: 16, gpu_memory_utilization: 0.9}")
	assert.Equal(t, 16, s.Engine.Scheduler.BlockSize)
	assert.Equal(t, 0.9, s.Engine.Scheduler.GPUMemoryUtilization)
	assert.Equal(t, DefaultBlockSize, decodeWith(t, "backend_version: 0.33.0").Engine.Scheduler.BlockSize)
}

// A given engine.tokenization shares the API server's event loop with the
// output handling from vLLM 0.8.0 (the V1 front end) unless it says
// otherwise; an unset version or an absent block changes nothing.
func TestBackendVersionSharedEventLoop(t *testing.T) {
	const tok = "tokenization: {send_ms: 0.3, per_token_us: 2}"
	assert.True(t, decodeWith(t, "backend_version: 0.12.0, "+tok).Engine.Tokenization.Shared())
	assert.False(t, decodeWith(t, "backend_version: 0.7.3, "+tok).Engine.Tokenization.Shared(), "V0's front end")
	assert.Nil(t, decodeWith(t, "backend_version: 0.7.3, "+tok).Engine.Tokenization.SharedEventLoop)
	assert.Nil(t, decodeWith(t, tok).Engine.Tokenization.SharedEventLoop, "no version: as before")
	off := decodeWith(t, "backend_version: 0.15.1, tokenization: {send_ms: 0.3, shared_event_loop: false}")
	assert.False(t, off.Engine.Tokenization.Shared(), "an explicit setting wins")
	assert.Nil(t, decodeWith(t, "backend_version: 0.15.1").Engine.Tokenization, "no block is made")
	on := decodeWith(t, "backend_version: 0.15.1, "+tok)
	again, err := Decode(on.JSON())
	require.NoError(t, err)
	assert.Equal(t, string(on.JSON()), string(again.JSON()))
}

// SGLang's TokenizerManager tokenizes and hands out the outputs on one
// event loop in every release: a given engine.tokenization shares it unless
// it says otherwise.
func TestSGLangSharedEventLoop(t *testing.T) {
	const tok = "tokenization: {send_ms: 0.3, per_token_us: 2}"
	assert.True(t, decodeWith(t, "backend: sglang, "+tok).Engine.Tokenization.Shared())
	assert.True(t, decodeWith(t, "backend: sglang, backend_version: 0.4.6, "+tok).Engine.Tokenization.Shared())
	off := decodeWith(t, "backend: sglang, tokenization: {send_ms: 0.3, shared_event_loop: false}")
	assert.False(t, off.Engine.Tokenization.Shared(), "an explicit setting wins")
	assert.Nil(t, decodeWith(t, "backend: sglang").Engine.Tokenization, "no block is made")
}

func decodeWith(t *testing.T, engine string) *Spec {
	t.Helper()
	s, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, " + engine + "}\n" +
		"traffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4}\n"))
	require.NoError(t, err)
	return s
}

// engine.backend_version fills the release's defaults where the input was
// silent, keeps what it set, and names the aic tables; unset changes nothing.
func TestBackendVersionDefaults(t *testing.T) {
	s := decodeWith(t, "backend_version: 0.15.1")
	assert.True(t, s.Engine.Scheduler.AsyncScheduling)
	assert.True(t, s.Engine.Scheduler.EnablePrefixCaching)
	s = decodeWith(t, "backend_version: 0.12.0")
	assert.False(t, s.Engine.Scheduler.AsyncScheduling)
	s = decodeWith(t, "backend_version: 0.15.1, scheduler: {async_scheduling: false}")
	assert.False(t, s.Engine.Scheduler.AsyncScheduling, "an explicit setting wins")
	s = decodeWith(t, "backend_version: 0.7.3")
	assert.False(t, s.Engine.Scheduler.EnablePrefixCaching, "V0's default")
	s = decodeWith(t, "backend_version: 0.16.0, perf: {source: aic, database: /db}")
	assert.Equal(t, "0.16.0", s.Engine.Perf.Source.(AICPerf).BackendVersion, "the release's tables")
	s = decodeWith(t, "backend_version: 0.8.1.post2, perf: {source: aic, database: /db, backend_version: 0.24.0}")
	assert.Equal(t, "0.24.0", s.Engine.Perf.Source.(AICPerf).BackendVersion, "named tables win")
	s = decodeWith(t, "backend_version: nightly-5b8c30d, perf: {source: aic, database: /db}")
	assert.Equal(t, NewestVLLMRelease, s.Engine.Perf.Source.(AICPerf).BackendVersion)
	assert.True(t, s.Engine.Scheduler.AsyncScheduling)

	// unset: the canonical spec is what it was (no key, async off)
	s = decodeWith(t, "perf: {source: aic, database: /db}")
	assert.False(t, s.Engine.Scheduler.AsyncScheduling)
	assert.Equal(t, DefaultAICBackendVersion, s.Engine.Perf.Source.(AICPerf).BackendVersion)
	var raw map[string]map[string]any
	require.NoError(t, json.Unmarshal(s.JSON(), &raw))
	assert.NotContains(t, raw["engine"], "backend_version")

	// the canonical spec decodes to itself
	s = decodeWith(t, "backend_version: 0.15.1")
	again, err := Decode(s.JSON())
	require.NoError(t, err)
	assert.Equal(t, string(s.JSON()), string(again.JSON()))
}

func TestBackendVersionRefused(t *testing.T) {
	_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, backend_version: glm5-hopper}\n" +
		"traffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4}\n"))
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "engine.backend_version", ce.Field)
	assert.Contains(t, ce.Msg, "not a version")
}

// A data-parallel server of a vLLM release before 0.15.0 runs one API
// server (--api-server-count defaulted to 1); from 0.15.0 one per rank (the
// default became data_parallel_size, vLLM pull request 32525), which is also
// what an unset version and a given value keep.
func TestBackendVersionAPIServerCount(t *testing.T) {
	const dp2 = "workers: {aggregated: {count: 1, tp: 1, data_parallel_size: 2}}"
	pool := func(s *Spec) *Pool { return s.Engine.Workers.Aggregated }
	s := decodeWith(t, "backend_version: 0.12.0, "+dp2)
	require.NotNil(t, pool(s).APIServerCount)
	assert.Equal(t, 1, *pool(s).APIServerCount)
	assert.Equal(t, 1, pool(s).APIServers())
	assert.Equal(t, 1, *pool(decodeWith(t, "backend_version: 0.14.1, "+dp2)).APIServerCount)
	assert.Nil(t, pool(decodeWith(t, "backend_version: 0.15.0, "+dp2)).APIServerCount)
	assert.Equal(t, 2, pool(decodeWith(t, "backend_version: 0.15.0, "+dp2)).APIServers())
	assert.Nil(t, pool(decodeWith(t, dp2)).APIServerCount, "no version: as before")
	assert.Nil(t, pool(decodeWith(t, "backend_version: 0.12.0")).APIServerCount, "no data parallelism: nothing to share")
	given := decodeWith(t, "backend_version: 0.12.0, workers: {aggregated: {count: 1, tp: 1, data_parallel_size: 2, api_server_count: 2}}")
	assert.Equal(t, 2, *pool(given).APIServerCount, "an explicit setting wins")
}

// api_server_count is 1 or data_parallel_size, and vLLM's alone.
func TestAPIServerCountRefused(t *testing.T) {
	for _, c := range []struct{ engine, field string }{
		{"workers: {aggregated: {count: 1, tp: 1, data_parallel_size: 4, api_server_count: 2}}", "engine.workers.aggregated.api_server_count"},
		{"workers: {aggregated: {count: 1, tp: 1, api_server_count: 0}}", "engine.workers.aggregated.api_server_count"},
		{"backend: sglang, workers: {aggregated: {count: 1, tp: 1, api_server_count: 1}}", "engine.workers.aggregated.api_server_count"},
		// the pools' vLLM-only fields are refused pool by pool: the prefill
		// pool's api_server_count before the decode pool's scheduler
		{"backend: sglang, workers: {disaggregated: {prefill: {count: 1, tp: 1, api_server_count: 1}, decode: {count: 1, tp: 1, scheduler: {max_num_seqs: 8}}}}",
			"engine.workers.disaggregated.prefill.api_server_count"},
		{"backend: sglang, workers: {disaggregated: {prefill: {count: 1, tp: 1, scheduler: {max_num_seqs: 8}, api_server_count: 1}, decode: {count: 1, tp: 1}}}",
			"engine.workers.disaggregated.prefill.scheduler"},
	} {
		_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, " + c.engine + "}\n" +
			"traffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4}\n"))
		var ce *Error
		require.ErrorAs(t, err, &ce, c.engine)
		assert.Equal(t, c.field, ce.Field, c.engine)
	}
}

// An unquoted version that YAML reads as a number (0.10 is the float 0.1) is
// named with the way out: quoting it.
func TestAnUnquotedVersionSaysToQuoteIt(t *testing.T) {
	ce := decodeErr(t, "engine: {model: m, system: h100_sxm, backend_version: 0.10}\n"+
		"traffic: {source: {type: synthetic, num_requests: 1, isl: 8, osl: 1}, load: {mode: concurrency, concurrency: 1}}\n")
	assert.Equal(t, "engine.backend_version", ce.Field)
	assert.Equal(t, "expected a string, got the number 0.1 (write it in quotes: unquoted, YAML reads 0.10 as the number 0.1)", ce.Msg)
	ce = decodeErr(t, "engine: {model: m, system: h100_sxm, backend_version: true}\n"+
		"traffic: {source: {type: synthetic, num_requests: 1, isl: 8, osl: 1}, load: {mode: concurrency, concurrency: 1}}\n")
	assert.Equal(t, "expected a string, got the boolean true", ce.Msg) // no hint for what quoting does not explain
}

// vLLM 0.28.0's defaults against its source: get_batch_defaults
// (vllm/engine/arg_utils.py) tests `device_memory >= 160 * GiB_bytes` first
// and gives OPENAI_API_SERVER 16384 tokens and 1024 sequences, then the
// 70 GiB non-A100 rule (8192 / 1024), else 2048 / 256; _set_cudagraph_sizes
// (vllm/config/vllm.py) caps the largest capture size at 1024 when
// is_device_capability_family(100), else 512. 0.27.1's source has neither
// (one 70 GiB rule, 512 everywhere).
func TestVLLMDefaultsFrom0280(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		rel            Release
		mem            int64
		name           string
		sm             int
		seqs, tokens   int
		cudaGraphLimit int
	}{
		{Release{0, 27, 1}, 180 * gib, "b200_sxm", 100, 1024, 8192, 512},
		{Release{0, 28, 0}, 180 * gib, "b200_sxm", 100, 1024, 16384, 1024},
		{Release{0, 28, 0}, 275040 << 20, "b300_sxm", 103, 1024, 16384, 1024},
		{Release{0, 28, 0}, 160 * gib, "a100_big", 80, 1024, 16384, 512}, // 160 GiB tested before the name
		{Release{0, 28, 0}, 160*gib - 1, "gpu", 90, 1024, 8192, 512},
		{Release{0, 34, 0}, 141 * gib, "h200_sxm", 90, 1024, 8192, 512},
		{Release{0, 34, 0}, 97887 << 20, "rtx_pro_6000_server", 120, 1024, 8192, 512}, // 12.x is not family 10
		{Release{0, 34, 0}, 80 * gib, "a100_sxm", 80, 256, 2048, 512},
	} {
		d := VLLMDefaults(c.rel)
		seqs, tokens := SchedulerDefaultsAt(c.mem, c.name, d.HugeGPUBatchRule)
		assert.Equal(t, c.seqs, seqs, "%s %s", c.rel, c.name)
		assert.Equal(t, c.tokens, tokens, "%s %s", c.rel, c.name)
		assert.Equal(t, c.cudaGraphLimit, d.MaxCUDAGraphSize(c.sm), "%s %s", c.rel, c.name)
		assert.Equal(t, !c.rel.Before(Release{0, 28, 0}), d.HybridPrefixCaching, "%s: hybrid models' prefix caching", c.rel)
	}
	// the spec: b200_sxm at 0.30.0 resolves 16384 tokens; unset and 0.24.0 keep 8192
	for _, c := range []struct {
		version string
		tokens  int
	}{{"", 8192}, {"0.24.0", 8192}, {"0.27.1", 8192}, {"0.30.0", 16384}, {"nightly", 16384}} {
		s, err := DecodeYAML([]byte("engine: {model: m, system: b200_sxm" + map[bool]string{true: ", backend_version: " + c.version}[c.version != ""] + "}\n" +
			"traffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4}\n"))
		require.NoError(t, err)
		require.NoError(t, s.ResolveSchedulerDefaults(193273528320, "b200_sxm"))
		assert.Equal(t, c.tokens, s.Engine.Scheduler.MaxNumBatchedTokens, c.version)
		assert.Equal(t, 1024, s.Engine.Scheduler.MaxNumSeqs, c.version)
	}
}

// --gpu-memory-utilization defaults to 0.9 through vLLM 0.19.1 and to 0.92
// from 0.20.0 (vllm/config/cache.py of each wheel: Field(default=0.9) in
// 0.19.1, Field(default=0.92) in 0.20.0); unset keeps 0.9, a given value
// stands.
func TestVLLMGPUMemoryUtilizationByRelease(t *testing.T) {
	assert.Equal(t, 0.9, VLLMDefaults(Release{0, 19, 1}).GPUMemoryUtilization)
	assert.Equal(t, 0.92, VLLMDefaults(Release{0, 20, 0}).GPUMemoryUtilization)
	assert.Equal(t, 0.92, VLLMDefaults(Release{0, 33, 0}).GPUMemoryUtilization)
	for _, c := range []struct {
		extra string
		want  float64
	}{{"", 0.9}, {", backend_version: 0.19.1", 0.9}, {", backend_version: 0.20.0", 0.92}, {", backend_version: 0.24.0", 0.92},
		{", backend_version: 0.24.0, scheduler: {gpu_memory_utilization: 0.8}", 0.8}} {
		s, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm" + c.extra + "}\n" +
			"traffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4}\n"))
		require.NoError(t, err, c.extra)
		assert.Equal(t, c.want, s.Engine.Scheduler.GPUMemoryUtilization, c.extra)
	}
}

// scheduler_reserve_full_isl is True from vLLM 0.19.0 (SchedulerConfig in
// vllm/config/scheduler.py of 0.19.0; absent in 0.18.0); unset version keeps
// it off, a given value stands.
func TestVLLMReserveFullISLByRelease(t *testing.T) {
	assert.False(t, VLLMDefaults(Release{0, 18, 0}).SchedulerReserveFullISL)
	assert.True(t, VLLMDefaults(Release{0, 19, 0}).SchedulerReserveFullISL)
	for _, c := range []struct {
		extra string
		want  bool
	}{{"", false}, {", backend_version: 0.18.0", false}, {", backend_version: 0.19.0", true},
		{", backend_version: 0.24.0, scheduler: {scheduler_reserve_full_isl: false}", false}} {
		s, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm" + c.extra + "}\n" +
			"traffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4}\n"))
		require.NoError(t, err, c.extra)
		assert.Equal(t, c.want, s.Engine.Scheduler.SchedulerReserveFullISL, c.extra)
	}
}

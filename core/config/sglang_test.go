package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SGLang's GPU defaults by release, by hand, for an 80 GiB GPU (81,920
// MiB) at TP 2:
//   - 0.5.3 on: chunked 8192, cuda_graph_max_bs 256; reserved 512 + 1.5 ·
//     8192 + 2 · 256 + 2/8 · 1024 = 13,568 MiB (above the 10 GiB floor):
//     (81,920 − 13,568) / 81,920 = 0.8344 → 0.834;
//   - 0.4.8 to 0.5.2: reserved (9.5 + 2/2) GiB = 10,752 MiB: 0.86875 → 0.869;
//   - before: 0.87 at TP 2.
//
// A given chunked_prefill_size enters the later rule's reserve: 4096 gives
// 512 + 6144 + 512 + 256 = 7,424, lifted to the 10,240 floor: 0.875.
func TestSGLangDefaultsByRelease(t *testing.T) {
	const gib = int64(1) << 30
	d := SGLangDefaults(Release{0, 5, 9}, 80*gib, 2, 1, 1, nil)
	assert.Equal(t, 8192, d.ChunkedPrefillSize)
	assert.Equal(t, 256, d.CUDAGraphMaxBS)
	assert.Equal(t, 0.834, d.MemFractionStatic)
	assert.Equal(t, 0.869, SGLangDefaults(Release{0, 5, 1}, 80*gib, 2, 1, 1, nil).MemFractionStatic)
	assert.Equal(t, 0.87, SGLangDefaults(Release{0, 4, 7}, 80*gib, 2, 1, 1, nil).MemFractionStatic)
	assert.Equal(t, 0.875, SGLangDefaults(Release{0, 5, 9}, 80*gib, 2, 1, 1, &SGLang{ChunkedPrefillSize: 4096}).MemFractionStatic)
	assert.Equal(t, 0.7, SGLangDefaults(Release{0, 5, 9}, 80*gib, 2, 1, 1, &SGLang{MemFractionStatic: 0.7}).MemFractionStatic)
	// H200 (141 GiB = 144,384 MiB) at TP 8: cuda_graph_max_bs 512; reserved
	// 512 + 12,288 + 1,024 + 1,024 = 14,848: 0.8972 → 0.897
	h := SGLangDefaults(Release{0, 5, 9}, 141*gib, 8, 1, 1, nil)
	assert.Equal(t, 512, h.CUDAGraphMaxBS)
	assert.Equal(t, 0.897, h.MemFractionStatic)
	// with DP attention over 8 ranks: 3 · 512 · 8 = 12,288 more, and (512 >
	// 300) 1.5 · 512 · 8 = 6,144 more: 33,280 MiB, 0.7695 → 0.770
	assert.Equal(t, 0.770, SGLangDefaults(Release{0, 5, 9}, 141*gib, 8, 1, 8, nil).MemFractionStatic)
}

// A pool's own sglang block: its given fields win, the rest are
// engine.sglang's; it is refused with another backend, and a 0 given for a
// derived field of it is refused as engine.sglang's is.
func TestSGLangPoolBlock(t *testing.T) {
	const traffic = `"traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 8, "osl": 8}, "load": {"mode": "concurrency", "concurrency": 1}}`
	pd := func(backend, pool string) string {
		return `{"engine": {"model": "m", "system": "h100_sxm", "backend": "` + backend + `", "perf": {"source": "roofline"},
		"workers": {"disaggregated": {"prefill": {"count": 1, "tp": 1, "sglang": ` + pool + `}, "decode": {"count": 1, "tp": 1},
		"kv_transfer": {}}}` + map[bool]string{true: `, "sglang": {"max_running_requests": 64, "page_size": 16}`}[backend == "sglang"] + `}, ` + traffic + `}`
	}
	s, err := Decode([]byte(pd("sglang", `{"max_running_requests": 1}`)))
	require.NoError(t, err)
	g := s.Engine.SGLangOf("prefill")
	assert.Equal(t, 1, g.MaxRunningRequests)
	assert.Equal(t, 16, g.PageSize)
	assert.Equal(t, DefaultSGLangMaxPrefillTokens, g.MaxPrefillTokens)
	assert.Equal(t, 64, s.Engine.SGLangOf("decode").MaxRunningRequests)
	_, err = Decode([]byte(pd("vllm", `{"max_running_requests": 1}`)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "engine.workers.disaggregated.prefill.sglang")
	_, err = Decode([]byte(pd("sglang", `{"max_running_requests": 0}`)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "engine.workers.disaggregated.prefill.sglang.max_running_requests")
}

// engine.backend sglang takes SGLang's arguments in engine.sglang (defaults
// filled by Normalize: the release's aic tables, 16,384 prefill tokens, page
// 1, fcfs), refuses vLLM's engine.scheduler naming SGLang's name for the
// setting, and its canonical form decodes again (without engine.scheduler).
func TestSGLangSpec(t *testing.T) {
	const traffic = `"traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 8, "osl": 8}, "load": {"mode": "concurrency", "concurrency": 1}}`
	s, err := Decode([]byte(`{"engine": {"model": "m", "system": "h100_sxm", "backend": "sglang", "backend_version": "0.5.6.post2",
		"perf": {"source": "aic", "database": "/db"}, "sglang": {"max_running_requests": 64, "schedule_policy": "lpm"}}, ` + traffic + `}`))
	require.NoError(t, err)
	g := s.Engine.SGLang
	assert.Equal(t, &SGLang{MaxRunningRequests: 64, MaxPrefillTokens: 16384, PageSize: 1, SchedulePolicy: "lpm", ScheduleConservativeness: 1}, g)
	assert.Equal(t, "0.5.6", s.Engine.Perf.Source.(AICPerf).BackendVersion)
	canon := s.JSON()
	assert.NotContains(t, string(canon), `"scheduler"`)
	again, err := Decode(canon)
	require.NoError(t, err)
	assert.Equal(t, canon, again.JSON())

	for _, tc := range []struct{ spec, field, msg string }{
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "scheduler": {"max_num_seqs": 8}}, ` + traffic + `}`,
			"engine.scheduler.max_num_seqs", "max_running_requests"},
		{`{"engine": {"model": "m", "system": "s", "sglang": {"page_size": 16}}, ` + traffic + `}`, "engine.sglang", "engine.backend: sglang"},
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "sglang": {"schedule_policy": "dfs-weight"}}, ` + traffic + `}`,
			"engine.sglang.schedule_policy", "not modelled"},
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "sglang": {"page_size": 16, "chunked_prefill_size": 100}}, ` + traffic + `}`,
			"engine.sglang.chunked_prefill_size", "multiple of page_size"},
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "workers": {"aggregated": {"count": 2, "tp": 1, "placement": "kv_router"}}}, ` + traffic + `}`,
			"engine.workers.aggregated.placement", "not modelled with engine.backend sglang"},
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "sglang": {"max_running_requests": 0}}, ` + traffic + `}`,
			"engine.sglang.max_running_requests", "≥ 1"},
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "sglang": {"eager_launch_us_per_layer": -1}}, ` + traffic + `}`,
			"engine.sglang.eager_launch_us_per_layer", "-1"},
		{`{"engine": {"model": "m", "system": "s", "backend": "sglang", "sglang": {"stream_interval": -1}}, ` + traffic + `}`,
			"engine.sglang.stream_interval", "≥ 1"},
	} {
		_, err := Decode([]byte(tc.spec))
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.spec)
		assert.Equal(t, tc.field, ce.Field, tc.spec)
		assert.Contains(t, ce.Msg, tc.msg, tc.spec)
	}
	// chunked_prefill_size -1: no chunking, as SGLang takes it
	_, err = Decode([]byte(`{"engine": {"model": "m", "system": "s", "backend": "sglang", "sglang": {"chunked_prefill_size": -1}}, ` + traffic + `}`))
	assert.NoError(t, err)
}

// stream_output_generation's rule by release, as the wheels have it:
// `% stream_interval == 0` through 0.4.8.post1, `== 1` (the first token at
// once) from 0.4.9.
func TestSGLangStreamsFirstTokenFrom049(t *testing.T) {
	for v, want := range map[string]bool{"0.4.7": false, "0.4.8.post1": false, "0.4.9": true, "0.5.9": true} {
		r, _, err := ResolveEngineVersion(v, BackendSGLang)
		require.NoError(t, err)
		assert.Equal(t, want, SGLangStreamsFirstToken(r), v)
	}
}

// Piecewise CUDA graphs for extend passes: on by default from 0.5.10 (the
// wheels of 0.5.9 and 0.5.10), off there for the architectures of
// piecewise_cuda_graph_disabled_model_archs and the multimodal ones.
func TestSGLangPiecewiseByDefault(t *testing.T) {
	for v, want := range map[string]bool{"0.5.1.post1": false, "0.5.6.post2": false, "0.5.9": false, "0.5.10": true, "0.5.12.post1": true} {
		r, _, err := ResolveEngineVersion(v, BackendSGLang)
		require.NoError(t, err)
		assert.Equal(t, want, SGLangPiecewiseByDefault(r), v)
	}
	for a, want := range map[string]bool{"GlmMoeDsaForCausalLM": true, "DeepseekV32ForCausalLM": true,
		"Qwen3_5MoeForConditionalGeneration": true, "DeepseekV3ForCausalLM": false, "LlamaForCausalLM": false,
		"Qwen3ForCausalLM": false, "Qwen3MoeForCausalLM": false} {
		assert.Equal(t, want, SGLangPiecewiseOff(a), a)
	}
}

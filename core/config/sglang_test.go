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
		"Qwen3_5MoeForConditionalGeneration": true, "KimiK25ForConditionalGeneration": true, "DeepseekV4ForCausalLM": true,
		"DeepseekV3ForCausalLM": false, "LlamaForCausalLM": false, "Qwen3ForCausalLM": false, "Qwen3MoeForCausalLM": false,
		"Llama4ForConditionalGeneration": false} {
		assert.Equal(t, want, SGLangPiecewiseOff(Release{0, 5, 12}, a), a)
	}
	// 0.5.13 drops the DSA models from piecewise_cuda_graph_disabled_model_archs
	for a, want := range map[string]bool{"GlmMoeDsaForCausalLM": false, "DeepseekV32ForCausalLM": false,
		"DeepseekV4ForCausalLM": true, "Qwen3NextForCausalLM": true, "KimiK25ForConditionalGeneration": true} {
		assert.Equal(t, want, SGLangPiecewiseOff(Release{0, 5, 13}, a), a)
	}
}

// The rules of the later releases, each from its wheel: speculative decoding
// keeps piecewise graphs and spec v2 from 0.5.11; the flashinfer_trtllm MoE
// runner turns them off from 0.5.10 through 0.5.12.
func TestSGLangReleaseRules(t *testing.T) {
	for _, c := range []struct {
		r                   Release
		spec, v2, trtllmOff bool
	}{
		{Release{0, 5, 9}, false, false, false},
		{Release{0, 5, 10}, false, false, true},
		{Release{0, 5, 11}, true, true, true},
		{Release{0, 5, 12}, true, true, true},
		{Release{0, 5, 13}, true, true, false},
	} {
		assert.Equal(t, c.spec, SGLangPiecewiseWithSpeculative(c.r), c.r.String())
		assert.Equal(t, c.v2, SGLangSpecV2ByDefault(c.r), c.r.String())
		assert.Equal(t, c.trtllmOff, SGLangPiecewiseOffForTRTLLMMoE(c.r), c.r.String())
	}
}

// _handle_gpu_memory_settings from 0.5.10, by hand (MiB; an 80 GiB GPU is
// 81,920, 141 GiB 144,384, B200's 180 GiB 184,320):
//   - 80 GiB, TP 1, piecewise on, no MLA: chunked 8192, cuda_graph_max_bs
//     256, piecewise max 8192 with 8 + 14 + 8 + 8 + 12 + 8 = 58 capture
//     sizes (4..32/4, 48..256/16, 288..512/32, 576..1024/64, 1280..4096/256,
//     4608..8192/512); reserved 512 + 12,288 + 512 + 128 + 58 · 8 = 13,904:
//     68,016 / 81,920 = 0.8303 → 0.830 (piecewise off: 13,440, 0.836);
//   - 141 GiB, TP 8, MLA: 512 + 12,288 + 1,024 + 1,024 + 1,536 = 16,384:
//     128,000 / 144,384 = 0.8865 → 0.887; piecewise max 2048 (42 sizes);
//   - B200, TP 8, MLA: chunked 16384, 512 + 24,576 + 1,024 + 1,024 + 1,536
//     = 28,672: 155,648 / 184,320 = 0.8444 → 0.844;
//   - 80 GiB, TP 1, chunked 2048 given: max 2048, 42 sizes, 512 + 3,072 +
//     512 + 128 + 336 = 4,560, lifted to the 10,240 floor: 0.875 (the
//     reservation comes before the floor);
//   - EAGLE at 80 GiB, TP 1 (piecewise off at 0.5.10): 13,440 + 4,096 =
//     17,536: 0.7859 → 0.786; 0.5.9's 2,048: 15,488, 0.8109 → 0.811;
//   - 0.5.13 caps the piecewise max at a given context_length: 1000 leaves
//     8 + 14 + 8 + 7 (576..960) = 37 sizes, the largest 960; 0.5.12 does not
//     (8192, 58);
//   - 24 GiB at TP 1: cuda_graph_max_bs 24 from 0.5.10 (8 before); 16 GiB at
//     TP 4: 8 from 0.5.10 (80 before).
func TestSGLangDefaultsPiecewise(t *testing.T) {
	const gib = int64(1) << 30
	r10, on := Release{0, 5, 10}, SGLangPiecewiseMemory{On: true}
	d := SGLangDefaultsPiecewise(r10, 80*gib, 1, 1, 1, nil, on)
	assert.Equal(t, 8192, d.PiecewiseMaxTokens)
	assert.Equal(t, 58, d.PiecewiseSizes)
	assert.Equal(t, 0.830, d.MemFractionStatic)
	assert.Equal(t, 0.836, SGLangDefaultsPiecewise(r10, 80*gib, 1, 1, 1, nil, SGLangPiecewiseMemory{}).MemFractionStatic)
	assert.Equal(t, 0.836, SGLangDefaultsPiecewise(Release{0, 5, 9}, 80*gib, 1, 1, 1, nil, on).MemFractionStatic)
	mla := SGLangDefaultsPiecewise(r10, 141*gib, 8, 1, 1, nil, SGLangPiecewiseMemory{On: true, MLA: true})
	assert.Equal(t, 0.887, mla.MemFractionStatic)
	assert.Equal(t, 2048, mla.PiecewiseMaxTokens)
	assert.Equal(t, 42, mla.PiecewiseSizes)
	assert.Equal(t, 0.844, SGLangDefaultsPiecewise(r10, 193273528320, 8, 1, 1, nil, SGLangPiecewiseMemory{On: true, MLA: true}).MemFractionStatic)
	small := SGLangDefaultsPiecewise(r10, 80*gib, 1, 1, 1, &SGLang{ChunkedPrefillSize: 2048}, on)
	assert.Equal(t, 42, small.PiecewiseSizes)
	assert.Equal(t, 0.875, small.MemFractionStatic)
	eagle := &SGLang{SpeculativeAlgorithm: SGLangSpecEAGLE}
	assert.Equal(t, 0.786, SGLangDefaultsPiecewise(r10, 80*gib, 1, 1, 1, eagle, SGLangPiecewiseMemory{}).MemFractionStatic)
	assert.Equal(t, 0.811, SGLangDefaults(Release{0, 5, 9}, 80*gib, 1, 1, 1, eagle).MemFractionStatic)
	ctx := SGLangPiecewiseMemory{On: true, ContextLength: 1000}
	c13 := SGLangDefaultsPiecewise(Release{0, 5, 13}, 80*gib, 1, 1, 1, nil, ctx)
	assert.Equal(t, 37, c13.PiecewiseSizes)
	assert.Equal(t, 1000, c13.PiecewiseMaxTokens)
	assert.Equal(t, 960, c13.PiecewiseLargest)
	assert.Equal(t, 58, SGLangDefaultsPiecewise(Release{0, 5, 12}, 80*gib, 1, 1, 1, nil, ctx).PiecewiseSizes)
	assert.Equal(t, 24, SGLangDefaults(r10, 24*gib, 1, 1, 1, nil).CUDAGraphMaxBS)
	assert.Equal(t, 8, SGLangDefaults(Release{0, 5, 9}, 24*gib, 1, 1, 1, nil).CUDAGraphMaxBS)
	assert.Equal(t, 8, SGLangDefaults(r10, 16*gib, 4, 1, 1, nil).CUDAGraphMaxBS)
	assert.Equal(t, 80, SGLangDefaults(Release{0, 5, 9}, 16*gib, 4, 1, 1, nil).CUDAGraphMaxBS)
}

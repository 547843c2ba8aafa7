package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const trtllmBase = `{"engine": {"model": "m", "system": "s", "backend": "trtllm"%s},
  "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 10, "osl": 2}, "load": {"mode": "concurrency", "concurrency": 1}}}`

func trtllmSpec(extra string) []byte {
	return []byte(strings.Replace(trtllmBase, "%s", extra, 1))
}

// Left out, every TensorRT-LLM option takes the release's default
// (TRTLLMDefaults, trtllm.go), and the canonical spec, which leaves out vLLM's
// engine.scheduler, decodes to the same spec.
func TestTRTLLMDefaults(t *testing.T) {
	s, err := Decode(trtllmSpec(""))
	require.NoError(t, err)
	want := &TRTLLM{MaxBatchSize: 2048, MaxNumTokens: 8192,
		SchedulerConfig: TRTLLMSchedulerConfig{CapacitySchedulerPolicy: "GUARANTEED_NO_EVICT", ContextChunkingPolicy: "FIRST_COME_FIRST_SERVED"},
		KVCacheConfig:   TRTLLMKVCacheConfig{FreeGPUMemoryFraction: 0.9, EnableBlockReuse: true, TokensPerBlock: 32},
		CUDAGraphConfig: &TRTLLMCUDAGraphConfig{MaxBatchSize: 128}, StreamInterval: 1,
		AttentionDPConfig: TRTLLMAttentionDPConfig{TimeoutIters: 50, BatchingWaitIters: 10}}
	assert.Equal(t, want, s.Engine.TRTLLM)

	// attention_dp_config: a 0 given stays (InferenceX's batching_wait_iters 0)
	s, err = Decode(trtllmSpec(`, "trtllm": {"attention_dp_config": {"enable_balance": true, "timeout_iters": 60, "batching_wait_iters": 0}}`))
	require.NoError(t, err)
	assert.Equal(t, TRTLLMAttentionDPConfig{EnableBalance: true, TimeoutIters: 60, BatchingWaitIters: 0}, s.Engine.TRTLLM.AttentionDPConfig)
	assert.NotContains(t, string(s.JSON()), `"scheduler":{`)
	again, err := Decode(s.JSON())
	require.NoError(t, err)
	assert.Equal(t, s, again)

	// a given engine.tokenization runs on trtllm-serve's one event loop unless
	// shared_event_loop says otherwise; none given, none made
	assert.Nil(t, s.Engine.Tokenization)
	s, err = Decode(trtllmSpec(`, "tokenization": {"send_ms": 0.2}`))
	require.NoError(t, err)
	assert.True(t, s.Engine.Tokenization.Shared())
	s, err = Decode(trtllmSpec(`, "tokenization": {"send_ms": 0.2, "shared_event_loop": false}`))
	require.NoError(t, err)
	assert.False(t, s.Engine.Tokenization.Shared())

	// cuda_graph_config: null turns CUDA graphs off, and stays off
	s, err = Decode(trtllmSpec(`, "trtllm": {"cuda_graph_config": null}`))
	require.NoError(t, err)
	assert.Nil(t, s.Engine.TRTLLM.CUDAGraphConfig)
	assert.Contains(t, string(s.JSON()), `"cuda_graph_config":null`)
	again, err = Decode(s.JSON())
	require.NoError(t, err)
	assert.Nil(t, again.Engine.TRTLLM.CUDAGraphConfig)

	// explicit batch_sizes set max_batch_size to their largest
	s, err = Decode(trtllmSpec(`, "trtllm": {"cuda_graph_config": {"batch_sizes": [4, 1, 2], "enable_padding": true}}`))
	require.NoError(t, err)
	assert.Equal(t, &TRTLLMCUDAGraphConfig{BatchSizes: []int{4, 1, 2}, MaxBatchSize: 4, EnablePadding: true}, s.Engine.TRTLLM.CUDAGraphConfig)

	// MTP: the acceptance rates default to AIConfigurator's [0.85, 0.3, 0,
	// 0, 0], one per draft (3 drafts: 0.85, 0.3, 0; 6: the five and 0); the
	// canonical form decodes to the same rates
	mtp := func(extra string) *TRTLLMSpeculativeConfig {
		s, err := Decode(trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", ` + extra + `}}`))
		require.NoError(t, err, extra)
		again, err := Decode(s.JSON())
		require.NoError(t, err, extra)
		assert.Equal(t, s.Engine.TRTLLM.SpeculativeConfig, again.Engine.TRTLLM.SpeculativeConfig, extra)
		return s.Engine.TRTLLM.SpeculativeConfig
	}
	sp := mtp(`"num_nextn_predict_layers": 3`)
	assert.Equal(t, &TRTLLMSpeculativeConfig{DecodingType: "MTP", NumNextnPredictLayers: 3, AcceptanceRates: []float64{0.85, 0.3, 0}}, sp)
	assert.Equal(t, []float64{0.85, 0.3, 0}, sp.Rates())
	assert.Equal(t, []float64{0.85}, mtp(`"num_nextn_predict_layers": 1`).Rates())
	assert.Equal(t, []float64{0.85, 0.3, 0, 0, 0, 0}, mtp(`"num_nextn_predict_layers": 6`).Rates())
	// rates given: fewer than the drafts leave the rest never accepted; one
	// acceptance_rate (0 included) is every draft's
	assert.Equal(t, []float64{0.9, 0.5, 0}, mtp(`"num_nextn_predict_layers": 3, "acceptance_rates": [0.9, 0.5]`).Rates())
	assert.Equal(t, []float64{0.7, 0.7, 0.7}, mtp(`"num_nextn_predict_layers": 3, "acceptance_rate": 0.7`).Rates())
	assert.Equal(t, []float64{0, 0}, mtp(`"num_nextn_predict_layers": 2, "acceptance_rate": 0`).Rates())

	// a release before 1.0: no CUDA graphs by default; before 0.20 no overlap scheduler
	s, err = Decode(trtllmSpec(`, "backend_version": "0.19.0"`))
	require.NoError(t, err)
	assert.Nil(t, s.Engine.TRTLLM.CUDAGraphConfig)
	assert.True(t, s.Engine.TRTLLM.DisableOverlapScheduler)

	// source aic reads the release's tables, named as given (1.0.0rc3)
	s, err = Decode(trtllmSpec(`, "backend_version": "1.0.0rc3", "perf": {"source": "aic", "database": "d"}`))
	require.NoError(t, err)
	assert.Equal(t, "1.0.0rc3", s.Engine.Perf.Source.(AICPerf).BackendVersion)
}

// engine.scheduler is vLLM's: refused with TensorRT-LLM, naming where the
// setting goes; engine.trtllm is refused with vLLM; 0 is refused where it
// means "left out".
func TestTRTLLMRefusals(t *testing.T) {
	for _, c := range []struct {
		spec       []byte
		field, msg string
	}{
		{trtllmSpec(`, "scheduler": {"block_size": 32}`), "engine.scheduler.block_size", "kv_cache_config.tokens_per_block"},
		{[]byte(strings.Replace(string(trtllmSpec(`, "trtllm": {}`)), `"backend": "trtllm"`, `"backend": "vllm"`, 1)),
			"engine.trtllm", "set engine.backend: trtllm, or give vLLM's engine arguments in engine.scheduler"},
		{trtllmSpec(`, "trtllm": {"max_seq_len": 0}`), "engine.trtllm.max_seq_len", "must be ≥ 1"},
		{[]byte(strings.Replace(string(trtllmSpec(`, "workers": {"aggregated": {"trtllm": {}}}`)), `"backend": "trtllm"`, `"backend": "vllm"`, 1)),
			"engine.workers.aggregated.trtllm", "set engine.backend: trtllm"},
		{trtllmSpec(`, "workers": {"aggregated": {"trtllm": {"max_num_tokens": 0}}}`),
			"engine.workers.aggregated.trtllm.max_num_tokens", "must be ≥ 1"},
		{trtllmSpec(`, "workers": {"aggregated": {"trtllm": {"kv_cache_config": {"max_tokens": 0}}}}`),
			"engine.workers.aggregated.trtllm.kv_cache_config.max_tokens", "must be ≥ 1"},
		{trtllmSpec(`, "trtllm": {"kv_cache_config": {"max_attention_window": [128, 0]}}`),
			"engine.trtllm.kv_cache_config.max_attention_window[1]", "must be ≥ 1, got 0"},
		{trtllmSpec(`, "trtllm": {"kv_cache_config": {"max_attention_window": [128, 1073741825]}}`),
			"engine.trtllm.kv_cache_config.max_attention_window[1]", "must be ≤ 1073741824"},
		{trtllmSpec(`, "trtllm": {"cuda_graph_config": {"batch_sizes": [1, 8], "max_batch_size": 16}}`),
			"engine.trtllm.cuda_graph_config.max_batch_size", "largest of batch_sizes (8)"},
		{trtllmSpec(`, "trtllm": {"cuda_graph_config": {"batch_sizes": [1, 0]}}`),
			"engine.trtllm.cuda_graph_config.batch_sizes[1]", "must be ≥ 1"},
		{trtllmSpec(`, "trtllm": {"cuda_graph_config": {"batch_sizes": [-5]}}`),
			"engine.trtllm.cuda_graph_config.batch_sizes[0]", "must be ≥ 1, got -5"},
		{trtllmSpec(`, "trtllm": {"cuda_graph_config": {"batch_sizes": [8, -5], "enable_padding": true}}`),
			"engine.trtllm.cuda_graph_config.batch_sizes[1]", "must be ≥ 1, got -5"},
		{[]byte(strings.Replace(string(trtllmSpec(`, "trtllm": {}`)), `"backend": "trtllm"`, `"backend": "sglang"`, 1)),
			"engine.trtllm", "or give SGLang's server arguments in engine.sglang"},
		{trtllmSpec(`, "trtllm": {"cuda_graph_config": {"batch_sizes": 8}}`),
			"engine.trtllm.cuda_graph_config.batch_sizes", "expected a list"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "Eagle", "num_nextn_predict_layers": 3}}`),
			"engine.trtllm.speculative_config.decoding_type", "only MTP"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2, "acceptance_rates": [0.9, 0.5, 0.2]}}`),
			"engine.trtllm.speculative_config.acceptance_rates", "has 3 rates, more than the 2 drafts"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2, "acceptance_rates": [0.9, 1.2]}}`),
			"engine.trtllm.speculative_config.acceptance_rates[1]", "1.2"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2, "acceptance_rates": [-0.1]}}`),
			"engine.trtllm.speculative_config.acceptance_rates[0]", "-0.1"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2, "acceptance_rates": []}}`),
			"engine.trtllm.speculative_config.acceptance_rates", "is empty"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2, "acceptance_rates": [0.9], "acceptance_rate": 0.5}}`),
			"engine.trtllm.speculative_config.acceptance_rates", "not both"},
		{trtllmSpec(`, "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2, "acceptance_rates": 0.9}}`),
			"engine.trtllm.speculative_config.acceptance_rates", "expected a list"},
		{trtllmSpec(`, "trtllm": {"batch_wait_max_tokens_ratio": 1.5}`), "engine.trtllm.batch_wait_max_tokens_ratio", "1.5"},
		{trtllmSpec(`, "trtllm": {"batch_wait_timeout_iters": -1}`), "engine.trtllm.batch_wait_timeout_iters", "-1"},
		{trtllmSpec(`, "trtllm": {"kv_cache_config": {"tokens_per_block": 48}}`), "engine.trtllm.kv_cache_config.tokens_per_block", "power of two"},
		{trtllmSpec(`, "trtllm": {"scheduler_config": {"capacity_scheduler_policy": "STATIC_BATCH"}}`),
			"engine.trtllm.scheduler_config.capacity_scheduler_policy", "not modelled"},
		{trtllmSpec(`, "trtllm": {"enable_attention_dp": true}, "workers": {"aggregated": {"tp": 4, "data_parallel_size": 2}}`),
			"engine.workers.aggregated.data_parallel_size", "enable_attention_dp"},
		{trtllmSpec(`, "trtllm": {"force_alltoall_method": "DeepEP"}`), "engine.trtllm.force_alltoall_method", "moe_config.backend WIDEEP"},
		{trtllmSpec(`, "trtllm": {"moe_config": {"backend": "WIDEEP"}, "force_alltoall_method": "MNNVL"}`),
			"engine.trtllm.force_alltoall_method", "MNNVL, GB200's multi-node NVLink all-to-all, is not modelled"},
		{trtllmSpec(`, "trtllm": {"moe_config": {"backend": "WideEP"}}`), "engine.trtllm.moe_config.backend", "one of CUTLASS"},
		// WideEPMoE asserts attention DP (fused_moe_wide_ep.py: "Attention DP
		// should be used with WideEP"): TensorRT-LLM does not start without it
		{trtllmSpec(`, "trtllm": {"moe_config": {"backend": "WIDEEP"}}`), "engine.trtllm.moe_config.backend", "enable_attention_dp"},
		{trtllmSpec(`, "trtllm": {"moe_config": {"backend": "WIDEEP"}, "force_alltoall_method": "DeepEP"}`),
			"engine.trtllm.moe_config.backend", "Attention DP should be used with WideEP"},
		{trtllmSpec(`, "trtllm": {"moe_config": {"max_num_tokens": -1}}`), "engine.trtllm.moe_config.max_num_tokens", "-1"},
	} {
		_, err := Decode(c.spec)
		var ce *Error
		if assert.ErrorAs(t, err, &ce, string(c.spec)) {
			assert.Equal(t, c.field, ce.Field)
			assert.Contains(t, ce.Msg, c.msg)
		}
	}
}

// TestTRTLLMA2ABackend: WideEPMoE.select_alltoall_method_type as modelled
// (TensorRT-LLM 1.2, fused_moe_wide_ep.py): the forced method with
// attention DP and WIDEEP; nothing else a spec can say enables an
// all-to-all (MNNVL needs a multi-node NVLink domain, DeepEP unforced
// TRTLLM_CAN_USE_DEEP_EP=1). moe_max_num_tokens: moe_config.max_num_tokens,
// else max_num_tokens × the world size.
func TestTRTLLMA2ABackend(t *testing.T) {
	wide := TRTLLMMoEConfig{Backend: TRTLLMMoEWideEP}
	for _, c := range []struct {
		name string
		t    *TRTLLM
		want string
	}{
		{"forced DeepEP", &TRTLLM{EnableAttentionDP: true, MoEConfig: wide, ForceAlltoallMethod: TRTLLMAlltoallDeepEP}, All2AllDeepEPHT},
		{"forced low latency", &TRTLLM{EnableAttentionDP: true, MoEConfig: wide, ForceAlltoallMethod: TRTLLMAlltoallDeepEPLowLatency}, All2AllDeepEPLL},
		{"forced off", &TRTLLM{EnableAttentionDP: true, MoEConfig: wide, ForceAlltoallMethod: TRTLLMAlltoallNotEnabled}, ""},
		{"unforced", &TRTLLM{EnableAttentionDP: true, MoEConfig: wide}, ""},
		{"no attention DP", &TRTLLM{MoEConfig: wide, ForceAlltoallMethod: TRTLLMAlltoallDeepEP}, ""},
		{"CUTLASS", &TRTLLM{EnableAttentionDP: true}, ""},
		{"no block", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, c.t.A2ABackend()) })
	}
	tt := &TRTLLM{MaxNumTokens: 256}
	assert.Equal(t, 4096, tt.MoEMaxTokens(16)) // 256 × 16
	tt.MoEConfig.MaxNumTokens = 16384
	assert.Equal(t, 16384, tt.MoEMaxTokens(16))
}

// The releases after 1.2.0rc6.post1 whose defaults were read (docs/trtllm.md,
// "Defaults by release") set every default the simulation prices as 1.2.0rc6.post1
// does: 1.3.0rc27's and 1.4.0rc4's KvCacheConfig (free_gpu_memory_fraction 0.9,
// enable_block_reuse true, tokens_per_block 32), DecodeCudaGraphConfig
// (max_batch_size 128 when neither it nor batch_sizes is given, enable_padding
// false), SchedulerConfig (GUARANTEED_NO_EVICT), AttentionDpConfig (50, 10) and
// TorchLlmArgs (enable_chunked_prefill false) reference pages: so a spec naming
// one of them decodes to the engine.trtllm block of the default release.
func TestTRTLLMDefaultsOfLaterReleases(t *testing.T) {
	base, err := Decode(trtllmSpec(""))
	require.NoError(t, err)
	for _, v := range []string{"1.3.0rc27", "1.4.0rc4"} {
		s, err := Decode(trtllmSpec(`, "backend_version": "` + v + `"`))
		require.NoError(t, err, v)
		assert.Equal(t, base.Engine.TRTLLM, s.Engine.TRTLLM, v)
		assert.Equal(t, TRTLLMVersionDefaults{Release: s.Engine.TRTLLMRelease(), Overlap: true, CUDAGraphs: true},
			TRTLLMDefaults(s.Engine.TRTLLMRelease()), v)
	}
}

// moe_config.backend AUTO (MoeConfig's default in the 1.3.0 candidates) and the
// modules 1.3.0rc27 adds are taken and priced as CUTLASS's: with attention DP
// the tokens are all-gathered and reduce-scattered (A2ABackend ""), as for
// CUTLASS; WIDEEP forced to DeepEP stays an all-to-all.
func TestTRTLLMMoEBackendAuto(t *testing.T) {
	for _, b := range []string{"AUTO", "DENSEGEMM", "MARLIN", "MEGAMOE_DEEPGEMM", "MEGAMOE_CUTEDSL"} {
		s, err := Decode(trtllmSpec(`, "backend_version": "1.3.0rc27", "trtllm": {"enable_attention_dp": true, "moe_config": {"backend": "` + b + `"}}`))
		require.NoError(t, err, b)
		assert.Equal(t, b, s.Engine.TRTLLM.MoEConfig.Backend)
		assert.Equal(t, "", s.Engine.TRTLLM.A2ABackend(), b)
	}
	_, err := Decode(trtllmSpec(`, "trtllm": {"moe_config": {"backend": "auto"}}`))
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "engine.trtllm.moe_config.backend", ce.Field)
	assert.Contains(t, ce.Error(), "AUTO")
}

package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const aicTraffic = `
traffic:
  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}
  load: {mode: concurrency, concurrency: 4}
`

// TestPerfAICAndQuantization covers the aic and quantization spec fields: source aic needs a
// database; backend_version defaults to DefaultAICBackendVersion; a given
// quantization block gets DefaultKVCacheDtype; errors carry dotted paths.
func TestPerfAICAndQuantization(t *testing.T) {
	s, err := DecodeYAML([]byte(`engine: {model: m, system: h100_sxm, perf: {source: aic, database: /db},
  quantization: {weights: fp8}}` + aicTraffic))
	require.NoError(t, err)
	assert.Equal(t, DefaultAICPerf("/db"), s.Engine.Perf.Source, "every default filled: version and both overheads")
	assert.Equal(t, "fp8", s.Engine.Quantization.Weights)
	assert.Equal(t, DefaultKVCacheDtype, s.Engine.Quantization.KVCache)

	s, err = DecodeYAML([]byte(`engine: {model: m, system: h100_sxm}` + aicTraffic))
	require.NoError(t, err)
	assert.Nil(t, s.Engine.Quantization, "absent stays absent (checkpoint weights, bf16 KV)")

	bad := []struct{ engine, field, msg string }{
		{`{model: m, system: h100_sxm, perf: {source: aic}}`, "engine.perf.database", "is required"},
		{`{model: m, system: h100_sxm, perf: {source: aic, database: /db, backend_version: latest}}`, "engine.perf.backend_version", "not a version"},
		{`{model: m, system: h100_sxm, perf: {source: aic, database: /db, compute_efficiency: 0.5}}`, "engine.perf.compute_efficiency", "belongs to source roofline, not aic"},
		{`{model: m, system: h100_sxm, perf: {source: roofline, database: /db}}`, "engine.perf.database", "belongs to source aic, not roofline"},
		{`{model: m, system: h100_sxm, perf: {source: aic, database: /db, pass_overhead_us: -1}}`, "engine.perf.pass_overhead_us", "≥ 0"},
		{`{model: m, system: h100_sxm, perf: {source: aic, database: /db, per_sequence_overhead_us: -3}}`, "engine.perf.per_sequence_overhead_us", "≥ 0"},
		{`{model: m, system: h100_sxm, perf: {source: roofline, per_sequence_overhead_us: -3}}`, "engine.perf.per_sequence_overhead_us", "≥ 0"},
		{`{model: m, system: h100_sxm, perf: {source: linear, base_ms: 1, per_prefill_token_ms: 0, per_decode_seq_ms: 0, per_sequence_overhead_us: 3}}`, "engine.perf.per_sequence_overhead_us", "belongs to source roofline or aic, not linear"},
		{`{model: m, system: h100_sxm, perf: {source: roofline, layer_latency_us: -1}}`, "engine.perf.layer_latency_us", "≥ 0"},
		{`{model: m, system: h100_sxm, perf: {source: aic, database: /db, layer_latency_us: 40}}`, "engine.perf.layer_latency_us", "belongs to source roofline, not aic"},
		{`{model: m, system: h100_sxm, perf: {source: linear, base_ms: 1, per_prefill_token_ms: 0, per_decode_seq_ms: 0, layer_latency_us: 3}}`, "engine.perf.layer_latency_us", "belongs to source roofline, not linear"},
		{`{model: m, system: h100_sxm, perf: {source: linear, base_ms: 1, per_decode_seq_ms: 0}}`, "engine.perf.per_prefill_token_ms", "is required for source linear"},
		{`{model: m, system: h100_sxm, perf: {source: tpu}}`, "engine.perf.source", `"tpu" is not supported (one of roofline, aic, linear)`},
		{`{model: m, system: h100_sxm, perf: {compute_efficiency: 1.5}}`, "engine.perf.compute_efficiency", "must be in (0, 1]"},
		{`{model: m, system: h100_sxm, quantization: {weights: int4}}`, "engine.quantization.weights", "int4"},
		{`{model: m, system: h100_sxm, quantization: {kv_cache: fp8_block}}`, "engine.quantization.kv_cache",
			`"fp8_block" is not supported (one of auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, bf16)`},
		{`{model: m, system: h100_sxm, quantization: {kv_cache: fp8_inc}}`, "engine.quantization.kv_cache", "for Intel Gaudi (HPU) accelerators"},
		{`{model: m, system: h100_sxm, quantization: {weights: fp8_e5m2}}`, "engine.quantization.weights",
			`"fp8_e5m2" is not supported (one of bfloat16, fp8, fp8_block, nvfp4, bf16)`},
	}
	for _, tc := range bad {
		t.Run(tc.field, func(t *testing.T) {
			_, err := DecodeYAML([]byte("engine: " + tc.engine + aicTraffic))
			var ce *Error
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tc.field, ce.Field)
			assert.True(t, strings.Contains(ce.Msg, tc.msg), ce.Msg)
		})
	}
}

package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const trafficSynth = "traffic: {source: {type: synthetic, num_requests: 1, isl: 8, osl: 2}, load: {mode: concurrency, concurrency: 1}}\n"

// Placement kv_router takes Dynamo's defaults for what its kv_router block
// leaves out (weight 1.0, temperature 0, no event lag), and only it takes the
// block; another placement's spec stays as it was (no kv_router key).
func TestKVRouterDefaultsAndPlace(t *testing.T) {
	s, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, workers: {aggregated: {count: 4, placement: kv_router}}}\n" + trafficSynth))
	require.NoError(t, err)
	assert.Equal(t, &KVRouter{KVOverlapScoreWeight: 1, RouterTemperature: 0, KVEventLagMs: 0}, s.Engine.Workers.Aggregated.KVRouter)
	assert.Contains(t, string(s.JSON()), `"placement":"kv_router","kv_router":{"kv_overlap_score_weight":1,"router_temperature":0,"kv_event_lag_ms":0}`)

	s, err = DecodeYAML([]byte("engine: {model: m, system: h100_sxm, workers: {aggregated: {count: 4, placement: kv_router, kv_router: {router_temperature: 0.5, kv_event_lag_ms: 20}}}}\n" + trafficSynth))
	require.NoError(t, err)
	assert.Equal(t, &KVRouter{KVOverlapScoreWeight: 1, RouterTemperature: 0.5, KVEventLagMs: 20}, s.Engine.Workers.Aggregated.KVRouter)

	s, err = DecodeYAML([]byte("engine: {model: m, system: h100_sxm, workers: {aggregated: {count: 4, placement: prefix_affinity}}}\n" + trafficSynth))
	require.NoError(t, err)
	assert.Nil(t, s.Engine.Workers.Aggregated.KVRouter)
	assert.NotContains(t, string(s.JSON()), "kv_router")

	e := decodeErr(t, "engine: {model: m, system: h100_sxm, workers: {aggregated: {count: 4, kv_router: {kv_event_lag_ms: 5}}}}\n"+trafficSynth)
	assert.Equal(t, "engine.workers.aggregated.kv_router", e.Field)
	assert.Contains(t, e.Error(), "belongs to placement kv_router (placement is round_robin)")
	e = decodeErr(t, "engine: {model: m, system: h100_sxm, workers: {disaggregated: {prefill: {count: 1}, decode: {count: 2, placement: kv_router, kv_router: {kv_overlap_score_weight: -1}}, kv_transfer: {bandwidth_gb_per_s: 10, latency_ms: 1}}}}\n"+trafficSynth)
	assert.Equal(t, "engine.workers.disaggregated.decode.kv_router.kv_overlap_score_weight", e.Field)
}

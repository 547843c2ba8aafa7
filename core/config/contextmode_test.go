package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traffic.source.context_mode takes AIPerf's two names, is left out of the
// canonical spec when absent, and a third value names the field.
func TestMooncakeContextMode(t *testing.T) {
	yml := func(mode string) []byte {
		return []byte(engineM + "traffic: {source: {type: mooncake, path: /t.jsonl" + mode + "}, load: {mode: trace}}\n")
	}
	s, err := DecodeYAML(yml(""))
	require.NoError(t, err)
	assert.False(t, s.Traffic.Source.Type.(MooncakeSource).Deltas())
	assert.NotContains(t, string(s.JSON()), "context_mode")
	s, err = DecodeYAML(yml(", context_mode: deltas_without_responses"))
	require.NoError(t, err)
	assert.True(t, s.Traffic.Source.Type.(MooncakeSource).Deltas())
	s, err = DecodeYAML(yml(", context_mode: message_array_with_responses"))
	require.NoError(t, err)
	assert.False(t, s.Traffic.Source.Type.(MooncakeSource).Deltas())
	e := decodeErr(t, string(yml(", context_mode: deltas")))
	assert.Equal(t, "traffic.source.context_mode", e.Field)
	assert.Contains(t, e.Error(), "deltas_without_responses, message_array_with_responses")
}

// A null for an enumerated string is the field left out: context_mode's
// default (message_array_with_responses, absent from the canonical spec),
// the default of any such field (traffic.load.arrival: poisson; a stage's
// arrival inside a list), and a required one's refusal; a null for a string
// without a list of values is still an error naming it.
func TestNullEnumIsLeftOut(t *testing.T) {
	src := "traffic: {source: {type: mooncake, path: /t.jsonl%s}, load: {mode: trace}}\n"
	omitted, err := DecodeYAML([]byte(engineM + fmt.Sprintf(src, "")))
	require.NoError(t, err)
	null, err := DecodeYAML([]byte(engineM + fmt.Sprintf(src, ", context_mode: null")))
	require.NoError(t, err)
	assert.False(t, null.Traffic.Source.Type.(MooncakeSource).Deltas())
	assert.Equal(t, string(omitted.JSON()), string(null.JSON()))
	assert.NotContains(t, string(null.JSON()), "context_mode")
	// JSON's null, ~ in YAML
	js, err := Decode([]byte(`{"engine": {"model": "m", "system": "h100_sxm"}, "traffic": {"source": {"type": "mooncake", "path": "/t.jsonl", "context_mode": null}, "load": {"mode": "trace"}}}`))
	require.NoError(t, err)
	assert.Equal(t, string(omitted.JSON()), string(js.JSON()))
	tilde, err := DecodeYAML([]byte(engineM + fmt.Sprintf(src, ", context_mode: ~")))
	require.NoError(t, err)
	assert.Equal(t, string(omitted.JSON()), string(tilde.JSON()))

	synth := "traffic: {source: {type: synthetic, num_requests: 4, isl: 8, osl: 2}, load: {mode: rate, rate_rps: 2%s}}\n"
	rate, err := DecodeYAML([]byte(engineM + fmt.Sprintf(synth, ", arrival: null")))
	require.NoError(t, err)
	assert.Equal(t, ArrivalPoisson, rate.Traffic.Load.Mode.(RateLoad).Arrival)
	// an open-loop stage's arrival has no default: null is refused as leaving it out is
	stage := "traffic: {source: {type: synthetic, num_requests: 4, isl: 8, osl: 2}, load: {mode: stages, stages: [{requests: 4, rate_rps: 2%s}]}}\n"
	left := decodeErr(t, engineM+fmt.Sprintf(stage, ""))
	assert.Equal(t, "traffic.load.stages[0].arrival", left.Field)
	assert.Equal(t, left, decodeErr(t, engineM+fmt.Sprintf(stage, ", arrival: null")))

	e := decodeErr(t, engineM+"traffic: {source: {type: mooncake, path: null}, load: {mode: trace}}\n")
	assert.Equal(t, "traffic.source.path", e.Field)
	e = decodeErr(t, "engine: {model: null, system: h100_sxm}\n"+fmt.Sprintf(src, ""))
	assert.Equal(t, "engine.model", e.Field)
}

// A null is the field left out in a discriminated block too: a field of
// another variant that takes a null as left out (context_mode on a synthetic
// source, arrival with mode concurrency or trace) decodes as if absent, and a
// null key is the key left out (engine.perf.source: roofline, its default;
// traffic.source.type has none: required). A non-null field of another
// variant, or a null for one that takes no null (path), is still refused.
func TestNullInAUnionIsLeftOut(t *testing.T) {
	same := func(t *testing.T, omitted, withNull string) {
		t.Helper()
		a, err := DecodeYAML([]byte(omitted))
		require.NoError(t, err)
		b, err := DecodeYAML([]byte(withNull))
		require.NoError(t, err, withNull)
		assert.Equal(t, string(a.JSON()), string(b.JSON()), withNull)
	}
	synth := "traffic: {source: {type: synthetic, num_requests: 4, isl: 8, osl: 2%s}, load: {mode: %s}}\n"
	synth = engineM + synth
	same(t, fmt.Sprintf(synth, "", "rate, rate_rps: 2"), fmt.Sprintf(synth, ", context_mode: null", "rate, rate_rps: 2"))
	same(t, fmt.Sprintf(synth, "", "concurrency, concurrency: 2"), fmt.Sprintf(synth, "", "concurrency, concurrency: 2, arrival: null"))
	trace := engineM + "traffic: {source: {type: mooncake, path: /t.jsonl}, load: {mode: trace%s}}\n"
	same(t, fmt.Sprintf(trace, ""), fmt.Sprintf(trace, ", arrival: null"))
	rate := fmt.Sprintf(synth, "", "rate, rate_rps: 2")
	perf := func(p string) string {
		return strings.Replace(rate, "engine: {", "engine: {perf: "+p+", ", 1)
	}
	require.Contains(t, perf("{}"), "perf: {}", "engineM is a flow mapping")
	same(t, rate, perf("{source: null}"))
	p, err := DecodeYAML([]byte(perf("{source: null, compute_efficiency: 0.5}")))
	require.NoError(t, err)
	assert.Equal(t, 0.5, p.Engine.Perf.Source.(RooflinePerf).ComputeEfficiency)

	e := decodeErr(t, engineM+"traffic: {source: {type: null, num_requests: 4, isl: 8, osl: 2}, load: {mode: rate, rate_rps: 2}}\n")
	assert.Equal(t, "traffic.source.type", e.Field)
	assert.Contains(t, e.Msg, "is required")
	e = decodeErr(t, fmt.Sprintf(synth, ", context_mode: deltas_without_responses", "rate, rate_rps: 2"))
	assert.Equal(t, "traffic.source.context_mode", e.Field)
	assert.Contains(t, e.Msg, "belongs to type mooncake, not synthetic")
	e = decodeErr(t, fmt.Sprintf(synth, ", path: null", "rate, rate_rps: 2"))
	assert.Equal(t, "traffic.source.path", e.Field)
	assert.Contains(t, e.Msg, "belongs to type")
	e = decodeErr(t, perf("{source: null, base_ms: 1}"))
	assert.Equal(t, "engine.perf.base_ms", e.Field)
	assert.Contains(t, e.Msg, "belongs to source linear, not roofline")
}

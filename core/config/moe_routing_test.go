package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMoERoutingField: engine.perf.moe_routing (source aic) takes balanced,
// power_law_1.01, power_law_1.2 and auto; absent, Routing() is
// DefaultMoERouting and the canonical spec leaves it out (Normalize does
// not fill it); any other value, or the field under another source, is
// refused at its dotted path.
func TestMoERoutingField(t *testing.T) {
	for _, v := range []string{"balanced", "power_law_1.01", "power_law_1.2", "auto"} {
		s, err := DecodeYAML([]byte(`engine: {model: m, system: h100_sxm, perf: {source: aic, database: /db, moe_routing: ` + v + `}}` + aicTraffic))
		require.NoError(t, err, v)
		assert.Equal(t, v, s.Engine.Perf.Source.(AICPerf).MoERouting)
		assert.Equal(t, v, s.Engine.Perf.Source.(AICPerf).Routing())
	}
	s, err := DecodeYAML([]byte(`engine: {model: m, system: h100_sxm, perf: {source: aic, database: /db}}` + aicTraffic))
	require.NoError(t, err)
	p := s.Engine.Perf.Source.(AICPerf)
	assert.Equal(t, "", p.MoERouting, "not filled in")
	assert.Equal(t, DefaultMoERouting, p.Routing())
	assert.Equal(t, MoERoutingAuto, DefaultMoERouting, "the default chosen on the MoE dev rows (docs/moe.md)")

	bad := []struct{ engine, msg string }{
		{`{model: m, system: h100_sxm, perf: {source: aic, database: /db, moe_routing: zipf}}`,
			`"zipf" is not supported (one of auto, balanced, power_law_1.01, power_law_1.2)`},
		{`{model: m, system: h100_sxm, perf: {source: roofline, moe_routing: balanced}}`, "belongs to source aic, not roofline"},
	}
	for _, tc := range bad {
		_, err := DecodeYAML([]byte("engine: " + tc.engine + aicTraffic))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, "engine.perf.moe_routing", ce.Field)
		assert.True(t, strings.Contains(ce.Msg, tc.msg), ce.Msg)
	}
	assert.Equal(t, []string{"auto", "balanced", "power_law_1.01", "power_law_1.2"}, Enums()["engine.perf.moe_routing"])
}

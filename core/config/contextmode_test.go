package config

import (
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

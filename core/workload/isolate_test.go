package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// Two dataset entries, sequential, six requests of which the first three are
// the warm-up: entries 0 1 0 | 1 0 1. The warm-up's three lose their ids;
// the measured three keep [e] (entry 1, 0, 1), so measured request 4
// (entry 0) finds nothing of the warm-up's entry-0 requests 0 and 2.
func TestIsolateLeading_WarmupPromptsOwnNoBlocks(t *testing.T) {
	spec := config.SyntheticSource{NumRequests: 6, ISL: fixedLen(64), OSL: fixedLen(8),
		Dataset: &config.Dataset{Entries: 2, Sampling: config.SamplingSequential}}
	plain := synthAll(t, spec, NewStreams(7))
	src, err := NewSynthetic(spec, NewStreams(7))
	require.NoError(t, err)
	got, err := drain(IsolateLeading(src, 3))
	require.NoError(t, err)
	require.Len(t, got, 6)
	assert.Equal(t, plain[0].HashIDs, plain[2].HashIDs, "entry 0 twice in the warm-up: same prompt without isolation")
	assert.Equal(t, plain[0].HashIDs, plain[4].HashIDs, "and the same as measured request 4's")
	for i, r := range got {
		assert.Equal(t, int64(i), r.ID)
		assert.Equal(t, 64, r.InputTokens)
		assert.Equal(t, 8, r.OutputTokens)
		if i < 3 {
			assert.Nil(t, r.HashIDs, "warm-up request %d", i)
			assert.Zero(t, r.HashBlockTokens)
		} else {
			assert.Equal(t, plain[i].HashIDs, r.HashIDs, "measured request %d keeps its entry's ids", i)
		}
	}
}

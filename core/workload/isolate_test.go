package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// Two dataset entries, sequential, six requests of which the first three are
// the warm-up: entries 0 1 0 | 1 0 1. The warm-up's three move to ids of
// their own (2^62 | e): requests 0 and 2 (entry 0) still share theirs, and
// the measured three keep [e], so measured request 4 (entry 0) finds nothing
// of the warm-up's entry-0 prompts.
func TestIsolateLeading_WarmupPromptsOwnNoBlocks(t *testing.T) {
	spec := config.SyntheticSource{NumRequests: 6, ISL: fixedLen(64), OSL: fixedLen(8),
		Dataset: &config.Dataset{Entries: 2, Sampling: config.SamplingSequential}}
	plain := synthAll(t, spec, NewStreams(7))
	src, err := NewSynthetic(spec, NewStreams(7))
	require.NoError(t, err)
	got, err := drain(IsolateLeading(src, 3))
	require.NoError(t, err)
	require.Len(t, got, 6)
	assert.Equal(t, []int64{0}, plain[0].HashIDs)
	assert.Equal(t, []int64{0}, plain[4].HashIDs, "entry 0 again, measured")
	for i, r := range got {
		assert.Equal(t, int64(i), r.ID)
		assert.Equal(t, 64, r.InputTokens)
		assert.Equal(t, 8, r.OutputTokens)
		assert.Equal(t, plain[i].HashBlockTokens, r.HashBlockTokens)
		if i < 3 {
			assert.Equal(t, []int64{1<<62 | plain[i].HashIDs[0]}, r.HashIDs, "warm-up request %d", i)
		} else {
			assert.Equal(t, plain[i].HashIDs, r.HashIDs, "measured request %d keeps its entry's ids", i)
		}
	}
	assert.Equal(t, got[0].HashIDs, got[2].HashIDs, "two warm-ups of entry 0 share their prompt")
	assert.NotEqual(t, got[0].HashIDs, got[4].HashIDs)
}

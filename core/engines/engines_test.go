package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine/trtllm"
)

// TestEveryBackendHasAFamily: each engine.backend value config accepts has a
// family of that name, and the table holds no other.
func TestEveryBackendHasAFamily(t *testing.T) {
	backends := config.Enums()["engine.backend"]
	require.NotEmpty(t, backends)
	for _, b := range backends {
		f, err := For(b)
		if assert.NoError(t, err, b) {
			assert.Equal(t, b, f.Name())
		}
	}
	assert.Len(t, families, len(backends))
	_, err := For("tgi")
	assert.EqualError(t, err, `engine.backend "tgi" has no engine family`)
}

// cuda_graph_config's captured sizes: an explicit batch_sizes list is taken
// (sorted, duplicates dropped), else the list TensorRT-LLM generates for
// max_batch_size (with padding: 1, 2, 4, 8, 16, 24, 32 for 32).
func TestTRTLLMCUDAGraphSizes(t *testing.T) {
	for _, c := range []struct {
		graphs string
		want   []int
	}{
		{`{"batch_sizes": [64, 8, 8], "enable_padding": true}`, []int{8, 64}},
		{`{"max_batch_size": 32, "enable_padding": true}`, []int{1, 2, 4, 8, 16, 24, 32}},
	} {
		s, err := config.Decode([]byte(`{"engine": {"model": "m", "system": "s", "backend": "trtllm",
		  "trtllm": {"cuda_graph_config": ` + c.graphs + `}},
		  "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 10, "osl": 2},
		  "load": {"mode": "concurrency", "concurrency": 1}}}`))
		require.NoError(t, err, c.graphs)
		o := Options(&s.Engine, s.Engine.Workers.Aggregated).(trtllm.Options)
		assert.Equal(t, c.want, o.CUDAGraphBatchSizes, c.graphs)
		assert.True(t, o.CUDAGraphPadding)
	}
}

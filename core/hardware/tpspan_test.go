package hardware

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTPSpanError: a TP group within one node always passes; across nodes of
// 8 GPUs it must fill whole nodes (16 does, 12 does not) and needs a network
// bandwidth between them.
func TestTPSpanError(t *testing.T) {
	s := &System{Name: "x", GPUsPerNode: 8, InterNodeBW: 50e9}
	require.NoError(t, s.TPSpanError(8))
	require.NoError(t, s.TPSpanError(16))
	require.ErrorContains(t, s.TPSpanError(12), "TP 12 spans nodes of 8 GPUs (x) without filling them")
	s.InterNodeBW = 0
	require.NoError(t, s.TPSpanError(4))
	require.ErrorContains(t, s.TPSpanError(16), "TP 16 spans 2 nodes of system x, which gives no network bandwidth (node.inter_node_bw)")
	require.NoError(t, (&System{}).TPSpanError(64), "no node size: one node")
}

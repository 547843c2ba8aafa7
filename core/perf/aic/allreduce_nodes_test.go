package aic

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/hardware"
)

// TestMultiNodeAllReduceByHand prices the all-reduce of TP 16 over two nodes
// of 8 GPUs with no NCCL table, so every phase is a ring plus the 10 µs
// stand-in latency (ncclFallback). e = 8·2^20 bf16 elements (16 MiB):
//   - reduce-scatter within a node: (8−1)/8 · 2·e B = 14,680,064 B at
//     400 GB/s = 36.70016 µs, plus 10 µs; the all-gather the same;
//   - the network all-reduce of each GPU's 1/8 share over 2 nodes, a ring
//     all-reduce (two phases): 2·(2−1)/2 · 2·e/8 B = 2,097,152 B at
//     50 GB/s = 41.94304 µs, plus 10 µs.
//
// Total 3·10 + 2·36.70016 + 41.94304 = 145.34336 µs.
func TestMultiNodeAllReduceByHand(t *testing.T) {
	sys := &hardware.System{Name: "toy", GPUsPerNode: 8, IntraNodeBW: 400e9, InterNodeBW: 50e9}
	c, notes, err := newMultiNodeAllReduce(nil, sys, 16)
	require.NoError(t, err)
	assert.InEpsilon(t, 145.34336e-6, c.Seconds(8<<20), 1e-9)
	assert.Zero(t, c.Seconds(0))
	require.Len(t, notes, 3) // reduce-scatter and all-gather not measured, and the span
	assert.Contains(t, notes[2], "TP 16 spans 2 nodes")

	// Four nodes: the network ring moves 2·(4−1)/4 of the share,
	// 3,145,728 B = 62.91456 µs; the node's phases are unchanged.
	c4, _, err := newMultiNodeAllReduce(nil, sys, 32)
	require.NoError(t, err)
	assert.InEpsilon(t, (30+2*36.70016+62.91456)*1e-6, c4.Seconds(8<<20), 1e-9)

	_, _, err = newMultiNodeAllReduce(nil, sys, 12)
	assert.ErrorContains(t, err, "12")
}

// TestNCCLFallbackAllReducePhases: a ring all-reduce moves 2(t−1)/t of the
// message, twice what an all-gather over the same GPUs moves. Over 4 GPUs at
// 100 GB/s, 1e6 elements: 2·(3/4)·2e6 B = 3e6 B → 30 µs, plus 10 µs.
func TestNCCLFallbackAllReducePhases(t *testing.T) {
	assert.InEpsilon(t, 40e-6, ncclFallback(nil, "all_reduce", 4, 100e9).Seconds(1e6), 1e-12)
	assert.InEpsilon(t, 25e-6, ncclFallback(nil, "all_gather", 4, 100e9).Seconds(1e6), 1e-12)
}

// TestNetworkAllReduceTP16: TP 16 over two H100 nodes (a network between
// them) is priced by NCCL's cost model, not the node's tables: one token of
// DeepSeek-V3 (7,168 bf16) in 26.2502564 µs, the tree with LL
// (perf.TestNCCLNetAllReduceTwoNodesByHand works it out), a fallback of
// every all-reduce. GB200's NVL72 nodes (one NVLink domain) keep the
// hierarchical pricing.
func TestNetworkAllReduceTP16(t *testing.T) {
	m := &Model{numAR: 122}
	require.NoError(t, m.multiNodeAllReduce(builtinSystem(t, "h100_sxm"), sharedDB(t), 16))
	assert.InEpsilon(t, 26.2502564e-6, m.allReduce.Seconds(7168), 1e-9)
	assert.Equal(t, 122, m.Fallbacks()[OpAllReduce])
	assert.Empty(t, m.Sources())

	gb := &Model{numAR: 122}
	require.NoError(t, gb.multiNodeAllReduce(builtinSystem(t, "gb200"), sharedDB(t), 8))
	_, hier := gb.allReduce.(*multiNodeAllReduce)
	assert.True(t, hier)
}

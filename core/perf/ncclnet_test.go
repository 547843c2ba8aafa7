package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/hardware"
)

// h100Nodes is an H100 SXM node as the builtin spec gives it: 8 GPUs, 450
// GB/s NVLink and one 50 GB/s NIC (400 Gb/s NDR) a GPU.
func h100Nodes() *hardware.System {
	return &hardware.System{Name: "h100_sxm", GPUsPerNode: 8, IntraNodeBW: 450e9, InterNodeBW: 50e9}
}

// TestNCCLNetAllReduceTwoNodesByHand: a decode step's all-reduce of one
// token's hidden state (7,168 bf16, 14,336 B) over TP 16 on two H100 nodes,
// by NCCL 2.27.3's tuning.cc. Bus bandwidth 8 channels × 50 GB/s = 400 GB/s.
//   - tree/LL: 6.8 + 2·((8−1)·0.6 + log2(2)·5.0) = 25.2 µs; bandwidth
//     min(400·0.92, 8·41.4) = 331.2 GB/s, LL min(331.2/3.8, 39) = 39, the
//     size correction at log2(14,336/64) = 7 is 0.7, halved for the tree:
//     13.65 GB/s → 14,336 B in 1.0502564 µs: 26.2502564 µs;
//   - ring/LL: 6.6 + 28·max(0.6, 1.0) + 2·2.7 = 40.0 µs (slower);
//   - tree/LL128 48.5 µs, NVLS tree 25 + 2·14 = 53 µs (slower).
func TestNCCLNetAllReduceTwoNodesByHand(t *testing.T) {
	c, ok := NewNCCLNet(h100Nodes(), 16, 16)
	require.True(t, ok)
	assert.Equal(t, NCCLNet{Nodes: 2, PerNode: 8, ChannelBW: 50e9, Channels: 8, NVLinkBW: 450e9, NVLS: true, arch: ncclHopper}, c)
	sec, pick := c.Seconds(NCCLAllReduce, 14336)
	assert.Equal(t, "tree/LL", pick)
	assert.InEpsilon(t, 26.2502564e-6, sec, 1e-9)
	assert.InEpsilon(t, 40.0e-6, c.ringLatencyUs(NCCLAllReduce, protoLL, 14336)*1e-6, 1e-12)

	// 64 MiB: the NVLS tree, 53 µs + 67,108,864 B at min(8·50, 450)·5/6 =
	// 333.3 GB/s = 254.326592 µs (the Simple ring: 131.6·1.4 µs + 314.6 µs).
	sec, pick = c.Seconds(NCCLAllReduce, 64<<20)
	assert.Equal(t, "nvls_tree/Simple", pick)
	assert.InEpsilon(t, 254.326592e-6, sec, 1e-9)

	// Without NVLS (SGLang's NCCL_NVLS_ENABLE=0) the Simple ring: 8.4 +
	// 28·3.4 + 2·14 = 131.6 µs, ×1.4 for the ring's plateau = 184.24 µs,
	// plus 67,108,864 B at 400·16/30 GB/s = 314.5728 µs: 498.8128 µs (the
	// LL128 ring 75.2 + 428.57 µs, the Simple tree 92.4 + 506.56 µs).
	c.NVLS = false
	sec, pick = c.Seconds(NCCLAllReduce, 64<<20)
	assert.Equal(t, "ring/Simple", pick)
	assert.InEpsilon(t, 498.8128e-6, sec, 1e-9)

	sec, pick = c.Seconds(NCCLAllReduce, 0)
	assert.Zero(t, sec)
	assert.Empty(t, pick)
}

// TestNCCLNetAllGatherTwoNodesByHand: the all-gather of one token from each
// of 16 DP ranks on two H100 nodes, 16 · 14,336 = 229,376 B gathered. Only
// the ring runs (PAT needs one GPU a node, NVLS across nodes CollNet):
//   - LL: 6.6 + 14·1.0 + 1·2.7 = 23.3 µs; bus bandwidth min(39, 400/2) =
//     39 GB/s, ×16/15 for the ring's steps = 41.6 GB/s → 5.513846 µs:
//     28.813846 µs;
//   - LL128: 14 + 14·1.9 + 4.0 = 44.6 µs; Simple 8.4 + 14·3.4 + 14 = 70 µs.
//
// A reduce-scatter has the same steps and the same time.
func TestNCCLNetAllGatherTwoNodesByHand(t *testing.T) {
	c, _ := NewNCCLNet(h100Nodes(), 16, 16)
	for _, op := range []NCCLColl{NCCLAllGather, NCCLReduceScatter} {
		sec, pick := c.Seconds(op, 229376)
		assert.Equal(t, "ring/LL", pick, op.String())
		assert.InEpsilon(t, 28.813846e-6, sec, 1e-7, op.String())
	}
}

// TestNCCLNetFourNodesByHand: TP 32 over four nodes. The tree's network
// steps are log2(4) = 2 and LL's cap beyond two nodes 20.4 GB/s:
// 6.8 + 2·(7·0.6 + 2·5.0) = 35.2 µs, bandwidth 20.4 · 0.7 · 0.5 = 7.14 GB/s
// → 14,336 B in 2.007843 µs: 37.207843 µs. The ring's 2·3 network steps
// cost 6.6 + 56·1.0 + 6·2.7 = 78.8 µs.
func TestNCCLNetFourNodesByHand(t *testing.T) {
	c, ok := NewNCCLNet(h100Nodes(), 32, 32)
	require.True(t, ok)
	sec, pick := c.Seconds(NCCLAllReduce, 14336)
	assert.Equal(t, "tree/LL", pick)
	assert.InEpsilon(t, 37.207843e-6, sec, 1e-7)
	assert.InEpsilon(t, 78.8, c.ringLatencyUs(NCCLAllReduce, protoLL, 14336), 1e-12)
}

// TestNCCLNetNotAcrossNodes: one node, no network, and GB200's NVL72 rack
// (node.inter_node_bw = intra_node_bw: one NVLink domain) are not priced
// by the network model.
func TestNCCLNetNotAcrossNodes(t *testing.T) {
	_, ok := NewNCCLNet(h100Nodes(), 8, 8)
	assert.False(t, ok)
	_, ok = NewNCCLNet(&hardware.System{Name: "h100_sxm", GPUsPerNode: 8, IntraNodeBW: 450e9}, 16, 16)
	assert.False(t, ok)
	_, ok = NewNCCLNet(&hardware.System{Name: "gb200", GPUsPerNode: 4, IntraNodeBW: 900e9, InterNodeBW: 900e9}, 8, 8)
	assert.False(t, ok)
	assert.Equal(t, ncclBlackwell, ncclArchOf("b200_sxm"))
	assert.Equal(t, ncclAmpere, ncclArchOf("a100_sxm"))
}

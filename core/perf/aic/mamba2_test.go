package aic

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/model"
)

// mamba2RowMs is the latency (ms) of one mamba2_perf row, read with its
// own columns (not the gdn mapping).
func mamba2RowMs(t *testing.T, path, kernel string, batch, seq, dModel, nHeads int64) float64 {
	t.Helper()
	rows, err := readParquet[mamba2Row](path)
	require.NoError(t, err)
	for _, r := range rows {
		if r.Kernel == kernel && r.Batch == batch && r.SeqLen == seq && r.DModel == dModel && r.NHeads == nHeads {
			return r.Latency
		}
	}
	t.Fatalf("no %s row at batch %d, seq %d", kernel, batch, seq)
	return 0
}

// TestMamba2ConvsFromTRTLLMTables: Nemotron-3-Nano on one H200 served by
// TensorRT-LLM reads its Mamba-2 convolutions from mamba2_perf (1.3.0rc20:
// d_model 2688, 64 heads of 64, 8 groups of 128, conv 4): a decode of 4
// costs the causal_conv1d_update row at batch 4 plus the state update on
// the roofline, a 1,024-token prefill the causal_conv1d_fn row at batch 1,
// seq_len 1,024 plus the SSD scan on the roofline (both phases still count
// their 23 layers as stand-ins: no table times the scan). At TP 2 (32 heads
// and 4 groups a GPU, no such row) the TP 1 rows scale by the roofline
// ratio: half the channels, about half the time. vLLM has no Mamba-2
// table: all on the roofline.
func TestMamba2ConvsFromTRTLLMTables(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	arch := sharedModel(t, "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "trtllm", Version: "1.3.0rc20", TP: 1,
		KVDtype: model.BF16})
	require.NoError(t, err)
	c := m.hy.gdn
	require.NotNil(t, c)
	assert.Equal(t, "causal_conv1d_update", c.grids[gdnGenConv].kernel)
	assert.Equal(t, "causal_conv1d_fn", c.grids[gdnContextConv].kernel)
	assert.Equal(t, "roofline", c.grids[gdnGenRule].kernel)
	assert.Equal(t, "roofline", c.grids[gdnContextRule].kernel)
	assert.Equal(t, 2*23, m.Fallbacks()[OpLinearAttention])
	path := filepath.Join(db, "data", "h200_sxm", "linear_attention", "trtllm", "1.3.0rc20", "mamba2_perf.parquet")
	conv := mamba2RowMs(t, path, "causal_conv1d_update", 4, 1, 2688, 64)
	assert.InDelta(t, conv, c.grids[gdnGenConv].Seconds(4, 1)*1e3, 1e-12)
	assert.InDelta(t, conv/1e3+c.grids[gdnGenRule].Seconds(4, 1), c.generationSeconds(4), 1e-15)
	fn := mamba2RowMs(t, path, "causal_conv1d_fn", 1, 1024, 2688, 64)
	assert.InDelta(t, fn/1e3+c.grids[gdnContextRule].Seconds(1, 1024), c.contextSeconds(1024, 1), 1e-15)

	tp2, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "trtllm", Version: "1.3.0rc20", TP: 2,
		KVDtype: model.BF16})
	require.NoError(t, err)
	g := tp2.hy.gdn.grids[gdnGenConv]
	assert.Equal(t, "causal_conv1d_update", g.kernel)
	assert.InDelta(t, 0.5, g.scale, 0.05)

	v, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 1, KVDtype: model.BF16})
	require.NoError(t, err)
	assert.Equal(t, "roofline", v.hy.gdn.grids[gdnGenConv].kernel)
}

// A mamba2_perf table whose nearest shape (the only one, 64 heads of 64)
// has both convolutions but no batch whose context row is complete
// (batch 1 at seq_len 16 only, batch 2 at 32 only) gives no grid there:
// the roofline stays, as for a table that lacks the shape, instead of a
// panic indexing the missing grids.
func TestMamba2RaggedStandInShapeKeepsTheRoofline(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "linear_attention", "trtllm", "1.3.0")
	require.NoError(t, os.MkdirAll(at, 0o755))
	row := func(kernel, phase string, batch, seq int64) mamba2Row {
		return mamba2Row{Kernel: kernel, Phase: phase, Batch: batch, SeqLen: seq, DModel: 2688, DState: 128, DConv: 4,
			NHeads: 64, HeadDim: 64, NGroups: 8, Latency: 0.01}
	}
	rows := []mamba2Row{row("causal_conv1d_fn", "context", 1, 16), row("causal_conv1d_fn", "context", 2, 32),
		row("causal_conv1d_update", "generation", 1, 1)}
	require.NoError(t, parquet.WriteFile(filepath.Join(at, TableMamba2+".parquet"), rows))
	sys := builtinSystem(t, "h200_sxm")
	m := &Model{system: sys.Name}
	c := &gdnCosts{}
	var roofs [numGDNRoles]func(b, s float64) float64
	for i := range roofs {
		roofs[i] = func(b, s float64) float64 { return 1e-6 * b * s }
	}
	sh := gdnShape{dModel: 2688, dConv: 4, kHeads: 4, kDim: 128, vHeads: 32, vDim: 64} // TP 2: no exact rows
	read, err := m.mamba2Convs(c, sh, roofs, sys, newEmpiricalMemory(sys), dir, Options{Backend: "trtllm", Version: "1.3.0"})
	require.NoError(t, err)
	assert.Equal(t, "", read)
	assert.Nil(t, c.grids[gdnContextConv])
	assert.Nil(t, c.grids[gdnGenConv])
}

// Two measured shapes as near as each other (the same heads and d_model,
// 8 or 16 groups) are told apart by the rest of the shape, not by the
// order of the map they are gathered in: the more key heads, every time.
func TestNearestGDNShapeTieIsDeterministic(t *testing.T) {
	var rows []gdnRow
	for _, groups := range []int64{8, 16} {
		for _, k := range []struct{ kernel, phase string }{{"causal_conv1d_fn", "context"}, {"causal_conv1d_update", "generation"}} {
			rows = append(rows, gdnRow{Kernel: k.kernel, Phase: k.phase, Batch: 1, SeqLen: 1, DModel: 2688, DConv: 4,
				KHeads: groups, KDim: 128, VHeads: 64, VDim: 64, Latency: 0.01})
		}
	}
	want := gdnShape{dModel: 2688, dConv: 4, kHeads: 4, kDim: 128, vHeads: 32, vDim: 64}
	for range 50 {
		near, ok := nearestGDNShape(rows, gdnKernels{}, []gdnRole{gdnContextConv, gdnGenConv}, want)
		require.True(t, ok)
		require.Equal(t, int64(16), near.kHeads)
	}
}

package aic

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// TableMamba2 is TensorRT-LLM's Mamba-2 kernel table
// (linear_attention/trtllm/<version>/mamba2_perf.parquet): AIConfigurator's
// collector times the causal convolution of a Mamba-2 mixer alone, per GPU,
// for a model's shape (d_model, d_state, d_conv, nheads, head_dim,
// n_groups, chunk_size): causal_conv1d_fn in phase "context" at batch ×
// seq_len and causal_conv1d_update in phase "generation" at batch. It
// times no SSD scan (mamba_chunk_scan_combined) or state update
// (selective_state_update): those stay on the roofline.
const TableMamba2 = "mamba2_perf"

type mamba2Row struct {
	Kernel  string  `parquet:"kernel_source,optional"`
	Phase   string  `parquet:"phase,optional"`
	Batch   int64   `parquet:"batch_size,optional"`
	SeqLen  int64   `parquet:"seq_len,optional"`
	DModel  int64   `parquet:"d_model,optional"`
	DState  int64   `parquet:"d_state,optional"`
	DConv   int64   `parquet:"d_conv,optional"`
	NHeads  int64   `parquet:"nheads,optional"`
	HeadDim int64   `parquet:"head_dim,optional"`
	NGroups int64   `parquet:"n_groups,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// gdn reads a Mamba-2 row onto Gated DeltaNet's shapes as
// model.LinearAttention does (Mamba2): n_groups groups of d_state as key
// heads, nheads heads of head_dim as value heads.
func (r *mamba2Row) gdn() gdnRow {
	return gdnRow{Kernel: r.Kernel, Phase: r.Phase, Batch: r.Batch, SeqLen: r.SeqLen, DModel: r.DModel, DConv: r.DConv,
		KHeads: r.NGroups, KDim: r.DState, VHeads: r.NHeads, VDim: r.HeadDim, Latency: r.Latency}
}

func loadMamba2(path string) ([]gdnRow, error) {
	rows, err := loadRows(path, func(r *mamba2Row) (gdnKey, bool) {
		g := r.gdn()
		return gdnKey{g.Kernel, g.Phase, g.Batch, g.SeqLen, g.shape()},
			r.Batch > 0 && r.SeqLen > 0 && r.NHeads > 0 && r.NGroups > 0 && r.DState > 0 && r.HeadDim > 0 && validLatency(r.Latency)
	})
	if err != nil {
		return nil, err
	}
	out := make([]gdnRow, len(rows))
	for i := range rows {
		out[i] = rows[i].gdn()
	}
	return out, nil
}

// mamba2Convs prices the convolution roles of a Mamba-2 mixer of shape sh
// (per GPU) from TensorRT-LLM's mamba2_perf table of the nearest version:
// the shape's own rows, else the nearest measured shape (heads per GPU,
// then d_model) scaled by the roofline ratio (the tables hold each model's
// unsharded TP 1 shape). It returns what it read ("" when no table has
// the kernels: the roofline stays).
func (m *Model) mamba2Convs(c *gdnCosts, sh gdnShape, roofs [numGDNRoles]func(b, s float64) float64,
	sys *hardware.System, em empiricalMemory, sysDir string, opt Options) (string, error) {
	src, err := locateExcept(sysDir, m.system, opt.Backend, opt.Version, TableMamba2, map[string]string{})
	if err != nil {
		return "", nil
	}
	rows, err := loadMamba2(src.Path)
	if err != nil {
		return "", err
	}
	kern := gdnKernels{}
	roles := []gdnRole{gdnContextConv, gdnGenConv}
	grids := func(at gdnShape) []*gdnGrid {
		out := make([]*gdnGrid, len(roles))
		for i, role := range roles {
			if out[i] = newGDNGrid(rows, kern, role, at, roofs[role]); out[i] == nil {
				return nil
			}
		}
		return out
	}
	read := fmt.Sprintf("%s's (%s)", TableMamba2, src.ReadFrom)
	gs := grids(sh)
	if gs == nil {
		near, ok := nearestGDNShape(rows, kern, roles, sh)
		if !ok {
			return "", nil
		}
		if gs = grids(near); gs == nil {
			return "", nil // the stand-in shape's rows give no complete grid: the roofline stays
		}
		own := perf.NewGDNCore(&model.LinearAttention{KeyHeads: int(sh.kHeads), KeyDim: int(sh.kDim), ValueHeads: int(sh.vHeads),
			ValueDim: int(sh.vDim), ConvKernel: int(sh.dConv), Mamba2: true}, 1, sys.BF16Flops, em.bw)
		nearCore := perf.NewGDNCore(&model.LinearAttention{KeyHeads: int(near.kHeads), KeyDim: int(near.kDim), ValueHeads: int(near.vHeads),
			ValueDim: int(near.vDim), ConvKernel: int(near.dConv), Mamba2: true}, 1, sys.BF16Flops, em.bw)
		for i, g := range gs {
			g.scale = gdnScale(roles[i], kern, own, nearCore, g)
		}
		read = fmt.Sprintf("%s's (%s) at the stand-in shape d_model %d, %d heads, %d groups per GPU, scaled by the roofline ratio",
			TableMamba2, src.ReadFrom, near.dModel, near.vHeads, near.kHeads)
		src.Table = TableMamba2 + " (stand-in shape)"
	}
	for i, role := range roles {
		c.grids[role] = gs[i]
	}
	m.sources = append(m.sources, src)
	return read, nil
}

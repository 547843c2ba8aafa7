package aic

import (
	"fmt"
	"path/filepath"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// The DeepEP tables (comm/sglang/<version>/wideep_deepep_{normal,ll}_perf):
// DeepEP's dispatch and combine kernels timed on one node of the system
// (node_num 1: all its GPUs in the EP group) for a token count per rank, a
// hidden size, top-k and expert count — the library vLLM's
// deepep_high_throughput and deepep_low_latency backends call, collected
// through SGLang's image. High-throughput rows are per SM count; vLLM
// gives DeepEP 20 (DeepEPAll2AllManagerBase.num_sms).
const (
	TableDeepEPHT = "wideep_deepep_normal_perf"
	TableDeepEPLL = "wideep_deepep_ll_perf"
	deepEPBackend = "sglang"
	deepEPHTSMs   = 20
)

func init() {
	tableFamily[TableDeepEPHT] = "comm"
	tableFamily[TableDeepEPLL] = "comm"
}

type deepEPRow struct {
	Nodes   int64   `parquet:"node_num,optional"`
	Hidden  int64   `parquet:"hidden_size,optional"`
	Tokens  int64   `parquet:"num_token,optional"`
	TopK    int64   `parquet:"num_topk,optional"`
	Experts int64   `parquet:"num_experts,optional"`
	SMs     int64   `parquet:"dispatch_sms,optional"`
	HTDisp  float64 `parquet:"dispatch_transmit_us,optional"`
	HTComb  float64 `parquet:"combine_transmit_us,optional"`
	LLDisp  float64 `parquet:"dispatch_avg_t_us,optional"`
	LLComb  float64 `parquet:"combine_avg_t_us,optional"`
}

type deepEPKey struct{ nodes, h, tokens, k, e, sms int64 }

func loadDeepEP(path string) ([]deepEPRow, error) {
	return loadRows(path, func(r *deepEPRow) (deepEPKey, bool) {
		return deepEPKey{r.Nodes, r.Hidden, r.Tokens, r.TopK, r.Experts, r.SMs},
			r.Tokens > 0 && r.Hidden > 0 && (r.HTDisp+r.HTComb > 0 || r.LLDisp+r.LLComb > 0)
	})
}

// a2aSetup prices the dispatch and combine of a point-to-point all2all
// backend (perf.IsAll2All): from the DeepEP table of the backend when the
// EP group is one whole node and the table measured the model's hidden size,
// top-k and experts (the dispatch plus combine time over the rank's tokens,
// linear between measured counts and the bandwidth model's slope beyond),
// else from perf.A2A's bandwidth model (NVLink and the network), a fallback
// of every MoE layer. perf_metadata.all2all says which.
func (m *Model) a2aSetup(arch *model.Arch, sys *hardware.System, par model.Parallel, backend, sysDir string, hy *hybrid) error {
	a, err := perf.NewA2A(backend, arch, par, sys)
	if err != nil {
		return err
	}
	hy.a2a = &a2aCurve{model: a}
	m.a2a = map[string]any{"backend": backend, "source": "bandwidth model (perf.A2A: NVLink and node.inter_node_bw)"}
	table := TableDeepEPHT
	if backend == perf.All2AllDeepEPLL {
		table = TableDeepEPLL
	}
	if backend == perf.All2AllFlashInfer || sys.Nodes(par.GPUs()) != 1 || par.GPUs() != sys.GPUsPerNode {
		m.fallback(OpAll2All, int(hy.moeLayers), fmt.Sprintf("%s over %d GPUs on %d node(s) of %s: no measured table for this layout; priced by its bandwidth model",
			backend, par.GPUs(), sys.Nodes(par.GPUs()), m.system))
		return nil
	}
	src, err := locateNewest(sysDir, m.system, deepEPBackend, table,
		"DeepEP's dispatch and combine kernels, measured under "+deepEPBackend+" (the newest tables): not tied to the serving engine's version")
	if err != nil {
		m.fallback(OpAll2All, int(hy.moeLayers), fmt.Sprintf("%s: no %s for %s; priced by its bandwidth model", backend, table, m.system))
		return nil
	}
	rows, err := loadDeepEP(src.Path)
	if err != nil {
		return err
	}
	var ts, sec []float64
	seen := map[int64]bool{}
	for i := range rows {
		r := &rows[i]
		if r.Nodes != 1 || r.Hidden != int64(arch.ExpertHidden()) || r.TopK != int64(arch.MoE.TopK) || r.Experts != int64(arch.MoE.Experts) {
			continue
		}
		t := (r.LLDisp + r.LLComb) * 1e-6
		if backend == perf.All2AllDeepEPHT {
			if r.SMs != deepEPHTSMs {
				continue
			}
			t = (r.HTDisp + r.HTComb) * 1e-6
		}
		if seen[r.Tokens] {
			continue
		}
		seen[r.Tokens] = true
		ts, sec = append(ts, float64(r.Tokens)), append(sec, t)
	}
	if len(ts) < 2 {
		m.fallback(OpAll2All, int(hy.moeLayers), fmt.Sprintf("%s (%s) measured no hidden %d, top-%d of %d experts; priced by its bandwidth model",
			table, filepath.Base(filepath.Dir(src.Path)), arch.ExpertHidden(), arch.MoE.TopK, arch.MoE.Experts))
		return nil
	}
	c := &a2aCurve{model: a, tokens: sortedUnique(ts)}
	c.sec = make([]float64, len(c.tokens))
	for i, t := range ts {
		c.sec[indexOf(c.tokens, t)] = sec[i]
	}
	padEnvelope(c.sec)
	hy.a2a = c
	src.Table = table + " (" + backend + ")"
	m.sources = append(m.sources, src)
	m.a2a["source"] = "measured: " + table + " " + src.ReadFrom
	return nil
}

// a2aCurve is a point-to-point all2all's dispatch and combine of one MoE
// layer on one GPU over the rank's tokens: measured (tokens, sec) when
// there is a table, else model's bandwidth model alone.
type a2aCurve struct {
	model       *perf.A2A
	tokens, sec []float64
}

// Seconds is the dispatch and combine at x tokens on the rank: linear
// between measured counts, the smallest count's time below them, and
// beyond the largest its time plus the bandwidth model's growth.
func (c *a2aCurve) Seconds(x float64) float64 {
	if x <= 0 {
		return 0
	}
	if len(c.tokens) == 0 {
		return c.model.Seconds(x)
	}
	t, above := sizeAt(c.tokens, c.sec, x)
	if above {
		last := c.tokens[len(c.tokens)-1]
		return t + c.model.Seconds(x) - c.model.Seconds(last)
	}
	return t
}

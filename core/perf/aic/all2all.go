package aic

import (
	"fmt"

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
	Nodes        int64   `parquet:"node_num,optional"`
	Hidden       int64   `parquet:"hidden_size,optional"`
	Tokens       int64   `parquet:"num_token,optional"`
	TopK         int64   `parquet:"num_topk,optional"`
	Experts      int64   `parquet:"num_experts,optional"`
	SMs          int64   `parquet:"dispatch_sms,optional"`
	HTDisp       float64 `parquet:"dispatch_transmit_us,optional"`
	HTComb       float64 `parquet:"combine_transmit_us,optional"`
	HTDispNotify float64 `parquet:"dispatch_notify_us,optional"`
	HTCombNotify float64 `parquet:"combine_notify_us,optional"`
	LLDisp       float64 `parquet:"dispatch_avg_t_us,optional"`
	LLComb       float64 `parquet:"combine_avg_t_us,optional"`
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
// EP group fills whole nodes and a table measured that many nodes at the
// model's hidden size, top-k and experts (the dispatch plus combine time
// over the rank's tokens, linear between measured counts and the bandwidth
// model's slope beyond), else from perf.A2A's bandwidth model (NVLink and
// the network), a fallback of every MoE layer. perf_metadata.all2all says
// which. The newest table version that measured the layout is read (the
// newest tables measure one node; h100_sxm's and h200_sxm's 0.5.6.post2
// also 2, 4 and 8 nodes of 8 GPUs). A high-throughput row's time is its
// transmit plus its notify (the count exchange before the transmit,
// measured apart across nodes and 0 within one; AIConfigurator's reader
// adds them: perf_database/moe_a2a.rs, adapt_legacy_deepep_normal).
func (m *Model) a2aSetup(arch *model.Arch, sys *hardware.System, par model.Parallel, opt Options, sysDir string, hy *hybrid) error {
	backend := opt.All2AllBackend
	a, err := perf.NewA2A(backend, arch, par, sys)
	if err != nil {
		return err
	}
	// The tables timed DeepEP's dispatch of fp8 tokens with a scale per 128
	// (the collector's x_e4m3: AIConfigurator collector/wideep/sglang/
	// deepep/test_internode.py); an engine that dispatches bf16 moves more.
	timed := *a
	if opt.All2AllBF16Dispatch {
		a.DispatchBytes = 2
	}
	hy.a2a = &a2aCurve{model: a}
	m.a2a = map[string]any{"backend": backend, "source": "bandwidth model (perf.A2A: NVLink and node.inter_node_bw)"}
	table := TableDeepEPHT
	if backend == perf.All2AllDeepEPLL {
		table = TableDeepEPLL
	}
	nodes := sys.Nodes(par.GPUs())
	if backend == perf.All2AllFlashInfer || (nodes == 1 && par.GPUs() != sys.GPUsPerNode) ||
		(nodes > 1 && par.GPUs() != nodes*sys.GPUsPerNode) {
		m.fallback(OpAll2All, int(hy.moeLayers), fmt.Sprintf("%s over %d GPUs on %d node(s) of %s: no measured table for this layout; priced by its bandwidth model",
			backend, par.GPUs(), nodes, m.system))
		return nil
	}
	why := map[string]string{}
	for {
		src, err := locateExcept(sysDir, m.system, deepEPBackend, "", table, why)
		if err != nil {
			reason := fmt.Sprintf("%s: no %s for %s", backend, table, m.system)
			if len(why) > 0 {
				reason = fmt.Sprintf("%s measured no %d node(s) at hidden %d, top-%d of %d experts (%s)", table, nodes,
					arch.ExpertHidden(), arch.MoE.TopK, arch.MoE.Experts, versionsTried(why))
			}
			m.fallback(OpAll2All, int(hy.moeLayers), reason+"; priced by its bandwidth model")
			return nil
		}
		rows, err := loadDeepEP(src.Path)
		if err != nil {
			return err
		}
		ts, sec := deepEPTimes(rows, int64(nodes), arch, backend)
		if len(ts) < 2 {
			why[src.ReadFrom] = "no rows of the layout"
			continue
		}
		c := &a2aCurve{model: a, tokens: sortedUnique(ts)}
		if opt.All2AllBF16Dispatch && timed.DispatchBytes != a.DispatchBytes {
			c.timed = &timed
		}
		c.sec = make([]float64, len(c.tokens))
		for i, t := range ts {
			c.sec[indexOf(c.tokens, t)] = sec[i]
		}
		padEnvelope(c.sec)
		hy.a2a = c
		src.Table = table + " (" + backend + ")"
		src.Note = joinNote(src.Note, "DeepEP's dispatch and combine kernels, measured under "+deepEPBackend+
			" (the newest tables that measured the layout): not tied to the serving engine's version")
		if len(why) > 0 {
			src.Note = joinNote(src.Note, "newer without the layout: "+versionsTried(why))
		}
		m.sources = append(m.sources, src)
		m.a2a["source"] = "measured: " + table + " " + src.ReadFrom
		if c.timed != nil {
			m.a2a["source"] = m.a2a["source"].(string) + "; bf16 dispatch: plus the bandwidth model's bytes beyond the table's fp8"
		}
		return nil
	}
}

// deepEPTimes are the dispatch plus combine times (s) over the rank's
// tokens of the rows of one layout (nodes, the model's hidden size, top-k
// and experts; high-throughput rows at deepEPHTSMs), each token count once.
func deepEPTimes(rows []deepEPRow, nodes int64, arch *model.Arch, backend string) (ts, sec []float64) {
	seen := map[int64]bool{}
	for i := range rows {
		r := &rows[i]
		if r.Nodes != nodes || r.Hidden != int64(arch.ExpertHidden()) || r.TopK != int64(arch.MoE.TopK) || r.Experts != int64(arch.MoE.Experts) {
			continue
		}
		t := (r.LLDisp + r.LLComb) * 1e-6
		if backend == perf.All2AllDeepEPHT {
			if r.SMs != deepEPHTSMs {
				continue
			}
			t = (r.HTDisp + r.HTDispNotify + r.HTComb + r.HTCombNotify) * 1e-6
		}
		if seen[r.Tokens] {
			continue
		}
		seen[r.Tokens] = true
		ts, sec = append(ts, float64(r.Tokens)), append(sec, t)
	}
	return ts, sec
}

// a2aCurve is a point-to-point all2all's dispatch and combine of one MoE
// layer on one GPU over the rank's tokens: measured (tokens, sec) when
// there is a table, else model's bandwidth model alone. timed (nil: the
// engine's own) is the bandwidth model of what the table timed when the
// engine moves other bytes (a bf16 dispatch where the table sent fp8).
type a2aCurve struct {
	model       *perf.A2A
	timed       *perf.A2A
	tokens, sec []float64
}

// Seconds is the dispatch and combine at x tokens on the rank: linear
// between measured counts, the smallest count's time below them, and
// beyond the largest its time plus the bandwidth model's growth; with timed,
// plus model − timed at x (the latencies cancel: the extra bytes at the
// links' bandwidth).
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
		t += c.model.Seconds(x) - c.model.Seconds(last)
	}
	if c.timed != nil {
		t += c.model.Seconds(x) - c.timed.Seconds(x)
	}
	return t
}

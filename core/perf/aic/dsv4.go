package aic

import (
	"fmt"
	"math"
	"sort"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// The DeepSeek-V4 tables (sparse_attention/<backend>/<version>, mhc/…). The
// module tables time vLLM's whole DeepseekV4Attention forward of one layer
// of compress ratio 4 (CSA) or 128 (HCA) on one GPU — the q/kv and output
// LoRA projections, the compressor, the indexer (CSA), norms, rotary
// embedding, cache writes and the sparse attention — with the TP
// collectives stubbed out (AIConfigurator's collector/vllm/
// collect_dsv4_attn.py), for a named model's shapes at num_heads heads per
// GPU: context rows of batch_size sequences of isl new tokens after step
// cached ones, generation rows of batch_size decodes (isl 1) after step
// cached tokens. The mHC table times the pre and post hyper-connection
// kernels of one layer (both its sites) for num_tokens tokens.
const (
	TableDSV4CSAContext    = "dsv4_csa_context_module_perf"
	TableDSV4CSAGeneration = "dsv4_csa_generation_module_perf"
	TableDSV4HCAContext    = "dsv4_hca_context_module_perf"
	TableDSV4HCAGeneration = "dsv4_hca_generation_module_perf"
	TableMHC               = "mhc_module_perf"
)

func init() {
	for _, t := range []string{TableDSV4CSAContext, TableDSV4CSAGeneration, TableDSV4HCAContext, TableDSV4HCAGeneration} {
		tableFamily[t] = "sparse_attention"
	}
	tableFamily[TableMHC] = "mhc"
}

// dsv4TableModels are the shapes the module tables measured, from those
// models' config.json in ../shared/data/aic/model_configs (the tables'
// model column).
var dsv4TableModels = map[string]*model.Arch{
	"sgl-project/DeepSeek-V4-Flash-FP8": dsv4Flash,
	"deepseek-ai/DeepSeek-V4-Flash":     dsv4Flash,
	"deepseek-ai/DeepSeek-V4-Pro":       dsv4Pro,
	"sgl-project/DeepSeek-V4-Pro-FP8":   dsv4Pro,
}

var (
	dsv4Flash = &model.Arch{Hidden: 4096, Heads: 64, HeadDim: 512, DSV4: &model.CompressedAttention{
		QLoraRank: 1024, OLoraRank: 1024, OGroups: 8, RopeDim: 64, Window: 128,
		Indexer: model.MLAIndexer{Heads: 64, HeadDim: 128, TopK: 512}}}
	dsv4Pro = &model.Arch{Hidden: 7168, Heads: 128, HeadDim: 512, DSV4: &model.CompressedAttention{
		QLoraRank: 1536, OLoraRank: 1024, OGroups: 16, RopeDim: 64, Window: 128,
		Indexer: model.MLAIndexer{Heads: 64, HeadDim: 128, TopK: 1024}}}
)

// dsv4KVDtype reports whether a table's kv_cache_dtype is the model's KV
// dtype kd (SGLang's tables name fp8 "fp8_e4m3").
func dsv4KVDtype(row string, kd model.Dtype) bool {
	return row == string(kd) || (kd == model.FP8 && row == "fp8_e4m3")
}

// dsv4Distance is how far two DeepSeek-V4 shapes are apart: Σ |log2| of the
// ratios of the hidden size, heads, q and o ranks, groups and the indexer's
// top-k.
func dsv4Distance(a, b *model.Arch) float64 {
	l := func(x, y int) float64 { return math.Abs(math.Log2(float64(max(x, 1)) / float64(max(y, 1)))) }
	c, d := a.DSV4, b.DSV4
	return l(a.Hidden, b.Hidden) + l(a.Heads, b.Heads) + l(a.HeadDim, b.HeadDim) + l(c.QLoraRank, d.QLoraRank) +
		l(c.OLoraRank, d.OLoraRank) + l(c.OGroups, d.OGroups) + l(c.Indexer.TopK, d.Indexer.TopK) + l(c.Window, d.Window)
}

// dsv4Roofline is a DeepSeek-V4 core's time at peak for b sequences of y
// new tokens (context, no cached prefix) or b decodes at a KV length of y.
func dsv4Roofline(c *perf.DSV4Core, kind attnKind, b, y float64) float64 {
	if kind == contextKind {
		return b * c.ContextSeconds(y, 0)
	}
	kept := y
	if k := c.KeptLength(); k > 0 {
		kept = math.Min(y, k)
	}
	return c.GenerationSeconds(b, b*math.Min(y, c.Window()), b*y, b*kept)
}

// dsv4Grids holds a DeepSeek-V4 model's measured attention cores by layer
// kind and phase, the cores' rooflines at peak, the mHC curve and the
// DecodeWindows indices of the window and the CSA kept length.
type dsv4Grids struct {
	ctx, gen        map[model.AttnKind]*attnGrid
	peak            map[model.AttnKind]*perf.DSV4Core
	mhc             *mhcCurve
	winIdx, keptIdx int
}

// dsv4Setup builds the cores of arch's DeepSeek-V4 layers at TP tp
// (dsv4Core): CSA layers from the CSA module tables, HCA layers from the
// HCA ones, and layers of the window alone from the HCA tables too (as
// AIConfigurator prices them: no table times them; a fallback of those
// layers); a missing table is the core's roofline with the system's memory
// model (a fallback). And the mHC curve (mhcSetup).
func (m *Model) dsv4Setup(arch *model.Arch, sys *hardware.System, tp int, kd model.Dtype, sysDir string, opt Options, hy *hybrid) error {
	dg := &dsv4Grids{ctx: map[model.AttnKind]*attnGrid{}, gen: map[model.AttnKind]*attnGrid{}, peak: map[model.AttnKind]*perf.DSV4Core{}}
	tables := map[model.AttnKind][2]string{
		model.AttnCSA: {TableDSV4CSAContext, TableDSV4CSAGeneration},
		model.AttnHCA: {TableDSV4HCAContext, TableDSV4HCAGeneration},
		model.AttnSWA: {TableDSV4HCAContext, TableDSV4HCAGeneration},
	}
	fp8 := sys.Flops(model.FP8)
	for _, g := range arch.Groups() {
		k := g.Kind.Attn
		peak := perf.NewDSV4Core(arch, k, tp, kd.Bytes(), sys.BF16Flops, fp8, sys.MemBW)
		dg.peak[k] = peak
		for i, kind := range []attnKind{contextKind, generationKind} {
			table := tables[k][i]
			grid, err := m.moduleGrid(sysDir, opt, table, func(rows []mlaRow) (*attnGrid, error) {
				return m.dsv4Core(rows, kind, table, arch, k, tp, kd, sys, peak, g.Count)
			})
			if err != nil {
				return err
			}
			if grid == nil {
				em := newEmpiricalMemory(sys)
				emp := perf.NewDSV4Core(arch, k, tp, kd.Bytes(), sys.BF16Flops, fp8, em.bw)
				grid = rooflineDSV4Grid(kind, peak, emp, em.latencyS)
				m.fallback(opOfAttnKind(kind), g.Count, fmt.Sprintf("%s: no table for %s's %s layers; their attention core priced by the roofline with the system's memory model",
					table, arch.Name, k))
			} else if k == model.AttnSWA {
				m.fallback(opOfAttnKind(kind), g.Count, fmt.Sprintf("%s: %s's %d layers of the sliding window alone priced with the HCA module's core (no table times them)",
					table, arch.Name, g.Count))
			}
			if kind == contextKind {
				dg.ctx[k] = grid
			} else {
				dg.gen[k] = grid
			}
		}
	}
	if err := m.mhcSetup(arch, sys, sysDir, opt, dg); err != nil {
		return err
	}
	dg.winIdx, dg.keptIdx = perf.AddDSV4Windows(&hy.decodeWindows, arch)
	hy.dsv4 = dg
	return nil
}

// dsv4Core builds one phase's grid of the model's layers of kind k from a
// module table's rows: the measured time T(b, y) of the table model at the
// heads per GPU read, never below the core's roofline, projections
// included. The module is priced whole, not as a core plus the model's
// projections on the GEMM grid as the MLA modules are (mlaCore): the
// tables' fp8_block GEMM rows of the Blackwell systems time DeepGEMM's
// block-scaled GEMMs several times slower than these modules run the same
// projections inside (b200_sxm 0.24.0: 0.17 ms for 64 × 4096 × 1024, where
// the whole CSA module of Flash at TP 8 decodes 64 sequences in 0.08 ms), so
// the module's own times are the better measurement of them. Rows: the table model
// nearest the model's shape (dsv4Distance; of two of one shape the one with
// more rows), the model's KV dtype (else fp8; SGLang's fp8_e4m3 is fp8), the model's heads per GPU (else the nearest in log2, the
// larger on a tie), the rows' gemm_type of the attention weights' format
// (else fp8_block), context rows without a cached prefix; the generation
// length is step + 1 (the decoded token included). A shape or head count
// not the model's scales each cell by the ratio of the two cores'
// rooflines (a fallback, noted). Errors: no rows.
func (m *Model) dsv4Core(rows []mlaRow, kind attnKind, table string, arch *model.Arch, k model.AttnKind, tp int,
	kd model.Dtype, sys *hardware.System, peak *perf.DSV4Core, layers int) (*attnGrid, error) {
	heads := int64(arch.Heads / tp)
	best, bestD, names := nearestTableModel(rows, func(n string) (float64, bool) {
		tm, ok := dsv4TableModels[n]
		if !ok {
			return 0, false
		}
		return dsv4Distance(arch, tm), true
	})
	if math.IsInf(bestD, 1) {
		return nil, fmt.Errorf("no rows of a DeepSeek-V4 model the simulator knows (measured: %v)", names)
	}
	tm := dsv4TableModels[best]
	gemms := map[string]bool{}
	for i := range rows {
		if rows[i].Model == best {
			gemms[rows[i].GemmType] = true
		}
	}
	gemm := string(arch.AttentionDtype())
	if !gemms[gemm] {
		gemm = string(model.FP8Block)
	}
	pick := func(kv model.Dtype) []*mlaRow {
		var out []*mlaRow
		for i := range rows {
			r := &rows[i]
			if r.Model == best && r.GemmType == gemm && dsv4KVDtype(r.KVDtype, kv) && (kind == generationKind || r.Step == 0) {
				out = append(out, r)
			}
		}
		return out
	}
	kv := kd
	sel := pick(kv)
	if len(sel) == 0 {
		kv = model.FP8
		sel = pick(kv)
	}
	measHeads := nearestHeads(sel, heads, func(*mlaRow) bool { return true })
	if measHeads == 0 {
		return nil, fmt.Errorf("no rows of %s", best)
	}
	length := func(r *mlaRow) float64 {
		if kind == contextKind {
			return float64(r.ISL)
		}
		return float64(r.ISL + r.Step)
	}
	var picked []*mlaRow
	for _, r := range sel {
		if r.Heads == measHeads {
			picked = append(picked, r)
		}
	}
	mtp := int(int64(tm.Heads) / measHeads) // the table model's TP at those heads
	meas := perf.NewDSV4Core(tm, k, mtp, kv.Bytes(), sys.BF16Flops, sys.Flops(model.FP8), sys.MemBW)
	same := measHeads == heads && bestD == 0 && kv == kd
	g := &attnGrid{kind: kind, sqrtLen: kind == contextKind, dsv4: peak, scale: 1, measuredHeads: measHeads}
	g.fromRows(picked, length, func(b, y, t float64) float64 {
		return onModelShape(t, dsv4Roofline(meas, kind, b, y), dsv4Roofline(peak, kind, b, y), same)
	})
	if !same {
		m.fallback(opOfAttnKind(kind), layers, fmt.Sprintf("%s: %s's %s attention (%d heads per GPU, %s KV cache) not measured; %s's at %d heads (%s), scaled by the ratio of their rooflines",
			table, arch.Name, k, heads, kd, best, measHeads, kv))
	}
	return g, nil
}

// rooflineDSV4Grid is the stand-in of a missing DeepSeek-V4 table
// (dsv4Setup), as rooflineMLAGrid: T = emp(b, y) + 3·c on a grid of powers
// of two, emp the core at the system's memory model's bandwidth, c its
// per-kernel constant (the attention, the compressor, the cache write).
func rooflineDSV4Grid(kind attnKind, peak, emp *perf.DSV4Core, latencyS float64) *attnGrid {
	g := &attnGrid{kind: kind, sqrtLen: kind == contextKind, dsv4: peak, scale: 1}
	g.powersOfTwo(func(b, y float64) float64 { return dsv4Roofline(emp, kind, b, y) + 3*latencyS })
	return g
}

// dsv4ContextSeconds is one layer of kind k's prefill attention core of the
// pass: the grid at the k chunks' mean new tokens n̄ (the module's work
// grows about linearly with the new tokens: each query keeps a window and
// at most index_topk or S/128 compressed keys), plus what the chunks'
// cached prefixes add at the core's roofline (their window and compressed
// keys and the CSA indexer's scores of them; the rows read have none):
//
//	A = C(k, n̄) + Σ_chunks [R(n, p) − R(n, 0)]
func (m *Model) dsv4ContextSeconds(b *perf.Batch, k model.AttnKind) float64 {
	dg := m.hy.dsv4
	peak := dg.peak[k]
	var chunks, n, extra float64
	for i := range b.Prefill {
		c := &b.Prefill[i]
		if c.NewTokens <= 0 {
			continue
		}
		nn, p := float64(c.NewTokens), float64(c.PrefixTokens)
		chunks, n = chunks+1, n+nn
		if p > 0 {
			extra += peak.ContextSeconds(nn, p) - peak.ContextSeconds(nn, 0)
		}
	}
	if chunks == 0 {
		return 0
	}
	return dg.ctx[k].Seconds(chunks, n/chunks) + extra
}

// mhcRow is one row of the mHC table.
type mhcRow struct {
	Op      string  `parquet:"op_name,optional"`
	Tokens  int64   `parquet:"num_tokens,optional"`
	HCMult  int64   `parquet:"hc_mult,optional"`
	Hidden  int64   `parquet:"hidden_size,optional"`
	Iters   int64   `parquet:"sinkhorn_iters,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type mhcKey struct {
	op                          string
	tokens, hc, hidden, sinkIts int64
}

// mhcCurve is one layer's mHC (pre and post, both sites) by token count:
// measured times at tokens, and beyond the last point the last one's
// efficiency times the roofline (bytes/bw, perf.MHCBytesPerToken).
type mhcCurve struct {
	tokens, sec    []float64
	bytesPerTok    float64
	memBW, latency float64
}

// Seconds is one layer's mHC for x tokens: linear between measured token
// counts, the first point's below them; above the last, its efficiency
// times the roofline (keepEfficiency). A roofline curve (no tokens) is
// x·B/W + 2·c (two kernels).
func (c *mhcCurve) Seconds(x float64) float64 {
	if x <= 0 {
		return 0
	}
	roof := x * c.bytesPerTok / c.memBW
	if len(c.tokens) == 0 {
		return roof + 2*c.latency
	}
	t, above := sizeAt(c.tokens, c.sec, x)
	if above {
		last := c.tokens[len(c.tokens)-1]
		return keepEfficiency(t, last*c.bytesPerTok/c.memBW, roof)
	}
	return max(t, roof)
}

// mhcSetup reads the mHC table's rows of the model's hidden size, hc_mult
// and Sinkhorn iterations: per token count the pre row plus the post row
// (a count measured for one op only is left out). Without such rows, the
// roofline with the system's memory model stands in (a fallback of the
// memory ops, noted).
func (m *Model) mhcSetup(arch *model.Arch, sys *hardware.System, sysDir string, opt Options, dg *dsv4Grids) error {
	c := arch.DSV4
	curve := &mhcCurve{bytesPerTok: perf.MHCBytesPerToken(arch), memBW: sys.MemBW}
	src, err := locate(sysDir, m.system, opt.Backend, opt.Version, TableMHC)
	why := fmt.Sprintf("no %s table", TableMHC)
	if err == nil {
		rows, err := loadRows(src.Path, func(r *mhcRow) (mhcKey, bool) {
			return mhcKey{r.Op, r.Tokens, r.HCMult, r.Hidden, r.Iters}, r.Tokens > 0 && validLatency(r.Latency)
		})
		if err != nil {
			return err
		}
		pre, post := map[int64]float64{}, map[int64]float64{}
		for i := range rows {
			r := &rows[i]
			if r.Hidden != int64(arch.Hidden) || r.HCMult != int64(c.HCMult) || r.Iters != int64(c.SinkhornIters) {
				continue
			}
			switch r.Op { // one row per op and token count (loadRows keeps the first)
			case "pre":
				pre[r.Tokens] = r.Latency * 1e-3
			case "post":
				post[r.Tokens] = r.Latency * 1e-3
			}
		}
		for x := range pre {
			if _, ok := post[x]; ok {
				curve.tokens = append(curve.tokens, float64(x))
			}
		}
		sort.Float64s(curve.tokens)
		for _, x := range curve.tokens {
			curve.sec = append(curve.sec, pre[int64(x)]+post[int64(x)])
		}
		if len(curve.tokens) > 0 {
			m.sources = append(m.sources, src)
			dg.mhc = curve
			return nil
		}
		why = fmt.Sprintf("%s (%s) has no rows of hidden_size %d, hc_mult %d, sinkhorn_iters %d", TableMHC, src.ReadFrom, arch.Hidden, c.HCMult, c.SinkhornIters)
	}
	em := newEmpiricalMemory(sys)
	curve.memBW, curve.latency = em.bw, em.latencyS
	dg.mhc = curve
	m.fallback(OpMHC, arch.Layers, why+": the mHC kernels priced by the roofline with the system's memory model")
	return nil
}

package aic

import (
	"fmt"
	"math"
	"sort"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// The MLA tables (mla/<backend>/<version>, sparse_attention/ for DSA). The
// module tables time vLLM's whole DeepseekV2MLAAttention forward of one
// layer on one GPU — projections, norms, rotary embedding, the cache write
// and the attention core — for a named model's shapes with num_heads heads
// on the GPU (AIConfigurator's collector/vllm/collect_mla_module.py: context
// rows of batch_size sequences of isl new tokens after step cached ones,
// generation rows of batch_size decodes at a KV length of step tokens, the
// current one included). The kernel tables (vLLM 0.14.0) time the MLA
// implementation's forward alone (collector/vllm/collect_mla.py: the
// prefill up-projection and attention, or the decode's absorbed batched
// GEMMs and latent attention), DeepSeek-V3's shapes, KV length isl + step.
const (
	TableMLAContextModule    = "mla_context_module_perf"
	TableMLAGenerationModule = "mla_generation_module_perf"
	TableDSAContextModule    = "dsa_context_module_perf"
	TableDSAGenerationModule = "dsa_generation_module_perf"
	TableMLAContext          = "context_mla_perf"
	TableMLAGeneration       = "generation_mla_perf"
)

func init() {
	for _, t := range []string{TableMLAContextModule, TableMLAGenerationModule, TableMLAContext, TableMLAGeneration} {
		tableFamily[t] = "mla"
	}
	tableFamily[TableDSAContextModule] = "sparse_attention"
	tableFamily[TableDSAGenerationModule] = "sparse_attention"
}

// mlaRow is one row of an MLA module or kernel table (the kernel tables have
// no model and gemm_type: "").
type mlaRow struct {
	Model    string  `parquet:"model,optional"`
	KVDtype  string  `parquet:"kv_cache_dtype,optional"`
	GemmType string  `parquet:"gemm_type,optional"`
	Heads    int64   `parquet:"num_heads,optional"`
	Batch    int64   `parquet:"batch_size,optional"`
	ISL      int64   `parquet:"isl,optional"`
	Step     int64   `parquet:"step,optional"`
	TP       int64   `parquet:"tp_size,optional"`
	Latency  float64 `parquet:"latency,optional"`
}

type mlaKey struct {
	model, kv, gemm                   string
	heads, batch, isl, step, tpOfHead int64
}

func loadMLA(path string) ([]mlaRow, error) {
	return loadRows(path, func(r *mlaRow) (mlaKey, bool) {
		return mlaKey{r.Model, r.KVDtype, r.GemmType, r.Heads, r.Batch, r.ISL, r.Step, r.TP},
			r.Heads > 0 && r.Batch > 0 && r.ISL > 0 && validLatency(r.Latency)
	})
}

// mlaTableModel is the shape a module table measured, from that model's
// config.json in ../shared/data/aic/model_configs (the tables' model
// column); "" is the kernel tables' DeepSeek-V3 (the collector's shapes).
type mlaTableModel struct {
	hidden int
	mla    model.MLA
}

var mlaTableModels = map[string]mlaTableModel{
	"deepseek-ai/DeepSeek-V3": {7168, model.MLA{QLoraRank: 1536, KVLoraRank: 512, NopeDim: 128, RopeDim: 64, VDim: 128}},
	"deepseek-ai/DeepSeek-V3.2": {7168, model.MLA{QLoraRank: 1536, KVLoraRank: 512, NopeDim: 128, RopeDim: 64, VDim: 128,
		Indexer: &model.MLAIndexer{Heads: 64, HeadDim: 128, TopK: 2048}}},
	"zai-org/GLM-5": {6144, model.MLA{QLoraRank: 2048, KVLoraRank: 512, NopeDim: 192, RopeDim: 64, VDim: 256,
		Indexer: &model.MLAIndexer{Heads: 32, HeadDim: 128, TopK: 2048}}},
	"": {7168, model.MLA{QLoraRank: 1536, KVLoraRank: 512, NopeDim: 128, RopeDim: 64, VDim: 128}},
}

// mlaShapeDistance is how far two MLA shapes are apart: the sum of |log2|
// of the ratios of the hidden size and every rank and width (q_lora_rank 0
// as 1), plus the indexer's heads and width; +Inf between dense MLA and
// DSA, which run other kernels.
func mlaShapeDistance(h1 int, a *model.MLA, h2 int, b *model.MLA) float64 {
	if (a.Indexer == nil) != (b.Indexer == nil) {
		return math.Inf(1)
	}
	l := func(x, y int) float64 { return math.Abs(math.Log2(float64(max(x, 1)) / float64(max(y, 1)))) }
	d := l(h1, h2) + l(a.QLoraRank, b.QLoraRank) + l(a.KVLoraRank, b.KVLoraRank) + l(a.NopeDim, b.NopeDim) +
		l(a.RopeDim, b.RopeDim) + l(a.VDim, b.VDim)
	if a.Indexer != nil {
		d += l(a.Indexer.Heads, b.Indexer.Heads) + l(a.Indexer.HeadDim, b.Indexer.HeadDim) + l(a.Indexer.TopK, b.Indexer.TopK)
	}
	return d
}

// mlaGrids holds an MLA model's measured attention cores on the model's
// heads per GPU: context (batch × new tokens) and generation (batch × KV
// length), and the prefill's up-projection of the cached context (dense MLA).
type mlaGrids struct {
	ctx, gen *attnGrid
	kvb      model.GEMMShape // kv_b_proj on one GPU
	sparse   bool
	// bmm: SGLang's absorbed decode BMMs when the generation core is the
	// kernel table's (mla_bmm.go); nil otherwise
	bmm *mlaBMM
}

// mlaSetup builds the MLA cores of arch at TP tp (mlaCore), per phase: the
// module table of the nearest version that has one with the model's shape
// family (dense MLA or DSA), else the kernel table (dense MLA only), else
// the roofline with the system's memory model — the last a fallback of every
// MLA layer. The module's own projections are taken off its times (see
// mlaCore), so that the pass adds the model's at their real shapes and
// format once for the pass's tokens, prefill and decode together.
func (m *Model) mlaSetup(arch *model.Arch, sys *hardware.System, tp int, kd model.Dtype, sysDir string, opt Options) (*mlaGrids, error) {
	mg := &mlaGrids{kvb: arch.MLAUpProjection(tp), sparse: arch.MLA.Indexer != nil}
	layers := arch.FullKVLayers() // the MLA layers (beside Kimi-K3's KDA ones)
	heads := arch.Heads / tp
	ad := arch.AttentionDtype()
	peak := perf.NewMLACore(arch.MLA, heads, kd.Bytes(), ad, perf.SystemMLARates(sys, ad, 1, 1))
	tables := [][2]string{{TableMLAContextModule, TableMLAContext}, {TableMLAGenerationModule, TableMLAGeneration}}
	if mg.sparse {
		tables = [][2]string{{TableDSAContextModule, ""}, {TableDSAGenerationModule, ""}}
	}
	genTable := ""
	for i, kind := range []attnKind{contextKind, generationKind} {
		var g *attnGrid
		for _, table := range tables[i] {
			if table == "" {
				continue
			}
			var err error
			if g, err = m.moduleGrid(sysDir, opt, table, func(rows []mlaRow) (*attnGrid, error) {
				return m.mlaCore(rows, kind, table, arch, tp, kd, sys, peak, layers)
			}); err != nil {
				return nil, err
			}
			if g != nil {
				if kind == generationKind {
					genTable = table
				}
				break
			}
		}
		if g == nil {
			em := newEmpiricalMemory(sys)
			emp := perf.NewMLACore(arch.MLA, heads, kd.Bytes(), ad, perf.SystemMLARates(sys, ad, 1, em.bw/sys.MemBW))
			g = rooflineMLAGrid(kind, peak, emp, em.latencyS)
			m.fallback(opOfAttnKind(kind), layers, fmt.Sprintf("%s: no MLA table for %s's shape; its attention core priced by the roofline with the system's memory model",
				tables[i][0], arch.Name))
		}
		if kind == contextKind {
			mg.ctx = g
		} else {
			mg.gen = g
		}
	}
	if opt.Backend == sglangBackend && genTable == TableMLAGeneration {
		mg.bmm = m.sglangMLABMM(arch, tp, sysDir, opt)
	}
	return mg, nil
}

// mlaRoofline is an MLA core's time at peak for b sequences of y tokens
// (context: new tokens, no cached prefix) or b decodes at a KV length of y
// (the current token included; a DSA query keeps min(y, TopK) keys).
func mlaRoofline(c *perf.MLACore, kind attnKind, b, y float64) float64 {
	if kind == contextKind {
		return b * c.ContextSeconds(y, 0)
	}
	return c.GenerationSeconds(b, b*(y-1), b*math.Min(y, c.TopK()))
}

// mlaCore builds one phase's grid of the attention core of the model's MLA
// layers from a module or kernel table's rows:
//
//	core(b, y) = T(b, y) − Σ_proj G(m, N, K)        (module tables)
//	core(b, y) = T(b, y)                            (kernel tables)
//
// T the measured time of the table model at the heads per GPU read, G the
// module's own projections (model.Arch.MLAProjections of the table model's
// shape at those heads) on the bf16 GEMM grid at m = b·y tokens (context)
// or b (generation) — the module rows read are bf16's — and never below the
// core's roofline. Rows: the table model nearest the model's shape
// (mlaShapeDistance), the model's KV dtype (else bf16), gemm_type bfloat16
// (else the first), the model's heads per GPU (else the nearest in log2, the
// larger on a tie), context rows without a cached prefix. A shape or head
// count not the model's scales each cell by the ratio of the two cores'
// rooflines (a fallback of every MLA layer, noted). Errors: no rows.
func (m *Model) mlaCore(rows []mlaRow, kind attnKind, table string, arch *model.Arch, tp int, kd model.Dtype,
	sys *hardware.System, peak *perf.MLACore, layers int) (*attnGrid, error) {
	heads := int64(arch.Heads / tp)
	// the table model nearest the model's shape
	best, bestD, names := nearestTableModel(rows, func(n string) (float64, bool) {
		tm, ok := mlaTableModels[n]
		if !ok {
			return 0, false
		}
		return mlaShapeDistance(arch.Hidden, arch.MLA, tm.hidden, &tm.mla), true
	})
	if math.IsInf(bestD, 1) {
		return nil, fmt.Errorf("no rows for a model of %s's attention (measured: %v)", arch.Name, names)
	}
	tm := mlaTableModels[best]
	module := best != ""
	pick := func(want func(*mlaRow) bool) []*mlaRow {
		var out []*mlaRow
		for i := range rows {
			r := &rows[i]
			if r.Model == best && want(r) && (kind == generationKind || !module || r.Step == 0) {
				out = append(out, r)
			}
		}
		return out
	}
	kv := string(kd)
	sel := pick(func(r *mlaRow) bool { return r.KVDtype == kv })
	if len(sel) == 0 {
		kv = string(model.BF16)
		sel = pick(func(r *mlaRow) bool { return r.KVDtype == kv })
	}
	gemms := map[string]bool{}
	for _, r := range sel {
		gemms[r.GemmType] = true
	}
	gemm := string(model.BF16)
	if !gemms[gemm] {
		gemm = ""
		for g := range gemms {
			if gemm == "" || g < gemm {
				gemm = g
			}
		}
	}
	measHeads := nearestHeads(sel, heads, func(r *mlaRow) bool { return r.GemmType == gemm })
	if measHeads == 0 {
		return nil, fmt.Errorf("no rows of %s", arch.Name)
	}
	length := func(r *mlaRow) float64 {
		switch {
		case kind == contextKind:
			return float64(r.ISL)
		case module:
			return float64(r.Step)
		}
		return float64(r.ISL + r.Step)
	}
	var picked []*mlaRow
	for _, r := range sel {
		if r.GemmType == gemm && r.Heads == measHeads {
			picked = append(picked, r)
		}
	}
	ad := arch.AttentionDtype()
	rates := perf.SystemMLARates(sys, ad, 1, 1)
	meas := perf.NewMLACore(&tm.mla, int(measHeads), kd.Bytes(), ad, rates)
	tmArch := &model.Arch{Hidden: tm.hidden, Heads: int(measHeads), MLA: &tm.mla}
	proj := tmArch.MLAProjections(1)
	same := measHeads == heads && mlaShapeDistance(arch.Hidden, arch.MLA, tm.hidden, &tm.mla) == 0
	g := &attnGrid{kind: kind, sqrtLen: kind == contextKind, mla: peak, scale: 1, measuredHeads: measHeads}
	g.fromRows(picked, length, func(b, y, t float64) float64 {
		if module {
			tokens := b
			if kind == contextKind {
				tokens = b * y
			}
			for _, p := range proj {
				t -= m.gemmBF16.Seconds(tokens, float64(p.N), float64(p.K))
			}
		}
		return onModelShape(t, mlaRoofline(meas, kind, b, y), mlaRoofline(peak, kind, b, y), same)
	})
	if !same {
		m.fallback(opOfAttnKind(kind), layers, fmt.Sprintf("%s: %s's MLA attention (%d heads per GPU) not measured; %s's at %d heads, scaled by the ratio of their rooflines",
			table, arch.Name, heads, modelLabel(best), measHeads))
	}
	if kv != string(kd) {
		m.notes = append(m.notes, fmt.Sprintf("%s has no %s KV cache rows; bfloat16 used", table, kd))
	}
	return g, nil
}

func modelLabel(name string) string {
	if name == "" {
		return "DeepSeek-V3 (kernel table)"
	}
	return name
}

// rooflineMLAGrid is the stand-in of a missing MLA table (mlaSetup): the
// core's roofline with the system's memory model on a grid of powers of two
// (as rooflineAttnGrid): T = emp(b, y) + 3·c, emp the core at bandwidth
// W·s, c the memory-op constant of each of its three kernels (the decode's
// two absorbed GEMMs and attention; prefill's up-projection, attention and
// the cache write).
func rooflineMLAGrid(kind attnKind, peak, emp *perf.MLACore, latencyS float64) *attnGrid {
	g := &attnGrid{kind: kind, sqrtLen: kind == contextKind, mla: peak, scale: 1}
	g.powersOfTwo(func(b, y float64) float64 { return mlaRoofline(emp, kind, b, y) + 3*latencyS })
	return g
}

// onModelShape is a measured cell t of a table model's core on the
// simulated model: never below the measured shape's roofline measRoof, and,
// when the shapes differ (same false), scaled by the ratio of the model's
// roofline to it.
func onModelShape(t, measRoof, modelRoof float64, same bool) float64 {
	t = math.Max(t, measRoof)
	if !same {
		t *= modelRoof / measRoof
	}
	return t
}

// moduleGrid builds a grid from table's rows of the nearest version
// (locate) with build: nil when there is no such table or build fails (its
// error noted, the caller's stand-in follows); the table read is a source.
// Errors: the file does not load.
func (m *Model) moduleGrid(sysDir string, opt Options, table string, build func([]mlaRow) (*attnGrid, error)) (*attnGrid, error) {
	src, err := locate(sysDir, m.system, opt.Backend, opt.Version, table)
	if err != nil {
		return nil, nil
	}
	rows, err := loadMLA(src.Path)
	if err != nil {
		return nil, err
	}
	g, err := build(rows)
	if err != nil {
		m.notes = append(m.notes, fmt.Sprintf("%s (%s): %v", table, src.ReadFrom, err))
		return nil, nil
	}
	m.sources = append(m.sources, src)
	return g, nil
}

// nearestTableModel is the rows' model nearest the simulated one by
// dist(name) (false: a model the simulator does not know), of two at one
// distance the one with more rows, then the first by name; bestD is +Inf
// and best "" when none is known; names are the rows' models, sorted.
func nearestTableModel(rows []mlaRow, dist func(string) (float64, bool)) (best string, bestD float64, names []string) {
	count := map[string]int{}
	for i := range rows {
		count[rows[i].Model]++
	}
	for n := range count {
		names = append(names, n)
	}
	sort.Strings(names)
	bestD = math.Inf(1)
	for _, n := range names {
		if d, ok := dist(n); ok && (d < bestD || (d == bestD && count[n] > count[best])) {
			best, bestD = n, d
		}
	}
	return best, bestD, names
}

// powersOfTwo sets g's batches and lengths to the powers of two up to 2^20
// and each cell to f(b, y) (the roofline stand-in grids).
func (g *attnGrid) powersOfTwo(f func(b, y float64) float64) {
	g.batches, g.lengths = nil, nil
	for v := 1.0; v <= 1<<20; v *= 2 {
		g.batches = append(g.batches, v)
		g.lengths = append(g.lengths, v)
	}
	g.sec = make([][]float64, len(g.batches))
	for i, b := range g.batches {
		g.sec[i] = make([]float64, len(g.lengths))
		for j, y := range g.lengths {
			g.sec[i][j] = f(b, y)
		}
	}
}

// nearestHeads is the head count per GPU of the rows keep accepts nearest
// want in log2 (the larger on a tie); 0 when it accepts none.
func nearestHeads(rows []*mlaRow, want int64, keep func(*mlaRow) bool) int64 {
	best, bd := int64(0), math.Inf(1)
	for _, r := range rows {
		if !keep(r) {
			continue
		}
		d := math.Abs(math.Log2(float64(r.Heads) / float64(want)))
		if d < bd || (d == bd && r.Heads > best) {
			best, bd = r.Heads, d
		}
	}
	return best
}

// fromRows sets g's batches and lengths to those of rows (length(r) a
// row's length axis) and each cell to cell(b, y, t) of the first row there,
// t its latency in seconds; then fills and makes the grid monotone.
func (g *attnGrid) fromRows(rows []*mlaRow, length func(*mlaRow) float64, cell func(b, y, t float64) float64) {
	var bs, ys []float64
	for _, r := range rows {
		bs, ys = append(bs, float64(r.Batch)), append(ys, length(r))
	}
	g.batches, g.lengths = sortedUnique(bs), sortedUnique(ys)
	g.sec = unmeasured(len(g.batches), len(g.lengths))
	for _, r := range rows {
		i, j := indexOf(g.batches, float64(r.Batch)), indexOf(g.lengths, length(r))
		if !math.IsNaN(g.sec[i][j]) {
			continue // first row wins
		}
		g.sec[i][j] = cell(g.batches[i], g.lengths[j], r.Latency*1e-3)
	}
	g.fill()
	g.monotone()
}

// mlaContextSeconds is one MLA layer's prefill attention of the pass: the
// measured core (contextOn: the lookup at the chunks' root-mean-square
// length, scaled to their new pairs) plus, for dense MLA, kv_b_proj over
// the chunks' cached context (vLLM up-projects it in every chunk's pass;
// the core rows have no cached prefix) at the attention weights' format.
func (m *Model) mlaContextSeconds(b *perf.Batch) float64 {
	mg := m.hy.mla
	t := contextOn(b, mg.ctx)
	if mg.sparse {
		return t
	}
	var p float64
	for i := range b.Prefill {
		if b.Prefill[i].NewTokens > 0 {
			p += float64(b.Prefill[i].PrefixTokens)
		}
	}
	if p > 0 {
		t += m.gemmA.Seconds(p, float64(mg.kvb.N), float64(mg.kvb.K))
	}
	return t
}

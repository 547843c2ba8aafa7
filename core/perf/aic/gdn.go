package aic

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// TableGDN is the Gated DeltaNet kernel table (linear_attention/<backend>/
// <version>/gdn_perf.parquet): AIConfigurator's collector times each kernel
// of vLLM's (or SGLang's) GDN layer alone, per GPU (its head counts are the
// TP shard's), for a model's shape (d_model, d_conv, key and value heads
// and dims): in phase "context" causal_conv1d_fn and the chunked delta rule
// (chunk_gated_delta_rule, or its FlashInfer build) at batch × seq_len, in
// phase "generation" causal_conv1d_update and the fused recurrent rule at
// batch (one token each).
const TableGDN = "gdn_perf"

// TableKDA is the Kimi Delta Attention kernel table (kda/<backend>/
// <version>/kda_perf.parquet, gdn_perf's columns): AIConfigurator's
// collector times the kernels of a KDA layer per GPU for Kimi-K3's shape:
// in phase "context" the fused q/k/v causal convolution
// (causal_conv1d_fn_qkv3) and the chunked rule (vLLM's flashkda_fwd,
// SGLang's chunk_kda), in phase "generation" vLLM's fused_kda_decode (the
// convolution update, the recurrent rule and the gated RMSNorm in one
// kernel) and the causal_conv1d_update and
// fused_recurrent_kda_packed_decode pair SGLang runs, and in phase
// "verify" the speculative-decoding kernels (not read).
const TableKDA = "kda_perf"

// OpLinearAttention is the Fallbacks key of the linear-attention kernels.
const OpLinearAttention = "linear_attention"

func init() {
	tableFamily[TableGDN] = "linear_attention"
	tableFamily[TableMamba2] = "linear_attention"
	tableFamily[TableKDA] = "kda"
}

type gdnRow struct {
	Kernel  string  `parquet:"kernel_source,optional"`
	Phase   string  `parquet:"phase,optional"`
	Batch   int64   `parquet:"batch_size,optional"`
	SeqLen  int64   `parquet:"seq_len,optional"`
	DModel  int64   `parquet:"d_model,optional"`
	DConv   int64   `parquet:"d_conv,optional"`
	KHeads  int64   `parquet:"num_k_heads,optional"`
	KDim    int64   `parquet:"head_k_dim,optional"`
	VHeads  int64   `parquet:"num_v_heads,optional"`
	VDim    int64   `parquet:"head_v_dim,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type gdnShape struct{ dModel, dConv, kHeads, kDim, vHeads, vDim int64 }

type gdnKey struct {
	kernel, phase string
	batch, seq    int64
	shape         gdnShape
}

func (r *gdnRow) shape() gdnShape {
	return gdnShape{r.DModel, r.DConv, r.KHeads, r.KDim, r.VHeads, r.VDim}
}

func loadGDN(path string) ([]gdnRow, error) {
	return loadRows(path, func(r *gdnRow) (gdnKey, bool) {
		return gdnKey{r.Kernel, r.Phase, r.Batch, r.SeqLen, r.shape()},
			r.Batch > 0 && r.SeqLen > 0 && r.KHeads > 0 && r.VHeads > 0 && r.KDim > 0 && r.VDim > 0 && validLatency(r.Latency)
	})
}

// gdnRole is one of the four kernels of a GDN layer.
type gdnRole int

const (
	gdnContextConv gdnRole = iota // causal_conv1d_fn
	gdnContextRule                // chunk_gated_delta_rule*
	gdnGenConv                    // causal_conv1d_update
	gdnGenRule                    // the fused recurrent delta rule
	numGDNRoles
)

// gdnKernels says which kernels of a table play the roles: Gated
// DeltaNet's (gdn_perf) or Kimi Delta Attention's (kda_perf, kda), as vLLM
// runs them or as SGLang does (vllm false).
type gdnKernels struct{ kda, vllm bool }

// fusedDecode reports whether one kernel is the whole generation phase
// (vLLM's fused_kda_decode: gdnGenRule alone, no gdnGenConv).
func (k gdnKernels) fusedDecode() bool { return k.kda && k.vllm }

// phaseRoles are the roles a phase needs, context's then generation's.
func (k gdnKernels) phaseRoles() [2][]gdnRole {
	gen := []gdnRole{gdnGenConv, gdnGenRule}
	if k.fusedDecode() {
		gen = []gdnRole{gdnGenRule}
	}
	return [2][]gdnRole{{gdnContextConv, gdnContextRule}, gen}
}

// sglangKDAFusedDecode is SGLang's fused KDA decode kernel, which it runs
// on the 12-head shard (Kimi-K3 at TP 8) in place of the
// causal_conv1d_update and fused_recurrent_kda_packed_decode pair (the
// kda_perf tables' collection notes; the only decode kernel they time at
// that shape).
const sglangKDAFusedDecode = "kda_fused_decode"

// role is the role of a row's kernel, false for a kernel none plays
// (another phase's, another engine's, a verify kernel). KDA as vLLM runs
// it (vllm/model_executor/layers/kda.py on the Kimi-K3 build the tables
// were collected with, as AIConfigurator's kimi_k3 model reads them):
// causal_conv1d_fn_qkv3 and flashkda_fwd in prefill, fused_kda_decode in
// decode; as SGLang runs it: chunk_kda in prefill, causal_conv1d_update and
// fused_recurrent_kda_packed_decode in decode, or kda_fused_decode alone
// where it is the shape's decode kernel.
func (k gdnKernels) role(r *gdnRow) (gdnRole, bool) {
	if k.kda {
		switch {
		case r.Phase == "context" && strings.HasPrefix(r.Kernel, "causal_conv1d_fn"):
			return gdnContextConv, true
		case r.Phase == "context" && (k.vllm && r.Kernel == "flashkda_fwd" || !k.vllm && r.Kernel == "chunk_kda"):
			return gdnContextRule, true
		case r.Phase == "generation" && k.vllm && r.Kernel == "fused_kda_decode":
			return gdnGenRule, true
		case r.Phase == "generation" && !k.vllm && r.Kernel == "causal_conv1d_update":
			return gdnGenConv, true
		case r.Phase == "generation" && !k.vllm && (r.Kernel == "fused_recurrent_kda_packed_decode" || r.Kernel == sglangKDAFusedDecode):
			return gdnGenRule, true
		}
		return 0, false
	}
	switch {
	case r.Phase == "context" && r.Kernel == "causal_conv1d_fn":
		return gdnContextConv, true
	case r.Phase == "context" && strings.HasPrefix(r.Kernel, "chunk_"):
		return gdnContextRule, true
	case r.Phase == "generation" && r.Kernel == "causal_conv1d_update":
		return gdnGenConv, true
	case r.Phase == "generation" && (strings.Contains(r.Kernel, "recurrent") || strings.HasSuffix(r.Kernel, "delta_rule_update")):
		return gdnGenRule, true
	}
	return 0, false
}

// gdnGrid is one kernel's measured times for one shape: by batch and
// seq_len (context) or by batch (generation: one seq_len), seconds. Only
// batches measured at every seq_len of the grid are kept.
type gdnGrid struct {
	kernel        string
	batches, seqs []float64
	sec           [][]float64 // [batch][seq]
	roof          func(b, s float64) float64
	scale         float64 // stand-in shape: roofline ratio applied to every cell
}

// newGDNGrid builds the grid of role from rows of shape sh (nil when none
// is complete). A table timing two kernels for a role (none does today)
// gives the first by name. roof prices the kernel at (batch, seq) for the
// model.
func newGDNGrid(rows []gdnRow, kern gdnKernels, role gdnRole, sh gdnShape, roof func(b, s float64) float64) *gdnGrid {
	kernel := ""
	for i := range rows {
		r := &rows[i]
		if rl, ok := kern.role(r); ok && rl == role && r.shape() == sh && (kernel == "" || r.Kernel < kernel) {
			kernel = r.Kernel
		}
	}
	if kernel == "" {
		return nil
	}
	cells := map[[2]int64]float64{}
	var bs, ss []float64
	for i := range rows {
		r := &rows[i]
		if r.Kernel != kernel || r.shape() != sh {
			continue
		}
		if rl, ok := kern.role(r); !ok || rl != role {
			continue
		}
		cells[[2]int64{r.Batch, r.SeqLen}] = r.Latency * 1e-3
		bs, ss = append(bs, float64(r.Batch)), append(ss, float64(r.SeqLen))
	}
	g := &gdnGrid{kernel: kernel, seqs: sortedUnique(ss), roof: roof, scale: 1}
	for _, b := range sortedUnique(bs) {
		row := make([]float64, len(g.seqs))
		full := true
		for j, s := range g.seqs {
			v, ok := cells[[2]int64{int64(b), int64(s)}]
			full = full && ok
			row[j] = v
		}
		if full {
			g.batches = append(g.batches, b)
			g.sec = append(g.sec, row)
		}
	}
	if len(g.batches) == 0 {
		return nil
	}
	return g
}

// Seconds is the kernel's time for batch b at seq_len s: linear in s within
// a batch row and in b between rows; outside the measured axes the nearest
// measured cell's efficiency against the roofline is kept (keepEfficiency),
// never below the roofline.
func (g *gdnGrid) Seconds(b, s float64) float64 {
	bc, sc := clampTo(g.batches, b), clampTo(g.seqs, s)
	i0, i1, wb, _ := bracket(g.batches, bc)
	j0, j1, ws, _ := bracket(g.seqs, sc)
	at := func(i int) float64 { return lerp(g.sec[i][j0], g.sec[i][j1], ws) }
	t := lerp(at(i0), at(i1), wb) * g.scale
	if bc == b && sc == s {
		return t
	}
	return keepEfficiency(t, g.roof(bc, sc), g.roof(b, s))
}

// gdnCosts prices a pass's linear-attention kernels of one layer.
type gdnCosts struct {
	grids [numGDNRoles]*gdnGrid // gdnGenConv nil when the decode kernel is fused
	core  *perf.GDNCore         // the roofline at the system's empirical memory model
}

// contextSeconds is the context kernels for s prefill chunks of n new
// tokens in all: the grid at batch s and the chunks' mean length.
func (c *gdnCosts) contextSeconds(n, s float64) float64 {
	if n <= 0 {
		return 0
	}
	l := n / s
	return c.grids[gdnContextConv].Seconds(s, l) + c.grids[gdnContextRule].Seconds(s, l)
}

// generationSeconds is the generation kernels for d decodes.
func (c *gdnCosts) generationSeconds(d float64) float64 {
	if d <= 0 {
		return 0
	}
	t := c.grids[gdnGenRule].Seconds(d, 1)
	if g := c.grids[gdnGenConv]; g != nil {
		t += g.Seconds(d, 1)
	}
	return t
}

// gdnSetup finds the kernels of the model's linear-attention layers (Gated
// DeltaNet's in gdn_perf, Kimi Delta Attention's in kda_perf): for each
// phase, the nearest table version with all of its kernels for the model's
// shape per GPU; else the nearest measured shape (value heads per GPU, then
// d_model, in log2) of the nearest version, scaled by the roofline ratio (a
// fallback); else the roofline with the system's memory model (a fallback).
// Errors name a table that does not load.
func (m *Model) gdnSetup(arch *model.Arch, sys *hardware.System, tp int, sysDir string, opt Options) (*gdnCosts, error) {
	l := arch.Linear
	sh := gdnShape{dModel: int64(arch.Hidden), dConv: int64(l.ConvKernel), kHeads: int64(l.KeyHeads / tp), kDim: int64(l.KeyDim),
		vHeads: int64(l.ValueHeads / tp), vDim: int64(l.ValueDim)}
	em := newEmpiricalMemory(sys)
	core := perf.NewGDNCore(l, tp, sys.BF16Flops, em.bw)
	kern := gdnKernels{kda: l.KDA, vllm: opt.Backend == "vllm"}
	table := TableGDN
	if l.KDA {
		table = TableKDA
	}
	genRule := func(b, _ float64) float64 { return core.RuleSeconds(b, b, false) + em.latencyS }
	if kern.fusedDecode() {
		genRule = func(b, _ float64) float64 { return core.GenerationSeconds(b) + em.latencyS }
	}
	roofs := [numGDNRoles]func(b, s float64) float64{
		func(b, s float64) float64 { return core.ConvSeconds(b*s, b) + em.latencyS },
		func(b, s float64) float64 { return core.RuleSeconds(b*s, b, true) + em.latencyS },
		func(b, _ float64) float64 { return core.ConvSeconds(b, b) + em.latencyS },
		genRule,
	}
	c := &gdnCosts{core: core}
	layers := arch.LinearLayers()
	if l.Mamba2 {
		// gdn_perf times Gated DeltaNet's kernels, not Mamba-2's (whose
		// mamba2_perf tables are TensorRT-LLM's only): both phases on the
		// roofline, a stand-in of every Mamba-2 layer; for TensorRT-LLM
		// its tables' convolution kernels (mamba2Convs)
		for role := range c.grids {
			c.grids[role] = rooflineGDNGrid(roofs[role], gdnRole(role))
		}
		what := "no table times their kernels for this engine (gdn_perf is Gated DeltaNet's)"
		if opt.Backend == "trtllm" {
			read, err := m.mamba2Convs(c, sh, roofs, sys, em, sysDir, opt)
			if err != nil {
				return nil, err
			}
			if read != "" {
				what = "the convolution kernels are " + read + "; mamba2_perf times no SSD scan or state update"
			}
		}
		m.fallback(OpLinearAttention, layers, "Mamba-2 mixers: "+what+
			"; priced by the roofline (perf.GDNCore, the SSD chunked scan in prefill) with the system's memory model")
		m.fallbacks[OpLinearAttention] += layers
		return c, nil
	}
	grids := func(rows []gdnRow, roles []gdnRole, sh gdnShape) ([]*gdnGrid, bool) {
		out := make([]*gdnGrid, len(roles))
		for i, role := range roles {
			out[i] = newGDNGrid(rows, kern, role, sh, roofs[role])
		}
		for i, g := range out {
			if g != nil {
				continue
			}
			// a fused decode kernel (SGLang's kda_fused_decode) leaves no
			// convolution update to time
			if rule := out[len(out)-1]; roles[i] == gdnGenConv && rule != nil && rule.kernel == sglangKDAFusedDecode {
				rule.roof = func(b, _ float64) float64 { return core.GenerationSeconds(b) + em.latencyS }
				continue
			}
			return nil, false
		}
		return out, true
	}
	var firstRows []gdnRow
	var firstSrc Source
	for p, roles := range kern.phaseRoles() {
		name := [2]string{"context", "generation"}[p]
		exclude := map[string]string{}
		found := false
		for !found {
			src, err := locateExcept(sysDir, m.system, opt.Backend, opt.Version, table, exclude)
			if err != nil {
				break
			}
			rows, err := loadGDN(src.Path)
			if err != nil {
				return nil, err
			}
			if firstRows == nil {
				firstRows, firstSrc = rows, src
			}
			gs, ok := grids(rows, roles, sh)
			if !ok {
				exclude[src.ReadFrom] = fmt.Sprintf("no %s kernels for d_model %d, %d/%d key/value heads per GPU", name, sh.dModel, sh.kHeads, sh.vHeads)
				continue
			}
			src.Table = table + " (" + name + ")"
			m.sources = append(m.sources, src)
			for i, role := range roles {
				c.grids[role] = gs[i]
			}
			found = true
		}
		if found {
			continue
		}
		if near, ok := nearestGDNShape(firstRows, kern, roles, sh); ok {
			gs, _ := grids(firstRows, roles, near)
			nearCore := perf.NewGDNCore(&model.LinearAttention{KeyHeads: int(near.kHeads), KeyDim: int(near.kDim),
				ValueHeads: int(near.vHeads), ValueDim: int(near.vDim), ConvKernel: int(near.dConv), StateBytes: l.StateBytes, KDA: l.KDA}, 1, sys.BF16Flops, em.bw)
			for i, g := range gs {
				role := roles[i]
				g.scale = gdnScale(role, kern, core, nearCore, g)
				c.grids[role] = g
			}
			src := firstSrc
			src.Table = table + " (" + name + ", stand-in shape)"
			m.sources = append(m.sources, src)
			m.fallback(OpLinearAttention, layers, fmt.Sprintf("%s (%s): no version measured the %s kernels for d_model %d, %d/%d key/value heads per GPU of %d/%d; d_model %d, %d/%d heads scaled by the roofline ratio",
				table, src.ReadFrom, name, sh.dModel, sh.kHeads, sh.vHeads, sh.kDim, sh.vDim, near.dModel, near.kHeads, near.vHeads))
			continue
		}
		for _, role := range roles {
			c.grids[role] = rooflineGDNGrid(roofs[role], role)
		}
		m.fallback(OpLinearAttention, layers, fmt.Sprintf("%s: no %s kernel rows; priced by the roofline (perf.GDNCore) with the system's memory model",
			table, name))
	}
	return c, nil
}

// gdnScale is the roofline ratio of the model's kernel to the stand-in
// shape's at the grid's middle cell (the ratio of two memory- or
// compute-bound rooflines is nearly flat across the grid).
func gdnScale(role gdnRole, kern gdnKernels, model, near *perf.GDNCore, g *gdnGrid) float64 {
	b, s := g.batches[len(g.batches)/2], g.seqs[len(g.seqs)/2]
	var num, den float64
	switch role {
	case gdnContextConv:
		num, den = model.ConvSeconds(b*s, b), near.ConvSeconds(b*s, b)
	case gdnContextRule:
		num, den = model.RuleSeconds(b*s, b, true), near.RuleSeconds(b*s, b, true)
	case gdnGenConv:
		num, den = model.ConvSeconds(b, b), near.ConvSeconds(b, b)
	case gdnGenRule:
		if kern.fusedDecode() {
			num, den = model.GenerationSeconds(b), near.GenerationSeconds(b)
			break
		}
		fallthrough
	default:
		num, den = model.RuleSeconds(b, b, false), near.RuleSeconds(b, b, false)
	}
	if !(den > 0) {
		return 1
	}
	return num / den
}

// nearestGDNShape is the measured shape with both kernels of a phase
// nearest to want: value heads per GPU first, then d_model, in log2 (ties:
// the larger, then the more key heads, then the longer convolution).
func nearestGDNShape(rows []gdnRow, kern gdnKernels, roles []gdnRole, want gdnShape) (gdnShape, bool) {
	has := map[gdnShape]map[gdnRole]bool{}
	for i := range rows {
		r := &rows[i]
		rl, ok := kern.role(r)
		if !ok {
			continue
		}
		if has[r.shape()] == nil {
			has[r.shape()] = map[gdnRole]bool{}
		}
		has[r.shape()][rl] = true
	}
	var cands []gdnShape
	for s, h := range has {
		all := true
		for _, role := range roles {
			all = all && h[role]
		}
		if all && s.kDim == want.kDim && s.vDim == want.vDim {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return gdnShape{}, false
	}
	dist := func(s gdnShape) (float64, float64) {
		return math.Abs(math.Log2(float64(s.vHeads) / float64(want.vHeads))), math.Abs(math.Log2(float64(s.dModel) / float64(want.dModel)))
	}
	sort.Slice(cands, func(i, j int) bool {
		a1, a2 := dist(cands[i])
		b1, b2 := dist(cands[j])
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		if cands[i].vHeads != cands[j].vHeads {
			return cands[i].vHeads > cands[j].vHeads
		}
		if cands[i].dModel != cands[j].dModel {
			return cands[i].dModel > cands[j].dModel
		}
		// the shapes come from a map: the rest of the shape decides a tie
		if cands[i].kHeads != cands[j].kHeads {
			return cands[i].kHeads > cands[j].kHeads
		}
		return cands[i].dConv > cands[j].dConv
	})
	return cands[0], true
}

// rooflineGDNGrid is a grid of the roofline alone (powers of two up to
// 2^20 on both axes), for a kernel no table measured.
func rooflineGDNGrid(roof func(b, s float64) float64, role gdnRole) *gdnGrid {
	g := &gdnGrid{kernel: "roofline", roof: roof, scale: 1, seqs: []float64{1}}
	if role == gdnContextConv || role == gdnContextRule {
		g.seqs = nil
		for v := 1.0; v <= 1<<20; v *= 2 {
			g.seqs = append(g.seqs, v)
		}
	}
	for v := 1.0; v <= 1<<20; v *= 2 {
		g.batches = append(g.batches, v)
		row := make([]float64, len(g.seqs))
		for j, s := range g.seqs {
			row[j] = roof(v, s)
		}
		g.sec = append(g.sec, row)
	}
	return g
}

package aic

import (
	"fmt"
	"math"
	"strings"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// TableMoE is the measured fused-MoE kernel table (moe/<backend>/<version>).
const TableMoE = "moe_perf"

// moeRow is one row of moe_perf: the time (ms) of one MoE layer's routed
// experts on one GPU when num_tokens tokens (all data-parallel ranks' tokens
// together) enter it, experts split moe_tp ways or spread over moe_ep GPUs.
type moeRow struct {
	Dtype        string  `parquet:"moe_dtype,optional"`
	Tokens       int64   `parquet:"num_tokens,optional"`
	Hidden       int64   `parquet:"hidden_size,optional"`
	Inter        int64   `parquet:"inter_size,optional"`
	TopK         int64   `parquet:"topk,optional"`
	Experts      int64   `parquet:"num_experts,optional"`
	TP           int64   `parquet:"moe_tp_size,optional"`
	EP           int64   `parquet:"moe_ep_size,optional"`
	Distribution string  `parquet:"distribution,optional"`
	Latency      float64 `parquet:"latency,optional"`
	// Kernel is kernel_source: the fused-MoE implementation timed (some
	// tables time two for a dtype: h200_sxm vLLM 0.24.0's w4a16_mxfp4 rows
	// are OAI Triton's and Marlin's)
	Kernel string `parquet:"kernel_source,optional"`
}

type moeKey struct {
	dtype, dist, kernel            string
	tokens, h, inter, k, e, tp, ep int64
}

// loadMoE keeps the first row of each point of each kernel; a curve takes
// the first row of each token count in file order (newMoECurve), so without
// a kernel asked for it reads what the first kernel listed measured.
func loadMoE(path string) ([]moeRow, error) {
	return loadRows(path, func(r *moeRow) (moeKey, bool) {
		return moeKey{r.Dtype, r.Distribution, r.Kernel, r.Tokens, r.Hidden, r.Inter, r.TopK, r.Experts, r.TP, r.EP},
			r.Tokens > 0 && r.Hidden > 0 && r.Inter > 0 && r.TopK > 0 && r.Experts > 0 && r.TP > 0 && r.EP > 0 && validLatency(r.Latency)
	})
}

// The routings the tables measured (moe_perf's distribution column), from
// AIConfigurator's collector (collector/helper.py: balanced_logits and
// _generate_power_law_distribution behind power_law_logits_v3):
//
//   - MoERoutingBalanced: every expert given the same number of tokens (n·k
//     distinct experts below saturation, every expert above it), the
//     heaviest rank no heavier than the others. moeCurve.Seconds corrects
//     it to uniform random routing (what the roofline assumes).
//   - MoERoutingPowerLaw101, MoERoutingPowerLaw12: each expert's token
//     count drawn from a power law of exponent α (x^−α over [1, 0.8·n]
//     when n·k > E, else over [0.01, 2], rescaled to n·k and rounded), the
//     expert-parallel rank holding the most tokens swapped to rank 0, the
//     rank timed: a few hot experts, fewer distinct experts in a small
//     pass, and the step waiting for the busiest rank in a large one.
//     Priced as measured (no correction).
const (
	MoERoutingBalanced    = "balanced"
	MoERoutingPowerLaw101 = "power_law_1.01"
	MoERoutingPowerLaw12  = "power_law_1.2"
	// MoERoutingAuto is MoERoutingFor's choice for the architecture.
	MoERoutingAuto = "auto"
)

// moeDistribution is the routing read when a table lacks the one asked for
// (moeRouted): balanced, which every table version but a few (h100_sxm and
// h200_sxm SGLang 0.5.6.post2, b300_sxm SGLang 0.5.9, a100_sxm vLLM 0.14.0)
// measured for every shape it measured.
const moeDistribution = MoERoutingBalanced

// MoERoutingFor is the routing AIConfigurator prices a model's experts at,
// by its config.json architecture (AIConfigurator 095f58a, the model
// classes of aic-core/src/aiconfigurator_core/sdk/models/ over the families
// of sdk/common.py ARCHITECTURE_TO_MODEL_FAMILY; ModelConfig's
// workload_distribution "power_law" plus the class's alpha):
//
//   - power_law_1.2: MOEModel (moe.py, _power_law_alpha = 1.2) — Mixtral,
//     gpt-oss, Qwen2-MoE, Qwen3-MoE, MiniMax-M2; Qwen3VLMoEModel (qwen3vl.py,
//     a MOEModel) — Qwen3-VL-MoE; Qwen35Model (qwen35.py, "_1.2") — Qwen3.5.
//   - power_law_1.01: DeepSeekModel (deepseek.py, 1.01; also KIMIK25) —
//     DeepSeek-V3/R1, Kimi-K2.5; DeepSeekV32Model (deepseek_v32.py) —
//     DeepSeek-V3.2, GLM-5 (GlmMoeDsaForCausalLM); DeepSeekV4Model
//     (deepseek_v4.py); KimiK3Model (kimi_k3.py, "_1.01"); HybridMoEModel
//     (hybrid_moe.py, 1.01) — MiMo-V2-Flash, Llama-4; MiniMaxM3Model
//     (minimax_m3.py); NemotronHModel (nemotron_h.py, "follow DeepSeek MoE");
//     Gemma4 (gemma4.py).
//
// An architecture AIConfigurator does not map (DeepseekV2ForCausalLM,
// Qwen3NextForCausalLM, any dense model) is balanced.
func MoERoutingFor(architecture string) string {
	switch architecture {
	case "MixtralForCausalLM", "GptOssForCausalLM", "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM",
		"MiniMaxM2ForCausalLM", "Qwen3VLMoeForConditionalGeneration",
		"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration":
		return MoERoutingPowerLaw12
	case "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM", "GlmMoeDsaForCausalLM",
		"KimiK25ForConditionalGeneration", "KimiK3ForConditionalGeneration",
		"MiMoV2FlashForCausalLM", "Llama4ForConditionalGeneration",
		"MiniMaxM3ForCausalLM", "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration",
		"NemotronHForCausalLM", "Gemma4ForConditionalGeneration":
		return MoERoutingPowerLaw101
	}
	return MoERoutingBalanced
}

// resolveMoERouting is the routing of Options.MoERouting for an
// architecture: "" is balanced, auto MoERoutingFor's.
func resolveMoERouting(routing, architecture string) string {
	if routing == "" {
		return MoERoutingBalanced
	}
	if routing == MoERoutingAuto {
		return MoERoutingFor(architecture)
	}
	return routing
}

// moeDtypeLabel maps a weight format to the tables' moe_dtype of the kernel
// the engine (backend "vllm", "trtllm", ...) runs for it on a GPU of compute
// capability sm (major·10 + minor) with vLLM's --moe-backend moeBackend.
// MXFP4 experts (gpt-oss) run with MXFP8 activations, "w4a8_mxfp4_mxfp8",
// where the engine quantizes the activations on Blackwell:
//
//   - TensorRT-LLM from SM 100 (tensorrt_llm/_torch/model_config.py,
//     ModelConfig.get_mxfp4_quant_algo: W4A8_MXFP4_MXFP8 for the TRTLLM
//     and CUTLASS MoE backends, W4A16_MXFP4 below SM 100; gpt-oss's
//     default backend is TRTLLM on Blackwell, resolve_moe_backend);
//   - vLLM on the SM 100 family with flashinfer_trtllm_afp8 (or
//     VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1: quantization/mxfp4.py
//     get_mxfp4_backend, SM100_FI_MXFP4_MXFP8_TRTLLM; the MXFP4 oracle's
//     FLASHINFER_TRTLLM_MXFP4_MXFP8 later). vLLM's default there is
//     FlashInfer's TRT-LLM-gen kernel with bf16 activations
//     (SM100_FI_MXFP4_BF16), on Hopper OAI's Triton or Marlin kernels: all
//     weight-only, "w4a16_mxfp4".
//
// Everything else is weight-only w4a16_mxfp4 (SGLang too: its tables' kernel
// is chosen by kernel_source, not here).
func moeDtypeLabel(d model.Dtype, backend string, sm int, moeBackend string) string {
	switch d {
	case model.MXFP4:
		if mxfp8Activations(backend, sm, moeBackend) {
			return "w4a8_mxfp4_mxfp8"
		}
		return "w4a16_mxfp4"
	case model.INT4:
		return "int4_wo" // W4A16, the Marlin WNA16 kernels
	}
	return string(d)
}

// mxfp8Activations reports whether the engine quantizes the activations of
// MXFP4 experts to MXFP8 (moeDtypeLabel gives the sources).
func mxfp8Activations(backend string, sm int, moeBackend string) bool {
	switch backend {
	case "trtllm":
		return sm >= 100
	case "vllm":
		return sm >= 100 && sm < 110 && moeBackend == "flashinfer_trtllm_afp8"
	}
	return false
}

// moeLabelDtype is the weight format whose bytes and peak a moe_dtype's
// roofline uses (moeDtypeLabel's inverse; w4a8_mxfp4_mxfp8, MXFP4 weights
// with MXFP8 activations, as MXFP4). ok is false for a label it does not know.
func moeLabelDtype(label string) (model.Dtype, bool) {
	switch label {
	case "w4a16_mxfp4", "w4a8_mxfp4_mxfp8":
		return model.MXFP4, true
	case "int4_wo":
		return model.INT4, true
	}
	d := model.Dtype(label)
	return d, d.Valid()
}

// moeShape is what selects a curve: the model's expert shape and layout.
type moeShape struct {
	h, inter, k, e, tp, ep int64
}

// moeCurve is the measured time of one MoE layer's routed experts on one
// GPU under one routing over the tokens entering it (ascending), with what
// the roofline and the routing correction need.
type moeCurve struct {
	tokens, sec []float64
	shape       moeShape
	// dist is the routing the rows measured (moe_perf's distribution):
	// balanced curves are corrected to uniform routing, power-law ones
	// priced as measured (Seconds)
	dist string
	// scale multiplies the measured times (1, or the roofline ratio when a
	// stand-in shape was measured instead of the model's)
	scale float64
	// perExpertS is the time of reading one more local expert, s, measured
	// on the curve between one token and saturation (see newMoECurve)
	perExpertS float64
	local      float64 // ceil(E / moe_ep)
	// roofline terms (per GPU): expert weight elements, bytes per weight,
	// activation bytes per (token, expert) pair, peak FLOP/s, HBM B/s
	expertW, wBytes, actBytes, flops, memBW float64
}

// newMoECurve builds the curve of dtype label, shape and routing dist from
// rows. The
// per-expert read time is the slope of the measured curve where balanced
// routing adds experts but little compute:
//
//	w = (T(n_sat) − T(1)) / (local − k/moe_ep),  n_sat = E/k
//
// T interpolated linearly on the measured tokens; T(1) touches k experts in
// all (k/moe_ep on this GPU), T(n_sat) every local expert. ok is false when
// the rows hold no such curve.
func newMoECurve(rows []moeRow, label string, s moeShape, sys *hardware.System, ed model.Dtype, dist string) (*moeCurve, bool) {
	var ts []float64
	lat := map[float64]float64{}
	for i := range rows {
		r := &rows[i]
		if r.Dtype == label && r.Distribution == dist && r.Hidden == s.h && r.Inter == s.inter &&
			r.TopK == s.k && r.Experts == s.e && r.TP == s.tp && r.EP == s.ep {
			t := float64(r.Tokens)
			if _, seen := lat[t]; !seen {
				ts = append(ts, t)
				lat[t] = r.Latency * 1e-3
			}
		}
	}
	if len(ts) < 2 {
		return nil, false
	}
	c := &moeCurve{tokens: sortedUnique(ts), shape: s, dist: dist, scale: 1}
	c.sec = make([]float64, len(c.tokens))
	for i, t := range c.tokens {
		c.sec[i] = lat[t]
	}
	// n tokens can always be padded to a larger measured count, so a larger
	// count's time bounds every smaller one's: isolated glitches (b200_sxm
	// vLLM 0.24.0 nvfp4, hidden 6144, 4 tokens: 1.647 ms between 0.069 and
	// 0.142 ms) are lowered, as on the GEMM curves
	padEnvelope(c.sec)
	c.setRoofline(s, sys, ed)
	c.setPerExpert()
	return c, true
}

// moeRouted is the curve of routing (newMoECurve), or the balanced one
// where the rows did not measure that routing for the shape: a table without
// the power-law rows of a shape prices it as every balanced curve is
// priced, corrected to uniform routing.
func moeRouted(rows []moeRow, label string, s moeShape, sys *hardware.System, ed model.Dtype, routing string) (*moeCurve, bool) {
	if routing != moeDistribution {
		if c, ok := newMoECurve(rows, label, s, sys, ed, routing); ok {
			return c, true
		}
	}
	return newMoECurve(rows, label, s, sys, ed, moeDistribution)
}

// setRoofline sets the roofline terms of shape s with experts of dtype ed on
// sys (moeCurve's fields).
func (c *moeCurve) setRoofline(s moeShape, sys *hardware.System, ed model.Dtype) {
	ig := float64((s.inter + s.tp - 1) / s.tp)
	c.local = float64((s.e + s.ep - 1) / s.ep)
	c.expertW = 3 * float64(s.h) * ig
	c.wBytes = ed.Bytes()
	c.actBytes = 2 * (2*float64(s.h) + 4*ig)
	c.flops, c.memBW = sys.Flops(ed), sys.MemBW
}

// setPerExpert sets perExpertS, the slope of the curve from one token to
// saturation (newMoECurve), when the curve starts at one token.
func (c *moeCurve) setPerExpert() {
	s := c.shape
	if c.tokens[0] <= 1 {
		nSat := float64(s.e) / float64(s.k)
		if d := c.local - float64(s.k)/float64(s.ep); d > 0 && nSat > 1 {
			c.perExpertS = math.Max(0, (c.measured(nSat)-c.measured(1))/d)
		}
	}
}

// rooflineMoECurve is the stand-in of a MoE table that measured nothing near
// the model (moeFallback): the balanced-routing roofline of the shape with
// the system's memory model, max(F / P, B / (W·s)) + c (moeCurve.roofline's
// F and B), at 1, 2, 4 … 2^20 tokens; Seconds corrects it to uniform routing
// as it does a measured curve.
func rooflineMoECurve(s moeShape, sys *hardware.System, ed model.Dtype) *moeCurve {
	c := &moeCurve{shape: s, dist: moeDistribution, scale: 1}
	c.setRoofline(s, sys, ed)
	em := newEmpiricalMemory(sys)
	emp := *c
	emp.memBW = em.bw
	for n := 1.0; n <= 1<<20; n *= 2 {
		c.tokens = append(c.tokens, n)
		c.sec = append(c.sec, emp.roofline(n, c.balancedDistinct(n))+em.latencyS)
	}
	c.setPerExpert()
	return c
}

// measured is the balanced curve at n tokens: linear between measured
// token counts; beyond the largest, its efficiency against the balanced
// roofline times the query's (below the smallest, the smallest's time).
func (c *moeCurve) measured(n float64) float64 {
	i0, i1, w, clamped := bracket(c.tokens, n)
	t := lerp(c.sec[i0], c.sec[i1], w) * c.scale
	if clamped && n > c.tokens[len(c.tokens)-1] {
		return keepEfficiency(t, c.roofline(c.tokens[i0], c.balancedDistinct(c.tokens[i0])), c.roofline(n, c.balancedDistinct(n)))
	}
	return t
}

// balancedDistinct is the local experts a balanced routing of n tokens
// touches: min(local, n·k/moe_ep).
func (c *moeCurve) balancedDistinct(n float64) float64 {
	return math.Min(c.local, n*float64(c.shape.k)/float64(c.shape.ep))
}

// uniformDistinct is the local experts uniform routing of n tokens touches
// in expectation (perf.ExpectedDistinctExperts spread over moe_ep GPUs).
func (c *moeCurve) uniformDistinct(n float64) float64 {
	return c.local * perf.ExpectedDistinctExperts(n, int(c.shape.e), int(c.shape.k)) / float64(c.shape.e)
}

// roofline of the experts on one GPU at n tokens reading dist experts:
// max(2·A·W_e / P, (b·dist·W_e + A·act) / B), A = n·k/moe_ep.
func (c *moeCurve) roofline(n, dist float64) float64 {
	a := perf.MoEAssignments(n, int(c.shape.k), int(c.shape.ep))
	return math.Max(2*a*c.expertW/c.flops, (c.wBytes*dist*c.expertW+a*c.actBytes)/c.memBW)
}

// Seconds is the time of the routed experts of one MoE layer on one GPU
// when n tokens enter it. A power-law curve is the measured time of that
// routing (linear between the measured token counts, measured beyond them):
// the rows already read the experts that routing touches and wait for the
// busiest rank, so no correction applies. A balanced curve is corrected to
// tokens routed uniformly at random:
//
//	T(n) = T_balanced(n) − w · (D_balanced(n) − D_uniform(n))
//
// T_balanced the measured curve, D_balanced = min(local, n·k/moe_ep) the
// experts the measured (balanced) routing reads on this GPU, D_uniform the
// expected experts a uniform routing reads (perf.ExpectedDistinctExperts),
// w the measured per-expert read time (newMoECurve). Below saturation
// balanced routing reads n·k distinct experts, more than random tokens hit
// (8 tokens over 128 experts, top 8: 64 against 51.6), so a decode batch
// reads fewer expert weights than the table's kernel did. Never below the
// roofline at D_uniform. n ≤ 0 costs 0.
func (c *moeCurve) Seconds(n float64) float64 {
	if n <= 0 {
		return 0
	}
	if c.dist != moeDistribution {
		return c.measured(n)
	}
	du := c.uniformDistinct(n)
	t := c.measured(n) - c.perExpertS*c.scale*(c.balancedDistinct(n)-du)
	return math.Max(t, c.roofline(n, du))
}

// newMoEStandIn builds the curve of the model's shape from a curve measured
// for another shape of the same dtype and layout: the measured times scaled
// by the ratio of the two shapes' rooflines at saturation,
//
//	scale = R_model(n_sat) / R_measured(n_sat')
//
// so the measured kernel's efficiency carries over. Used when no table
// version measured the model's own shape (the report's notes say which).
func newMoEStandIn(measured *moeCurve, s moeShape, sys *hardware.System, ed model.Dtype) *moeCurve {
	c := *measured
	c.shape = s
	c.setRoofline(s, sys, ed)
	mSat := float64(measured.shape.e) / float64(measured.shape.k)
	qSat := float64(s.e) / float64(s.k)
	c.scale = c.roofline(qSat, c.local) / measured.roofline(mSat, measured.local)
	return &c
}

// nearestMoEShape finds, among the rows of label, layout (tp, ep) and
// routing dist (balanced where the rows hold no such shape of that routing),
// the measured shape nearest to s: the smallest Euclidean distance in log2 of
// hidden × expert intermediate size, experts and top-k (ties: the first in
// (h, inter, k, e) order). ok is false when the layout was not measured in
// that dtype at all. With anyLayout the layout is free too, its log2 moe_tp
// and moe_ep distances added.
func nearestMoEShape(rows []moeRow, label string, s moeShape, anyLayout bool, dist string) (moeShape, bool) {
	if dist != moeDistribution {
		if near, ok := nearestMoEShapeOf(rows, label, s, anyLayout, dist); ok {
			return near, true
		}
	}
	return nearestMoEShapeOf(rows, label, s, anyLayout, moeDistribution)
}

// nearestMoEShapeOf is nearestMoEShape among the rows of routing dist alone.
func nearestMoEShapeOf(rows []moeRow, label string, s moeShape, anyLayout bool, dist string) (moeShape, bool) {
	free := anyLayout
	best, bestD, ok := moeShape{}, math.Inf(1), false
	seen := map[moeShape]bool{}
	for i := range rows {
		r := &rows[i]
		if r.Dtype != label || r.Distribution != dist || (!free && (r.TP != s.tp || r.EP != s.ep)) {
			continue
		}
		c := moeShape{r.Hidden, r.Inter, r.TopK, r.Experts, r.TP, r.EP}
		if seen[c] {
			continue
		}
		seen[c] = true
		d := math.Sqrt(sq(math.Log2(float64(c.h*c.inter)/float64(s.h*s.inter))) +
			sq(math.Log2(float64(c.e)/float64(s.e))) + sq(math.Log2(float64(c.k)/float64(s.k))) +
			sq(math.Log2(float64(c.tp)/float64(s.tp))) + sq(math.Log2(float64(c.ep)/float64(s.ep))))
		if d < bestD || (d == bestD && less(c, best)) {
			best, bestD, ok = c, d, true
		}
	}
	return best, ok
}

func sq(x float64) float64 { return x * x }

func less(a, b moeShape) bool {
	if a.h != b.h {
		return a.h < b.h
	}
	if a.inter != b.inter {
		return a.inter < b.inter
	}
	if a.k != b.k {
		return a.k < b.k
	}
	if a.e != b.e {
		return a.e < b.e
	}
	if a.tp != b.tp {
		return a.tp < b.tp
	}
	return a.ep < b.ep
}

// MaxMoELowPrecisionRatio is the largest plausible median ratio of a
// low-precision MoE curve's time to the same table's bf16 curve (same shape
// and layout) over the token counts ≤ 32 both measured. There the kernel reads expert weights (memory
// bound), so fewer bytes cannot be much slower; launch latency dominates
// the smallest points, where measured fp8_block/bf16 ratios reach 1.02–1.30
// (h200_sxm vLLM 0.14.0–0.19.0, expert-parallel layouts). h200_sxm vLLM
// 0.24.0's fp8 (per-tensor) rows time a FlashInfer kernel 3–6× slower than
// its own bf16 rows.
const MaxMoELowPrecisionRatio = 1.5

// MaxMoEWeightOnly4BitRatio is MaxMoELowPrecisionRatio for 4-bit weight-only
// experts (int4_wo, w4a16_mxfp4): their weights are 0.28 of bf16's bytes
// with bf16 math, so where the kernel reads weights (≤ 32 tokens) it cannot
// be slower than the bf16 kernel. h200_sxm's int4_wo Marlin rows for
// Kimi-K2.5's experts (7168 × 2048, 384 experts, top 8, moe_tp 8) measure a
// median of 0.48× bf16 in vLLM 0.14.0 and 0.45–0.60× in 0.24.0, but 1.24×
// and 1.12× in 0.18.0 and 0.19.0 (1.21 ms at 64 tokens, 20 % of HBM
// bandwidth for their 0.88 GB of touched weights): those did not time the
// kernel vLLM serves with.
const MaxMoEWeightOnly4BitRatio = 1.0

// moeImplausible reports why a curve of a low-precision dtype must not be
// used (its ratio to the bf16 curve of its routing above
// MaxMoELowPrecisionRatio); "" when plausible or not checkable.
func moeImplausible(rows []moeRow, c *moeCurve, label string) string {
	if label == string(model.BF16) {
		return ""
	}
	unit := &hardware.System{MemBW: 1, BF16Flops: 1}
	if c.dist != moeDistribution {
		// the kernel's plausibility is judged where the routing is the
		// same for both dtypes and not drawn at random: the balanced rows
		if b, ok := newMoECurve(rows, label, c.shape, unit, model.BF16, moeDistribution); ok {
			c = b
		}
	}
	ref, ok := newMoECurve(rows, string(model.BF16), c.shape, unit, model.BF16, c.dist)
	if !ok {
		return ""
	}
	var rs []float64
	for _, n := range c.tokens {
		if n > 32 || indexOf(ref.tokens, n) < 0 {
			continue
		}
		rs = append(rs, c.sec[indexOf(c.tokens, n)]/ref.sec[indexOf(ref.tokens, n)])
	}
	bound := MaxMoELowPrecisionRatio
	if label == "int4_wo" || label == "w4a16_mxfp4" {
		bound = MaxMoEWeightOnly4BitRatio
	}
	if med, ok := median(rs); ok && med > bound {
		return fmt.Sprintf("its %s MoE rows take %.2f× its bfloat16 rows at ≤ 32 tokens (median; implausible, want ≤ %.2g)", label, med, bound)
	}
	return ""
}

// routedLabel is the table label of a curve of moe_dtype label: the label,
// with the routing after it when not balanced ("fp8_block, power_law_1.2").
func routedLabel(label string, c *moeCurve) string {
	if c.dist == moeDistribution {
		return label
	}
	return label + ", " + c.dist
}

// moeKernelRows are the rows timing the fused-MoE kernel vLLM's
// --moe-backend names (VLLM_MXFP4_USE_MARLIN=1 is marlin): kernel_source
// naming it ("marlin", "triton" — the older tables' vllm_fused_moe is
// Triton's fused_experts —, "flashinfer_cutlass", "trtllm" for
// flashinfer_trtllm and flashinfer_trtllm_afp8). backend "" or "auto" keeps every row.
func moeKernelRows(rows []moeRow, backend string) []moeRow {
	if backend == "" || backend == "auto" {
		return rows
	}
	want := backend
	if backend == "flashinfer_trtllm" || backend == "flashinfer_trtllm_afp8" {
		want = "trtllm"
	}
	return moeRowsOfKernel(rows, func(kernel string) bool {
		return strings.Contains(kernel, want) || (backend == "triton" && kernel == "vllm_fused_moe")
	})
}

// moeRowsOfKernel are the rows whose kernel_source keep accepts.
func moeRowsOfKernel(rows []moeRow, keep func(kernel string) bool) []moeRow {
	var out []moeRow
	for _, r := range rows {
		if keep(r.Kernel) {
			out = append(out, r)
		}
	}
	return out
}

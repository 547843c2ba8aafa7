package aic

import (
	"fmt"
	"sort"

	"github.com/aisimulate/aisimulate/core/model"
)

// TableMLABMM is SGLang's table of the absorbed MLA decode's two batched
// GEMMs (mla_bmm/<backend>/<version>/mla_bmm_perf.parquet; AIConfigurator's
// collector/sglang/collect_mla_bmm.py): op mla_gen_pre, q_nope (tokens × H/t
// heads × 128) by w_kc (128 → 512), and mla_gen_post, the latent attention
// output (512) by w_vc (512 → 128), DeepSeek-V3's widths; bmm_dtype bfloat16
// (torch.bmm) or fp8 (per_tensor_quant_mla_fp8 and sgl_kernel.bmm_fp8).
const TableMLABMM = "mla_bmm_perf"

func init() { tableFamily[TableMLABMM] = "mla_bmm" }

// The ops of TableMLABMM.
const (
	mlaBMMPre  = "mla_gen_pre"
	mlaBMMPost = "mla_gen_post"
)

type mlaBMMRow struct {
	Op      string  `parquet:"op_name,optional"`
	Dtype   string  `parquet:"bmm_dtype,optional"`
	Tokens  int64   `parquet:"num_tokens,optional"`
	Heads   int64   `parquet:"num_heads,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type mlaBMMKey struct {
	op, dtype     string
	tokens, heads int64
}

func loadMLABMM(path string) ([]mlaBMMRow, error) {
	return loadRows(path, func(r *mlaBMMRow) (mlaBMMKey, bool) {
		return mlaBMMKey{r.Op, r.Dtype, r.Tokens, r.Heads}, r.Tokens > 0 && r.Heads > 0 && validLatency(r.Latency)
	})
}

// mlaBMMCurve is one op's measured time by tokens, seconds: linear between
// the measured token counts, the first row's time below them, and the last
// row's time per token beyond them (the batched GEMM's work grows with the
// tokens once it is compute or activation bound).
type mlaBMMCurve struct{ tokens, sec []float64 }

func (c *mlaBMMCurve) seconds(n float64) float64 {
	if n <= 0 || len(c.tokens) == 0 {
		return 0
	}
	last := len(c.tokens) - 1
	switch {
	case n <= c.tokens[0]:
		return c.sec[0]
	case n >= c.tokens[last]:
		return c.sec[last] * n / c.tokens[last]
	}
	i := sort.SearchFloat64s(c.tokens, n)
	w := (n - c.tokens[i-1]) / (c.tokens[i] - c.tokens[i-1])
	return lerp(c.sec[i-1], c.sec[i], w)
}

// mlaBMM is the two decode BMMs of one MLA layer.
type mlaBMM struct{ pre, post mlaBMMCurve }

// seconds is one layer's pre and post BMMs over d decode tokens.
func (b *mlaBMM) seconds(d float64) float64 {
	if b == nil || d <= 0 {
		return 0
	}
	return b.pre.seconds(d) + b.post.seconds(d)
}

// sglangBMMDtype is the format of w_kc and w_vc after SGLang loads a
// checkpoint (models/deepseek_common/deepseek_weight_loader.py,
// post_load_weights): a 128×128 block-fp8 kv_b_proj is dequantized to bf16
// (block_quant_dequant; the DeepGEMM BMM only with SGL_USE_DEEPGEMM_BMM,
// default off), so the decode runs torch.bmm in bf16; a per-tensor or
// per-channel fp8 one stays fp8 (bmm_fp8, deepseek_v2.py forward_absorb_prepare
// and forward_absorb_core); a bf16 checkpoint runs bf16.
func sglangBMMDtype(attn model.Dtype) string {
	if attn == model.FP8 {
		return string(model.FP8)
	}
	return string(model.BF16)
}

// sglangMLABMM builds the decode BMMs of an SGLang MLA model priced with the
// kernel table (generation_mla_perf times the attention backend's forward
// alone: collector/sglang/collect_mla.py calls RadixAttention on the latent
// q and cache, so the absorbed q_nope · w_kc before it and attn · w_vc after
// it, which DeepseekV2AttentionMLA.forward_absorb_prepare and
// forward_absorb_core run in every decode, are not in its rows). The rows:
// the model's heads per GPU and the weights' BMM format; nil, with a note,
// when the table is missing, lacks them, or the model's MLA widths are not
// the collector's (q_nope 128, latent 512, value 128).
func (m *Model) sglangMLABMM(arch *model.Arch, tp int, sysDir string, opt Options) *mlaBMM {
	ml := arch.MLA
	if ml.NopeDim != 128 || ml.KVLoraRank != 512 || ml.VDim != 128 {
		m.notes = append(m.notes, fmt.Sprintf("%s: %s's MLA widths (nope %d, latent %d, value %d) are not the table's (128, 512, 128); its decode BMMs not priced",
			TableMLABMM, arch.Name, ml.NopeDim, ml.KVLoraRank, ml.VDim))
		return nil
	}
	src, err := locate(sysDir, m.system, opt.Backend, opt.Version, TableMLABMM)
	if err != nil {
		m.notes = append(m.notes, fmt.Sprintf("%s: %v; the MLA decode BMMs not priced", TableMLABMM, err))
		return nil
	}
	rows, err := loadMLABMM(src.Path)
	if err != nil {
		m.notes = append(m.notes, fmt.Sprintf("%s: %v; the MLA decode BMMs not priced", TableMLABMM, err))
		return nil
	}
	dt, heads := sglangBMMDtype(arch.AttentionDtype()), int64(arch.Heads/tp)
	curve := func(op string) mlaBMMCurve {
		var c mlaBMMCurve
		for _, r := range rows {
			if r.Op == op && r.Dtype == dt && r.Heads == heads {
				c.tokens = append(c.tokens, float64(r.Tokens))
			}
		}
		sort.Float64s(c.tokens)
		c.sec = make([]float64, len(c.tokens))
		for _, r := range rows {
			if r.Op == op && r.Dtype == dt && r.Heads == heads {
				c.sec[sort.SearchFloat64s(c.tokens, float64(r.Tokens))] = r.Latency * 1e-3
			}
		}
		return c
	}
	b := &mlaBMM{pre: curve(mlaBMMPre), post: curve(mlaBMMPost)}
	if len(b.pre.tokens) == 0 || len(b.post.tokens) == 0 {
		m.notes = append(m.notes, fmt.Sprintf("%s (%s) has no %s rows at %d heads; the MLA decode BMMs not priced", TableMLABMM, src.ReadFrom, dt, heads))
		return nil
	}
	m.sources = append(m.sources, src)
	return b
}

package aic

import (
	"fmt"
	"sync"
)

// TableComputeScale is AIConfigurator's fp8 activation-scale table
// (quantize/<backend>/<version>/computescale_perf.parquet): for an m × k
// bf16 input, the time of TRT-LLM's dynamic per-tensor quantization
// (torch.ops.tensorrt_llm.quantize_e4m3_per_tensor: the amax, then the cast)
// less that of its static one (static_quantize_e4m3_per_tensor: the cast
// with a given scale) — the collector's collect_computescale.py times both
// and logs the difference.
const TableComputeScale = "computescale_perf"

func init() { tableFamily[TableComputeScale] = "quantize" }

type computeScaleRow struct {
	M       int64   `parquet:"m,optional"`
	K       int64   `parquet:"k,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type mkKey struct{ m, k int64 }

func loadComputeScale(path string) ([]computeScaleRow, error) {
	return loadRows(path, func(r *computeScaleRow) (mkKey, bool) {
		return mkKey{r.M, r.K}, r.M > 0 && r.K > 0 && r.Latency >= 0 && r.Latency < 1e9
	})
}

// staticScaleCache keeps the adjusted GEMM rows of one (GEMM table,
// compute-scale table) pair, so the GEMM grid cache (keyed by the rows'
// address) is hit by every model built from them.
var staticScaleCache sync.Map // staticScaleKey → *staticScaleEntry

// staticScaleKey names the two tables as loadRows caches them, by their first
// rows (as gridKey does): a table read again after its file changed is a new
// key, and the entry keeps both tables, so an address is not reused while it
// lives.
type staticScaleKey struct {
	gemm   *gemmRow
	n      int
	scale  *computeScaleRow
	nScale int
}

type staticScaleEntry struct {
	once       sync.Once
	gemm, rows []gemmRow
	scale      []computeScaleRow
	unmet      int
}

// staticScaleGEMMs is TRT-LLM's per-tensor fp8 GEMM with the checkpoint's
// static activation scale. The gemm_perf fp8 rows time TRT-LLM's Linear
// with QuantAlgo.FP8 and weights loaded without an input_scale
// (collect_gemm.py), so FP8QDQLinearMethod.apply quantizes the input
// dynamically (tensorrt_llm/_torch/modules/linear.py: input_scale None →
// quantize_e4m3_per_tensor) before cublas_scaled_mm. A ModelOpt FP8
// checkpoint — the format TRT-LLM serves for per-tensor fp8, InferenceX's
// nvidia/Llama-3.3-70B-Instruct-FP8 among them — carries input_scale, and
// the same method then runs static_quantize_e4m3_per_tensor. Each fp8 row
// therefore loses the compute_scale time at its (m, k); the rest (the
// static cast and the GEMM) is kept. Rows of other dtypes, and fp8 rows
// whose (m, k) the compute-scale table lacks (counted in unmet), are
// unchanged. The result is shared: do not modify it.
func staticScaleGEMMs(rows []gemmRow, scale []computeScaleRow) ([]gemmRow, int) {
	if len(rows) == 0 || len(scale) == 0 {
		return subtractComputeScale(rows, scale)
	}
	key := staticScaleKey{&rows[0], len(rows), &scale[0], len(scale)}
	e, _ := staticScaleCache.LoadOrStore(key, &staticScaleEntry{gemm: rows, scale: scale})
	en := e.(*staticScaleEntry)
	en.once.Do(func() { en.rows, en.unmet = subtractComputeScale(rows, scale) })
	return en.rows, en.unmet
}

// subtractComputeScale is staticScaleGEMMs without the cache.
func subtractComputeScale(rows []gemmRow, scale []computeScaleRow) ([]gemmRow, int) {
	ms := make(map[mkKey]float64, len(scale))
	for _, s := range scale {
		ms[mkKey{s.M, s.K}] = s.Latency
	}
	out := make([]gemmRow, len(rows))
	copy(out, rows)
	unmet := 0
	for i := range out {
		r := &out[i]
		if r.Dtype != "fp8" {
			continue
		}
		cs, ok := ms[mkKey{r.M, r.K}]
		if !ok || cs >= r.Latency {
			unmet++
			continue
		}
		r.Latency -= cs
	}
	return out, unmet
}

// staticScaleNote says what staticScaleGEMMs did (model notes).
func staticScaleNote(scalePath string, unmet int) string {
	s := fmt.Sprintf("%s fp8 rows: dynamic activation quantization replaced by the checkpoint's static scale (%s subtracted)",
		TableGEMM, scalePath)
	if unmet > 0 {
		s += fmt.Sprintf("; %d fp8 rows without a matching (m, k) kept as measured", unmet)
	}
	return s
}

// staticScaleRows applies staticScaleGEMMs to the GEMM rows when the
// backend's compute-scale table exists (else the rows, as measured, with a
// note).
func (m *Model) staticScaleRows(rows []gemmRow, find func(string) (string, error)) ([]gemmRow, error) {
	sp, err := find(TableComputeScale)
	if err != nil {
		m.notes = append(m.notes, fmt.Sprintf("%s fp8 rows kept with their dynamic activation quantization (%v)", TableGEMM, err))
		return rows, nil
	}
	scale, err := loadComputeScale(sp)
	if err != nil {
		return nil, err
	}
	out, unmet := staticScaleGEMMs(rows, scale)
	m.notes = append(m.notes, staticScaleNote(sp, unmet))
	return out, nil
}

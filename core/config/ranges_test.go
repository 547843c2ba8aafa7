package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rangeKeysOf collects the "Type.field" key of every field reachable from t,
// as Schema walks the types (struct fields, union variants and the block's
// own fields).
func rangeKeysOf(t reflect.Type, keys map[string]reflect.Kind) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	if reflect.PointerTo(t).Implements(unionBlockType) {
		u, _ := reflect.New(t).Interface().(unionBlock).unionOf()
		for _, v := range u.variants {
			rangeKeysOf(reflect.TypeOf(v.zero), keys)
		}
	}
	idx, names := fieldsOf(t)
	for _, name := range names {
		f := t.Field(idx[name])
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		keys[t.Name()+"."+name] = ft.Kind()
		rangeKeysOf(f.Type, keys)
	}
}

// Every entry of the table names a field of the spec: a renamed field cannot
// leave its range behind unchecked and unpublished.
func TestRangesNameFieldsOfTheSpec(t *testing.T) {
	keys := map[string]reflect.Kind{}
	rangeKeysOf(reflect.TypeOf(Spec{}), keys)
	for key, r := range ranges {
		kind, ok := keys[key]
		if assert.True(t, ok, "ranges[%q] names no field of the spec", key) && r.kind == intRange {
			assert.Contains(t, []reflect.Kind{reflect.Int, reflect.Int64}, kind, "ranges[%q] is an integer range", key)
		}
	}
}

// rangeCase places a table entry in a spec: a base spec (JSON) in which the
// field's block is present and the dotted path of the field.
type rangeCase struct{ base, path string }

func rangeCases() map[string]rangeCase {
	engine := func(extra string) string {
		return `"engine": {"model": "m", "system": "s", "workers": {"aggregated": {"count": 1}}` + extra + `}`
	}
	traffic := func(source, load string) string {
		return `"traffic": {"source": ` + source + `, "load": ` + load + `}`
	}
	synth := `{"type": "synthetic", "num_requests": 10, "isl": 10, "osl": 10}`
	conc := `{"mode": "concurrency", "concurrency": 1}`
	spec := func(parts ...string) string { return "{" + strings.Join(parts, ", ") + "}" }
	plain := spec(engine(""), traffic(synth, conc))
	disagg := spec(`"engine": {"model": "m", "system": "s", "workers": {"disaggregated": {"prefill": {"count": 1}, "decode": {"count": 1}, "kv_transfer": {"bandwidth_gb_per_s": 10, "latency_ms": 1}}}}`,
		traffic(synth, conc))
	out := map[string]rangeCase{}
	for key := range ranges {
		typ, field, _ := strings.Cut(key, ".")
		var c rangeCase
		switch typ {
		case "Scheduler":
			c = rangeCase{plain, "engine.scheduler." + field}
			if field == "max_num_batched_tokens" { // it must also be ≥ max_num_seqs, a condition of Validate's own
				c.base = spec(engine(`, "scheduler": {"max_num_seqs": 1}`), traffic(synth, conc))
			}
		case "Pool":
			c = rangeCase{plain, "engine.workers.aggregated." + field}
		case "PoolScheduler":
			c = rangeCase{plain, "engine.workers.aggregated.scheduler." + field}
		case "TRTLLM":
			c = rangeCase{spec(engine(`, "backend": "trtllm"`), traffic(synth, conc)), "engine.trtllm." + field}
		case "TRTLLMKVCacheConfig":
			c = rangeCase{spec(engine(`, "backend": "trtllm"`), traffic(synth, conc)), "engine.trtllm.kv_cache_config." + field}
		case "TRTLLMMoEConfig":
			c = rangeCase{spec(engine(`, "backend": "trtllm"`), traffic(synth, conc)), "engine.trtllm.moe_config." + field}
		case "TRTLLMAttentionDPConfig":
			c = rangeCase{spec(engine(`, "backend": "trtllm"`), traffic(synth, conc)), "engine.trtllm.attention_dp_config." + field}
		case "TRTLLMSpeculativeConfig":
			c = rangeCase{spec(engine(`, "backend": "trtllm", "trtllm": {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 1}}`), traffic(synth, conc)),
				"engine.trtllm.speculative_config." + field}
		case "VLLMSpeculativeConfig":
			c = rangeCase{spec(engine(`, "scheduler": {"speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}`), traffic(synth, conc)),
				"engine.scheduler.speculative_config." + field}
		case "TRTLLMCUDAGraphConfig":
			c = rangeCase{spec(engine(`, "backend": "trtllm", "trtllm": {"cuda_graph_config": {"enable_padding": true}}`), traffic(synth, conc)),
				"engine.trtllm.cuda_graph_config." + field}
		case "SGLang":
			c = rangeCase{spec(engine(`, "backend": "sglang"`), traffic(synth, conc)), "engine.sglang." + field}
			if strings.HasPrefix(field, "speculative_") { // EAGLE's fields need its algorithm
				c.base = spec(engine(`, "backend": "sglang", "sglang": {"speculative_algorithm": "EAGLE", "speculative_num_steps": 1}`), traffic(synth, conc))
			}
		case "KVTransfer":
			c = rangeCase{disagg, "engine.workers.disaggregated.kv_transfer." + field}
		case "KVRouter":
			c = rangeCase{spec(`"engine": {"model": "m", "system": "s", "workers": {"aggregated": {"count": 2, "placement": "kv_router", "kv_router": {}}}}`,
				traffic(synth, conc)), "engine.workers.aggregated.kv_router." + field}
		case "Tokenization":
			c = rangeCase{spec(engine(`, "tokenization": {"send_ms": 0}`), traffic(synth, conc)), "engine.tokenization." + field}
		case "Detokenization":
			c = rangeCase{spec(engine(`, "detokenization": {"base_us": 0, "per_token_us": 0}`), traffic(synth, conc)), "engine.detokenization." + field}
		case "RooflinePerf":
			c = rangeCase{plain, "engine.perf." + field}
		case "AICPerf":
			c = rangeCase{spec(engine(`, "perf": {"source": "aic", "database": "d"}`), traffic(synth, conc)), "engine.perf." + field}
		case "LinearPerf":
			c = rangeCase{spec(engine(`, "perf": {"source": "linear", "base_ms": 1, "per_prefill_token_ms": 0, "per_decode_seq_ms": 0}`), traffic(synth, conc)), "engine.perf." + field}
		case "SyntheticSource":
			c = rangeCase{plain, "traffic.source." + field}
		case "SessionsSource":
			c = rangeCase{spec(engine(""), traffic(`{"type": "sessions", "num_sessions": 2, "turns": 2, "isl": 10, "osl": 10}`, conc)), "traffic.source." + field}
		case "Dataset":
			c = rangeCase{spec(engine(""), traffic(`{"type": "synthetic", "num_requests": 10, "isl": 10, "osl": 10, "dataset": {"entries": 2}}`, conc)), "traffic.source.dataset." + field}
		case "DatasetPrefix":
			c = rangeCase{spec(engine(""), traffic(fmt.Sprintf(`{"type": "synthetic", "num_requests": 10, "isl": 10, "osl": 10, "dataset": {"entries": %d, "prefix": {"groups": 1, "tokens": 1}}}`, MaxDatasetEntries), conc)),
				"traffic.source.dataset.prefix." + field}
		case "StagedLoad":
			c = rangeCase{spec(engine(""), traffic(synth, `{"mode": "stages", "stages": [{"requests": 10, "concurrency": 1}]}`)), "traffic.load." + field}
		case "Load", "ConcurrencyLoad":
			c = rangeCase{plain, "traffic.load." + field}
			if key == "Load.inter_turn_delay_ms" { // a synthetic source has no turns to wait between
				c.base = spec(engine(""), traffic(`{"type": "sessions", "num_sessions": 2, "turns": 2, "isl": 10, "osl": 10}`, conc))
			}
		case "ResponseOverhead":
			c = rangeCase{spec(engine(""), traffic(synth, `{"mode": "concurrency", "concurrency": 1, "response_overhead": {"base_ms": 0, "per_output_token_us": 0}}`)), "traffic.load.response_overhead." + field}
		case "MooncakeSource":
			c = rangeCase{spec(engine(""), traffic(`{"type": "mooncake", "path": "t.jsonl"}`, `{"mode": "trace"}`)), "traffic.source." + field}
		case "TraceLoad":
			c = rangeCase{spec(engine(""), traffic(`{"type": "mooncake", "path": "t.jsonl"}`, `{"mode": "trace"}`)), "traffic.load." + field}
		case "RateLoad":
			c = rangeCase{spec(engine(""), traffic(synth, `{"mode": "rate", "rate_rps": 1, "arrival": "gamma", "cv": 1}`)), "traffic.load." + field}
			if field == "warmup_concurrency" { // it needs a warm-up
				c.base = spec(engine(""), traffic(synth, `{"mode": "rate", "rate_rps": 1, "warmup_requests": 1}`))
			}
		case "Stop":
			c = rangeCase{plain, "traffic.stop." + field}
			if field == "grace_s" { // it needs max_duration_s, a condition of Validate's own
				c.base = spec(engine(""), `"traffic": {"source": `+synth+`, "load": `+conc+`, "stop": {"max_duration_s": 10}}`)
			}
		case "Execution":
			c = rangeCase{plain, "execution." + field}
		case "FixedLength":
			c = rangeCase{spec(engine(""), traffic(`{"type": "synthetic", "num_requests": 10, "isl": 10, "osl": {"kind": "fixed", "value": 10}}`, conc)), "traffic.source.osl." + field}
		case "UniformLength":
			c = rangeCase{spec(engine(""), traffic(`{"type": "synthetic", "num_requests": 10, "isl": 10, "osl": {"kind": "uniform", "min": 1, "max": 10}}`, conc)), "traffic.source.osl." + field}
		case "NormalLength", "LognormalLength":
			kind := strings.ToLower(strings.TrimSuffix(typ, "Length"))
			c = rangeCase{spec(engine(""), traffic(`{"type": "synthetic", "num_requests": 10, "isl": 10, "osl": {"kind": "`+kind+`", "mean": 5, "std": 1, "min": 1, "max": 10}}`, conc)), "traffic.source.osl." + field}
		case "AIPerfBenchmark":
			bench := `{"tool": "aiperf", "output_tokens_mean": 10, "ignore_eos": true}`
			switch field {
			case "request_rate": // a rate instead of the default concurrency of 1
				bench = `{"tool": "aiperf", "output_tokens_mean": 10, "ignore_eos": true, "request_rate": 1}`
			case "arrival_smoothness": // a gamma rate's
				bench = `{"tool": "aiperf", "version": "0.5.0", "output_tokens_mean": 10, "ignore_eos": true, "request_rate": 1, "request_rate_mode": "gamma"}`
			}
			c = rangeCase{spec(engine(""), `"traffic": {"benchmark": `+bench+`}`), "traffic.benchmark." + field}
		case "GenAIPerfBenchmark":
			c = rangeCase{spec(engine(""), `"traffic": {"benchmark": {"tool": "genai_perf", "output_tokens_mean": 10, "ignore_eos": true}}`),
				"traffic.benchmark." + field}
		case "VLLMBenchServe":
			bench := `{"tool": "vllm_bench_serve", "ignore_eos": true}`
			switch field {
			case "request_rate", "burstiness": // a finite rate needs no warm-up request before it
				bench = `{"tool": "vllm_bench_serve", "ignore_eos": true, "request_rate": 1, "ready_check_timeout_sec": 0}`
			case "random_range_ratio": // the fork's rule takes (0, 1]; vLLM's [0, 1)
				bench = `{"tool": "vllm_bench_serve", "variant": "inferencex", "ignore_eos": true}`
			}
			c = rangeCase{spec(engine(""), `"traffic": {"benchmark": `+bench+`}`), "traffic.benchmark." + field}
		case "SGLangBenchServing":
			c = rangeCase{spec(engine(""), `"traffic": {"benchmark": {"tool": "sglang_bench_serving", "dataset_name": "random"}}`),
				"traffic.benchmark." + field}
		default:
			panic("no case for " + key)
		}
		out[key] = c
	}
	return out
}

// set puts v at the dotted path of the JSON document base.
func set(t *testing.T, base, path string, v any) []byte {
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(base), &doc))
	parts := strings.Split(path, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

// fieldErr is the dotted field Decode's error names ("" without an error).
func fieldErr(t *testing.T, doc []byte) string {
	_, err := Decode(doc)
	if err == nil {
		return ""
	}
	var ce *Error
	require.ErrorAs(t, err, &ce, string(doc))
	return ce.Field
}

// GIVEN each range of the table, WHEN a spec sets the field just outside it,
// THEN Decode (Validate) refuses it naming the field; at the bound the field
// is not what is refused (another field's condition may be). So the schema's
// minimum and maximum, which come from the same table, are what Validate
// enforces.
func TestRangesAreWhatValidateEnforces(t *testing.T) {
	kinds := map[string]reflect.Kind{}
	rangeKeysOf(reflect.TypeOf(Spec{}), kinds)
	for key, c := range rangeCases() {
		r := ranges[key]
		t.Run(key, func(t *testing.T) {
			require.Equal(t, "", fieldErr(t, []byte(c.base)), "the base spec is valid:\n%s", c.base)
			isInt := kinds[key] == reflect.Int || kinds[key] == reflect.Int64
			below, above := r.min-1, r.max+1
			if !isInt {
				below, above = math.Nextafter(r.min, math.Inf(-1)), r.max*1.5
			}
			var at any = r.min
			if isInt {
				at = int64(r.min)
			}
			if r.openMin {
				below, at = r.min, r.min+1e-3
			}
			if key == "RateLoad.cv" {
				at = MinGammaCV // its minimum 0 holds; gamma needs more (own check)
			}
			if key == "VLLMBenchServe.random_range_ratio" {
				at = 1e-3 // its minimum 0 holds for vLLM's rule; the fork's needs more (own check)
			}
			assert.Equal(t, c.path, fieldErr(t, set(t, c.base, c.path, below)), "%s = %v is below the range", c.path, below)
			assert.NotEqual(t, c.path, fieldErr(t, set(t, c.base, c.path, at)), "%s = %v is at the bound", c.path, at)
			if !r.noMax {
				var top any = r.max
				if isInt {
					top, above = int64(r.max), r.max+1
				}
				if key == "SGLangBenchServing.random_range_ratio" {
					top = 1.0 // any ratio ≤ 1 draws; more fails numpy's randint for L ≥ 1 (own check)
				}
				assert.NotEqual(t, c.path, fieldErr(t, set(t, c.base, c.path, top)), "%s = %v is at the bound", c.path, top)
				assert.Equal(t, c.path, fieldErr(t, set(t, c.base, c.path, above)), "%s = %v is above the range", c.path, above)
			}
		})
	}
}

// The schema carries each range on its field: engine.scheduler.max_num_seqs
// in [1, 2^24], gpu_memory_utilization in (0, 1], block_size one of vLLM's
// seven, a pool's tp in [1, 8], a gamma cv in [0, 1000].
func TestSchemaPublishesTheRanges(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(Schema(), &s))
	at := func(path ...string) map[string]any {
		m := s
		for _, p := range path {
			m = m["properties"].(map[string]any)[p].(map[string]any)
		}
		return m
	}
	seqs := at("engine", "scheduler", "max_num_seqs")
	assert.Equal(t, "integer", seqs["type"])
	assert.Equal(t, 1.0, seqs["minimum"])
	assert.Equal(t, float64(1<<24), seqs["maximum"])
	assert.Contains(t, seqs["description"], "absent: per system, as vLLM derives it")
	assert.Contains(t, at("engine", "scheduler", "max_num_batched_tokens")["description"], "absent: per system, as vLLM derives it")
	assert.Equal(t, map[string]any{"type": "number", "exclusiveMinimum": 0.0, "maximum": 1.0},
		at("engine", "scheduler", "gpu_memory_utilization"))
	// block_size: vLLM's --block-size choices as an enum, not the range [1, 256] that
	// let 48 through
	assert.Equal(t, map[string]any{"type": "integer", "enum": []any{1.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0}},
		at("engine", "scheduler", "block_size"))
	pool := at("engine", "workers", "aggregated")
	assert.Equal(t, float64(MaxTP), pool["properties"].(map[string]any)["tp"].(map[string]any)["maximum"])
	var rate map[string]any
	for _, alt := range at("traffic", "load")["oneOf"].([]any) {
		if a := alt.(map[string]any); a["properties"] != nil && a["properties"].(map[string]any)["mode"].(map[string]any)["const"] == "rate" { // (and the null a block may be)
			rate = a["properties"].(map[string]any)
		}
	}
	require.NotNil(t, rate)
	assert.Equal(t, map[string]any{"type": "number", "minimum": 0.0, "maximum": 1000.0}, rate["cv"])
	assert.Equal(t, fmt.Sprint(MinRateRPS), fmt.Sprint(rate["rate_rps"].(map[string]any)["minimum"]))
}

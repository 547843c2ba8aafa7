package config

import (
	"errors"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeErr(t *testing.T, yml string) *Error {
	t.Helper()
	_, err := DecodeYAML([]byte(yml))
	var ce *Error
	require.True(t, errors.As(err, &ce), "%q: got %v", yml, err)
	return ce
}

const engineM = "engine: {model: m, system: h100_sxm}\n"

// Every field of every variant is refused in every other variant that lacks
// it, naming the field and the variants it belongs to; the rule comes from the
// tables, so a new variant is covered without a new case.
func TestAnotherVariantsFieldIsRefused(t *testing.T) {
	blocks := []struct {
		u    *union
		spec func(body string) string // the YAML with the block's mapping body
	}{
		{perfUnion, func(b string) string {
			return "engine: {model: m, system: h100_sxm, perf: {" + b + "}}\n" + aicTraffic
		}},
		{sourceUnion, func(b string) string {
			return engineM + "traffic: {source: {" + b + "}, load: {mode: concurrency, concurrency: 1}}\n"
		}},
		{loadUnion, func(b string) string {
			return engineM + "traffic: {source: {type: mooncake, path: t.jsonl}, load: {" + b + "}}\n"
		}},
		{lengthUnion, func(b string) string {
			return engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: {" + b + "}}, load: {mode: concurrency, concurrency: 1}}\n"
		}},
	}
	path := map[*union]string{perfUnion: "engine.perf", sourceUnion: "traffic.source", loadUnion: "traffic.load", lengthUnion: "traffic.source.isl"}
	cases := 0
	for _, b := range blocks {
		for _, chosen := range b.u.variants {
			own, _ := fieldsOf(reflect.TypeOf(chosen.zero))
			for _, other := range b.u.variants {
				_, names := fieldsOf(reflect.TypeOf(other.zero))
				for _, key := range names {
					if _, shared := own[key]; shared {
						continue
					}
					ce := decodeErr(t, b.spec(b.u.key+": "+chosen.name+", "+key+": 1"))
					assert.Equal(t, path[b.u]+"."+key, ce.Field)
					assert.Contains(t, ce.Msg, "belongs to "+b.u.key+" ")
					assert.Contains(t, ce.Msg, other.name)
					assert.True(t, strings.HasSuffix(ce.Msg, ", not "+chosen.name), ce.Msg)
					cases++
				}
			}
		}
	}
	assert.Greater(t, cases, 30, "the tables have fields to cross")
}

// Hand-written cases: the messages users read.
func TestVariantMessages(t *testing.T) {
	cases := []struct{ yaml, field, msg string }{
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: {kind: fixed, value: 10, min: 3}}, load: {mode: concurrency, concurrency: 1}}\n",
			"traffic.source.isl.min", "belongs to kind uniform, normal or lognormal, not fixed"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: 8}, load: {mode: rate, rate_rps: 2, speedup: 2}}\n",
			"traffic.load.speedup", "belongs to mode trace, not rate"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: 8}, load: {mode: rate, rate_rps: 2, cv: 2}}\n",
			"traffic.load.cv", "belongs to arrival gamma, not poisson"},
		{engineM + "traffic: {source: {type: sessions, num_sessions: 2, turns: 2, isl: 8, osl: 1, path: t.jsonl}, load: {mode: concurrency, concurrency: 1}}\n",
			"traffic.source.path", "belongs to type mooncake, azure or llmservingsim, not sessions"},
		{engineM + "traffic: {source: {type: csv}, load: {mode: trace}}\n",
			"traffic.source.type", `"csv" is not supported (one of mooncake, azure, llmservingsim, synthetic, sessions)`},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1}, load: {mode: concurrency, concurrency: 1}}\n",
			"traffic.source.isl", "is required"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: 8}}\n",
			"traffic.load.mode", "is required (one of trace, rate, concurrency, stages)"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: 8}, load: {mode: trace}}\n",
			"traffic.load.mode", "trace timestamps need a trace source"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: {kind: zipf}}, load: {mode: concurrency, concurrency: 1}}\n",
			"traffic.source.isl.kind", `"zipf" is not supported (one of fixed, uniform, normal, lognormal)`},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: [3]}, load: {mode: concurrency, concurrency: 1}}\n",
			"traffic.source.isl", "expected an integer or a mapping"},
		// one rule for normal and lognormal: a token count's mean is positive
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: {kind: normal, mean: -5, std: 1, min: 1, max: 9}}, load: {mode: concurrency, concurrency: 1}}\n",
			"traffic.source.isl.mean", "must be > 0, got -5"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: 8}, load: {mode: rate, rate_rps: 0}}\n",
			"traffic.load.rate_rps", "must be > 0, got 0"},
		{engineM + "traffic: {source: {type: mooncake, path: t.jsonl}, load: {mode: trace, speedup: 0}}\n",
			"traffic.load.speedup", "must be > 0, got 0"},
		{engineM + "traffic: {source: {type: synthetic, num_requests: 1, osl: 1, isl: 8}, load: {mode: 3}}\n",
			"traffic.load.mode", "expected a string, got the number 3"},
		// the key left out beside a key no variant has: the stray key is named (a misspelt key)
		{engineM + "traffic: {source: {tpye: mooncake, path: t.jsonl}, load: {mode: trace}}\n",
			"traffic.source.tpye", "unknown field, and type is missing (one of mooncake, azure, llmservingsim, synthetic, sessions)"},
		// ... but a key some variant has leaves the missing key the error
		{engineM + "traffic: {source: {path: t.jsonl}, load: {mode: trace}}\n",
			"traffic.source.type", "is required (one of mooncake"},
	}
	for _, c := range cases {
		ce := decodeErr(t, c.yaml)
		assert.Equal(t, c.field, ce.Field, c.yaml)
		assert.Contains(t, ce.Msg, c.msg, c.yaml)
	}
}

// The one list per discriminator: Enums reports the variant tables' names.
func TestEnumsAreTheTables(t *testing.T) {
	e := Enums()
	assert.Equal(t, []string{"roofline", "aic", "linear"}, e["engine.perf.source"])
	assert.Equal(t, []string{"mooncake", "azure", "llmservingsim", "synthetic", "sessions"}, e["traffic.source.type"])
	assert.Equal(t, []string{"trace", "rate", "concurrency", "stages"}, e["traffic.load.mode"])
	assert.Equal(t, []string{"fixed", "uniform", "normal", "lognormal"}, e["traffic.source.osl.kind"])
	assert.Equal(t, []string{"poisson", "constant", "gamma"}, e["traffic.load.arrival"])
	e["engine.perf.source"][0] = "changed"
	assert.Equal(t, "roofline", Enums()["engine.perf.source"][0], "a copy: the table cannot be changed")
	// every variant type of a table is distinct (nameOf is a function of the type)
	for _, u := range []*union{perfUnion, sourceUnion, loadUnion, lengthUnion} {
		seen := map[reflect.Type]bool{}
		for _, v := range u.variants {
			assert.False(t, seen[reflect.TypeOf(v.zero)], "%s: %T twice", u.key, v.zero)
			seen[reflect.TypeOf(v.zero)] = true
			assert.Equal(t, v.name, u.nameOf(v.zero))
		}
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		assert.NotEmpty(t, e[k], k)
	}
}

// Normalize fills every default: the canonical spec of a minimal input says
// what will run (the perf source's parameters, the speedup of a trace load).
func TestCanonicalSpecHasEveryDefault(t *testing.T) {
	s, err := DecodeYAML([]byte(engineM + "traffic: {source: {type: mooncake, path: /t.jsonl}, load: {mode: trace}}\n"))
	require.NoError(t, err)
	assert.Equal(t, `{"engine":{"model":"m","system":"h100_sxm","backend":"vllm",`+
		`"perf":{"source":"roofline","compute_efficiency":0.7,"memory_efficiency":0.8,"pass_overhead_us":1000,"per_sequence_overhead_us":40,"layer_latency_us":40},`+
		`"workers":{"aggregated":{"count":1,"tp":1,"placement":"round_robin"}},`+
		`"scheduler":{"block_size":16,"enable_prefix_caching":true,"max_model_len":0,"num_gpu_blocks":0,"gpu_memory_utilization":0.9}},`+
		`"traffic":{"source":{"type":"mooncake","path":"/t.jsonl"},"load":{"mode":"trace","speedup":1},"stop":{"max_requests":0,"max_duration_s":0}},`+
		`"execution":{"mode":"offline","seed":0}}`, string(s.JSON()))

	s, err = DecodeYAML([]byte(engineM + `traffic:
  source: {type: sessions, num_sessions: 2, turns: {kind: uniform, min: 1, max: 3}, isl: {kind: lognormal, mean: 50, std: 10, min: 1, max: 99}, osl: 1}
  load: {mode: rate, rate_rps: 2, arrival: gamma, inter_turn_delay_ms: 5}
`))
	require.NoError(t, err)
	assert.Contains(t, string(s.JSON()), `"source":{"type":"sessions","num_sessions":2,"turns":{"kind":"uniform","min":1,"max":3},`+
		`"isl":{"kind":"lognormal","min":1,"max":99,"mean":50,"std":10},"osl":{"kind":"fixed","value":1}},`+
		`"load":{"mode":"rate","rate_rps":2,"arrival":"gamma","cv":1,"inter_turn_delay_ms":5}`)
	again, err := Decode(s.JSON())
	require.NoError(t, err)
	assert.Equal(t, s, again, "the canonical form decodes to the same spec")
}

// Clone shares nothing with its original.
func TestCloneIsDeep(t *testing.T) {
	s, err := DecodeYAML([]byte(`engine: {model: m, system: h100_sxm, tokenization: {send_ms: 1}, quantization: {weights: fp8}}
traffic:
  source: {type: synthetic, num_requests: 3, isl: 8, osl: 2, dataset: {entries: 2}}
  load: {mode: concurrency, concurrency: 1, response_overhead: {base_ms: 1, per_output_token_us: 2}}
`))
	require.NoError(t, err)
	before := string(s.JSON())
	c := s.Clone()
	require.Equal(t, s, c)
	c.Engine.Tokenization.SendMs = 9
	c.Engine.Quantization.Weights = "bf16"
	c.Engine.Workers.Aggregated.Count = 7
	c.Traffic.Source.Type.(SyntheticSource).Dataset.Entries = 5
	c.Traffic.Load.ResponseOverhead.BaseMs = 4
	c.Traffic.Load.Mode = ConcurrencyLoad{Concurrency: 3}
	assert.Equal(t, before, string(s.JSON()), "the original is untouched")
}

// engine.perf.database (source aic) resolves against the file's folder, as
// the trace path does; absolute paths are cleaned, names left alone.
func TestResolvePathsCoversEveryPath(t *testing.T) {
	s, err := DecodeYAML([]byte(`engine: {model: ./m/config.json, system: h100_sxm, model_config_dir: mc, perf: {source: aic, database: ../tables}}
traffic: {source: {type: azure, path: /x/../t.csv}, load: {mode: trace}}`))
	require.NoError(t, err)
	s.ResolvePaths("/data/configs")
	assert.Equal(t, "/data/configs/m/config.json", s.Engine.Model)
	assert.Equal(t, "h100_sxm", s.Engine.System)
	assert.Equal(t, "/data/configs/mc", s.Engine.ModelConfigDir)
	assert.Equal(t, "/data/tables", s.Engine.Perf.Source.(AICPerf).Database)
	assert.Equal(t, "/t.csv", s.Traffic.Source.TracePath())
}

// The one rule for token-length distributions, read by both the spec's
// validation and the workload generators. Errors name the field relative to
// the length.
func TestLengthValidate(t *testing.T) {
	fixed := func(v int) Length { return Length{Kind: FixedLength{Value: v}} }
	uniform := func(lo, hi int) Length { return Length{Kind: UniformLength{Min: lo, Max: hi}} }
	cases := []struct {
		name string
		l    Length
		min  int
		want string // "" = valid
	}{
		{"fixed ISL 1", fixed(1), 1, ""},
		{"fixed ISL 0", fixed(0), 1, "value: must be ≥ 1, got 0"},
		{"fixed OSL 0", fixed(0), 0, ""},
		{"fixed OSL -1", fixed(-1), 0, "value: must be ≥ 0, got -1"},
		{"uniform single point", uniform(5, 5), 1, ""},
		{"uniform max < min", uniform(5, 4), 1, "max: must be ≥ min (5), got 4"},
		{"uniform min below floor", uniform(0, 4), 1, "min: must be ≥ 1, got 0"},
		{"uniform OSL from 0", uniform(0, math.MaxInt), 0, ""},
		{"normal", Length{Kind: NormalLength{Mean: 100, Std: 10, Min: 1, Max: 200}}, 1, ""},
		{"normal mean 0", Length{Kind: NormalLength{Mean: 0, Std: 1, Min: 0, Max: 5}}, 0, "mean: must be > 0, got 0"},
		{"normal NaN mean", Length{Kind: NormalLength{Mean: math.NaN(), Min: 1, Max: 2}}, 1, "mean: must be > 0, got NaN"},
		{"normal negative std", Length{Kind: NormalLength{Mean: 1, Std: -1, Min: 1, Max: 2}}, 1, "std: must be ≥ 0, got -1"},
		{"normal max 0", Length{Kind: NormalLength{Mean: 1, Std: 1, Min: 0, Max: 0}}, 0, "max: must be ≥ min and ≥ 1, got 0"},
		{"normal unbounded below", Length{Kind: NormalLength{Mean: 1, Std: 1, Min: 0, Max: 9}}, 1,
			"min: must be ≥ 1, got 0 (a normal distribution needs min and max to bound it)"},
		{"lognormal", Length{Kind: LognormalLength{Mean: 100, Std: 50, Min: 1, Max: 1000}}, 1, ""},
		{"lognormal mean 0", Length{Kind: LognormalLength{Mean: 0, Std: 1, Min: 1, Max: 2}}, 1, "mean: must be > 0, got 0"},
		{"missing", Length{}, 1, "is required (an integer, or a mapping with kind: fixed, uniform, normal, lognormal)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.l.Validate(tc.min)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tc.want)
			}
		})
	}
}

// traffic.load.inter_turn_delay_ms waits between a session's turns; a
// synthetic source has none, so the field would do nothing: refused (it was
// accepted and the run unchanged). A sessions source and a trace (whose rows
// may be sessions) keep it.
func TestInterTurnDelayNeedsTurns(t *testing.T) {
	e := decodeErr(t, engineM+`traffic:
  source: {type: synthetic, num_requests: 2, isl: 10, osl: 2}
  load: {mode: concurrency, concurrency: 1, inter_turn_delay_ms: 1000}
`)
	assert.Equal(t, "traffic.load.inter_turn_delay_ms", e.Field)
	assert.Equal(t, "applies to the later turns of a session: a synthetic source has none", e.Msg)
	for _, src := range []string{"{type: sessions, num_sessions: 1, turns: 2, isl: 10, osl: 2}", "{type: mooncake, path: t.jsonl}"} {
		_, err := DecodeYAML([]byte(engineM + "traffic:\n  source: " + src + "\n  load: {mode: rate, rate_rps: 1, inter_turn_delay_ms: 5}\n"))
		assert.NoError(t, err, src)
	}
}

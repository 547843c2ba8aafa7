package config

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const minimal = `
engine: {model: Qwen/Qwen3-32B, system: h100_sxm}
traffic:
  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}
  load: {mode: concurrency, concurrency: 4}
`

func TestDefaultsFilled(t *testing.T) {
	s, err := DecodeYAML([]byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, DefaultRooflinePerf(), s.Engine.Perf.Source, "the default source with every parameter filled")
	assert.Zero(t, s.Engine.Scheduler.MaxNumSeqs, "per system: filled by ResolveSchedulerDefaults")
	assert.Zero(t, s.Engine.Scheduler.MaxNumBatchedTokens, "per system: filled by ResolveSchedulerDefaults")
	assert.True(t, s.Engine.Scheduler.EnablePrefixCaching)
	assert.Equal(t, 1, s.Engine.Workers.Aggregated.Count)
	src := s.Traffic.Source.Type.(SyntheticSource)
	assert.Equal(t, Length{Kind: FixedLength{Value: 1024}}, src.ISL, "a plain integer is a fixed length")
	assert.Equal(t, "offline", s.Execution.Mode)
	assert.Nil(t, src.Dataset, "no dataset unless asked: every prompt new")
}

// A synthetic dataset's sampling defaults to AIPerf's shuffle; an explicit one is kept.
func TestDatasetDefaults(t *testing.T) {
	yml := func(dataset string) []byte {
		return []byte("engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128, dataset: " +
			dataset + "}\n  load: {mode: concurrency, concurrency: 4}\n")
	}
	s, err := DecodeYAML(yml("{entries: 100}"))
	require.NoError(t, err)
	assert.Equal(t, Dataset{Entries: 100, Sampling: "shuffle"}, *s.Traffic.Source.Type.(SyntheticSource).Dataset)
	s, err = DecodeYAML(yml("{entries: 3, sampling: sequential}"))
	require.NoError(t, err)
	assert.Equal(t, Dataset{Entries: 3, Sampling: "sequential"}, *s.Traffic.Source.Type.(SyntheticSource).Dataset)
}

// An explicit false or 0 is kept, not replaced by the default.
func TestExplicitFalseKept(t *testing.T) {
	s, err := DecodeYAML([]byte(minimal + "\n" + `execution: {seed: 0}`))
	require.NoError(t, err)
	assert.Equal(t, uint64(0), s.Execution.Seed)
	s, err = Decode([]byte(`{"engine":{"model":"m","system":"h100_sxm","scheduler":{"enable_prefix_caching":false}},
		"traffic":{"source":{"type":"synthetic","num_requests":1,"isl":1,"osl":1},"load":{"mode":"concurrency","concurrency":1}}}`))
	require.NoError(t, err)
	assert.False(t, s.Engine.Scheduler.EnablePrefixCaching)
}

// Canonical JSON decodes to the same spec (Normalize is idempotent).
func TestCanonicalRoundTrip(t *testing.T) {
	s, err := DecodeYAML([]byte(minimal))
	require.NoError(t, err)
	again, err := Decode(s.JSON())
	require.NoError(t, err)
	assert.Equal(t, string(s.JSON()), string(again.JSON()))
}

func TestErrorsNameTheField(t *testing.T) {
	cases := []struct{ yaml, field, msg string }{
		{minimal + "bogus: 1\n", "bogus", "unknown field"},
		{`engine: {model: m, system: h100_sxm, scheduler: {max_num_seqs: 0}}` + "\n" + minimal[len("\nengine: {model: Qwen/Qwen3-32B, system: h100_sxm}\n"):], "engine.scheduler.max_num_seqs", "must be ≥ 1, got 0"},
		{`engine: {model: m, system: h100_sxm, scheduler: {max_num_seqs: 1.5}}`, "engine.scheduler.max_num_seqs", "expected an integer"},
		{`engine: {model: m, system: h100_sxm, scheduler: {gpu_memory_utilization: .nan}}`, "engine.scheduler.gpu_memory_utilization", "finite"},
		{`engine: {model: m, system: h100_sxm, perf: {source: linear, base_ms: .inf, per_prefill_token_ms: 0, per_decode_seq_ms: 0}}`, "engine.perf.base_ms", "finite"},
		{`engine: {model: m, system: h100_sxm, perf: {source: linear, base_ms: -1, per_prefill_token_ms: 0, per_decode_seq_ms: 0}}` + "\n" + minimal[len("\nengine: {model: Qwen/Qwen3-32B, system: h100_sxm}\n"):], "engine.perf.base_ms", "must be ≥ 0"},
		{`engine: {model: m, system: h100_sxm, workers: {aggregated: {count: "two"}}}`, "engine.workers.aggregated.count", "expected an integer, got the string"},
		{minimal + "execution: {mode: online}\n", "execution.mode", "not supported"},
		{"engine: {model: Qwen/Qwen3-32B, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 1024, osl: 128}\n  load: {mode: concurrency, concurrency: 4, response_overhead: {base_ms: 1, per_output_token_us: 0, jitter_ms: -0.5}}\n", "traffic.load.response_overhead.jitter_ms", "must be ≥ 0"},
		{`engine: {model: m, system: h100_sxm}` + "\ntraffic: {source: {path: x.jsonl}, load: {mode: trace}}\n", "traffic.source.type", "is required"},
		{`engine: {model: m, system: h100_sxm}` + "\ntraffic: {source: {type: mooncake, path: x.jsonl, dataset: {entries: 5}}, load: {mode: trace}}\n", "traffic.source.dataset", "belongs to type synthetic, not mooncake"},
		{`engine: {model: m, system: h100_sxm}` + "\ntraffic: {source: {type: mooncake, path: x.jsonl, isl_block_size: 0}, load: {mode: trace}}\n", "traffic.source.isl_block_size", "must be ≥ 1, got 0"},
		{`engine: {model: m, system: h100_sxm}` + "\ntraffic: {source: {type: mooncake, path: x.jsonl, isl_block_size: 16.5}, load: {mode: trace}}\n", "traffic.source.isl_block_size", "expected an integer"},
		{`engine: {model: m, system: h100_sxm}` + "\ntraffic: {source: {type: azure, path: x.csv, isl_block_size: 16}, load: {mode: trace}}\n", "traffic.source.isl_block_size", "belongs to type mooncake, not azure"},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 8, osl: 8, dataset: {entries: 0}}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.dataset.entries", "must be ≥ 1, got 0"},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 8, osl: 8, dataset: {entries: 1000001}}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.dataset.entries", "must be ≤ 1000000, got 1000001"},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 8, osl: 8, dataset: {entries: 5, sampling: zipf}}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.dataset.sampling", `"zipf" is not supported`},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 8, osl: 8, dataset: {entries: 5, size: 3}}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.dataset.size", "unknown field"},
		// a length written as a plain integer is named by its own field;
		// a mapping's value, written or left out, as the mapping's field
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: 0, osl: 8}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.isl", "must be ≥ 1, got 0"},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: sessions, num_sessions: 2, turns: 0, isl: 8, osl: 8}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.turns", "must be ≥ 1, got 0"},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: {kind: fixed, value: 0}, osl: 8}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.isl.value", "must be ≥ 1, got 0"},
		{"engine: {model: m, system: h100_sxm}\ntraffic:\n  source: {type: synthetic, num_requests: 10, isl: {kind: fixed}, osl: 8}\n  load: {mode: concurrency, concurrency: 1}\n", "traffic.source.isl.value", "must be ≥ 1, got 0"},
	}
	for _, c := range cases {
		_, err := DecodeYAML([]byte(c.yaml))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%q: got %v", c.yaml, err)
		assert.Equal(t, c.field, ce.Field, c.yaml)
		assert.Contains(t, ce.Msg, c.msg, c.yaml)
	}
}

func TestResolvePaths(t *testing.T) {
	s, err := DecodeYAML([]byte(`
engine: {model: ./cfg.json, system: h100_sxm}
traffic: {source: {type: mooncake, path: t.jsonl}, load: {mode: trace}}`))
	require.NoError(t, err)
	s.ResolvePaths("/data")
	assert.Equal(t, "/data/cfg.json", s.Engine.Model)
	assert.Equal(t, "h100_sxm", s.Engine.System)
	assert.Equal(t, "/data/t.jsonl", s.Traffic.Source.TracePath())
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"engine":{"model":"m","system":"s"}}`))
	f.Add([]byte(`{"traffic":{"source":{"isl":{"kind":"normal"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err == nil {
			_, err = Decode(s.JSON())
			require.NoError(t, err, "canonical spec must decode")
		}
	})
}

// engine.scheduler.async_scheduling is off unless asked (and then left out of the
// spec's JSON, so reports of specs without it do not change); an llmservingsim
// source is a trace: it needs a path and takes no synthetic lengths.
func TestAsyncSchedulingAndLLMServingSimSource(t *testing.T) {
	s, err := DecodeYAML([]byte(minimal))
	require.NoError(t, err)
	assert.False(t, s.Engine.Scheduler.AsyncScheduling)
	assert.NotContains(t, string(s.JSON()), "async_scheduling")
	s, err = DecodeYAML([]byte(`
engine: {model: m, system: h100_sxm, scheduler: {async_scheduling: true}}
traffic:
  source: {type: llmservingsim, path: w.jsonl}
  load: {mode: trace}
`))
	require.NoError(t, err)
	assert.True(t, s.Engine.Scheduler.AsyncScheduling)
	assert.Contains(t, string(s.JSON()), `"async_scheduling":true`)
	for _, tc := range []struct{ src, field string }{
		{"{type: llmservingsim}", "traffic.source.path"},
		{"{type: llmservingsim, path: w.jsonl, isl: 10}", "traffic.source.isl"},
	} {
		_, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm}\ntraffic:\n  source: " + tc.src + "\n  load: {mode: trace}\n"))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, tc.field, ce.Field)
	}
}

// engine.scheduler.block_size takes vLLM's --block-size choices only
// (vllm/config/cache.py BlockSize): 7 and 48 are refused naming the field,
// each allowed size is accepted.
func TestBlockSizeIsOneOfVLLMs(t *testing.T) {
	spec := func(bs int) []byte {
		return []byte(fmt.Sprintf(`{"engine":{"model":"m","system":"h100_sxm","scheduler":{"block_size":%d}},
		"traffic":{"source":{"type":"synthetic","num_requests":1,"isl":1,"osl":1},"load":{"mode":"concurrency","concurrency":1}}}`, bs))
	}
	for _, bs := range []int{0, 7, 48, 512} {
		_, err := Decode(spec(bs))
		var ce *Error
		require.ErrorAs(t, err, &ce, "block_size %d", bs)
		assert.Equal(t, "engine.scheduler.block_size", ce.Field)
		assert.Equal(t, fmt.Sprintf("must be one of 1, 8, 16, 32, 64, 128, 256 (vLLM's --block-size choices), got %d", bs), ce.Msg)
	}
	for _, bs := range []int{1, 8, 16, 32, 64, 128, 256} {
		_, err := Decode(spec(bs))
		assert.NoError(t, err, "block_size %d", bs)
	}
}

// null for an optional block is the block left out: --set engine.scheduler=null
// drops a config's vLLM scheduler block so that another engine can run it.
func TestNullBlockIsLeftOut(t *testing.T) {
	s, err := DecodeYAML([]byte("engine: {model: m, system: h100_sxm, backend: sglang, scheduler: null, sglang: {context_length: 16384}}\n" +
		"traffic: {source: {type: synthetic, num_requests: 1, isl: 10, osl: 2}, load: {mode: concurrency, concurrency: 1}, stop: null}\n"))
	require.NoError(t, err)
	assert.Equal(t, 16384, s.Engine.SGLang.ContextLength)
	_, err = DecodeYAML([]byte("engine: {model: m, system: h100_sxm, backend: sglang, scheduler: {max_num_seqs: 4}}\n" +
		"traffic: {source: {type: synthetic, num_requests: 1, isl: 10, osl: 2}, load: {mode: concurrency, concurrency: 1}}\n"))
	var ce *Error
	require.ErrorAs(t, err, &ce, "a scheduler block written for sglang is refused")
	assert.Equal(t, "engine.scheduler.max_num_seqs", ce.Field)
}

package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// Every allowed value of every enumerated field that a builder switches on
// (config.Enums, the one list per field) is built and run: a value added to a
// list without a builder panics here, not in a user's replay.
func TestEveryListedValueHasABuilder(t *testing.T) {
	azure := filepath.Join(t.TempDir(), "trace.csv")
	require.NoError(t, os.WriteFile(azure, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,100,3\n"), 0o644))
	mooncake := writeTrace(t, []traceRow{{ts: 0, in: 100, out: 3, hashes: []int{1}}})
	llmservingsim := filepath.Join(t.TempDir(), "workload.jsonl")
	require.NoError(t, os.WriteFile(llmservingsim, []byte(`{"arrival_time_ns": 0, "input_toks": 3, "output_toks": 2, "input_tok_ids": [7, 8, 9]}`+"\n"), 0o644))

	perf := map[string]string{
		config.PerfRoofline: "{source: roofline}",
		config.PerfAIC:      "{source: aic, database: <tables>}",
		config.PerfLinear:   "{source: linear, base_ms: 2, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}",
	}
	source := map[string]string{
		config.SourceMooncake:      "{type: mooncake, path: " + mooncake + "}",
		config.SourceAzure:         "{type: azure, path: " + azure + "}",
		config.SourceLLMServingSim: "{type: llmservingsim, path: " + llmservingsim + "}",
		config.SourceSynthetic:     "{type: synthetic, num_requests: 3, isl: 100, osl: 3, dataset: {entries: 2}}",
		config.SourceSessions:      "{type: sessions, num_sessions: 2, turns: 2, isl: 50, osl: 2}",
	}
	load := map[string]string{
		config.LoadTrace:       "{mode: trace}",
		config.LoadRate:        "{mode: rate, rate_rps: 10}",
		config.LoadConcurrency: "{mode: concurrency, concurrency: 2}",
		config.LoadStages:      "{mode: stages, stages: [{requests: 2, concurrency: 1}, {requests: 1, rate_rps: 5, arrival: per_second_poisson}]}",
	}
	run := func(t *testing.T, perfBlock, workers, src, ld string) {
		t.Helper()
		rep := runYAML(t, "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, perf: "+perfBlock+", workers: "+workers+"}\n"+
			"traffic: {source: "+src+", load: "+ld+"}\n")
		assert.Positive(t, rep.Summary.Completed)
	}
	enums := config.Enums()
	for _, name := range enums["engine.perf.source"] {
		t.Run("perf "+name, func(t *testing.T) {
			require.Contains(t, perf, name, "a spec for every listed perf source")
			block := perf[name]
			if name == config.PerfAIC {
				block = strings.Replace(block, "<tables>", filepath.Join(sharedAIC(t), "systems"), 1)
			}
			run(t, block, "{aggregated: {count: 1}}", source[config.SourceSynthetic], load[config.LoadConcurrency])
		})
	}
	for _, name := range enums["traffic.source.type"] {
		for _, mode := range enums["traffic.load.mode"] {
			trace := name == config.SourceMooncake || name == config.SourceAzure || name == config.SourceLLMServingSim
			if mode == config.LoadTrace && !trace || mode == config.LoadStages && name != config.SourceSynthetic {
				continue // trace timestamps need a trace source, stages a synthetic one (a config error)
			}
			t.Run("source "+name+" load "+mode, func(t *testing.T) {
				require.Contains(t, source, name)
				require.Contains(t, load, mode)
				run(t, perf[config.PerfLinear], "{aggregated: {count: 1}}", source[name], load[mode])
			})
		}
	}
	for _, arrival := range enums["traffic.load.arrival"] {
		t.Run("arrival "+arrival, func(t *testing.T) {
			run(t, perf[config.PerfLinear], "{aggregated: {count: 1}}", source[config.SourceSynthetic],
				"{mode: rate, rate_rps: 10, arrival: "+arrival+"}")
		})
	}
	for _, sampling := range enums["traffic.source.dataset.sampling"] {
		t.Run("sampling "+sampling, func(t *testing.T) {
			run(t, perf[config.PerfLinear], "{aggregated: {count: 1}}",
				"{type: synthetic, num_requests: 5, isl: 100, osl: 2, dataset: {entries: 2, sampling: "+sampling+"}}",
				load[config.LoadConcurrency])
		})
	}
	for _, placement := range enums["engine.workers.aggregated.placement"] {
		t.Run("placement "+placement, func(t *testing.T) {
			run(t, perf[config.PerfLinear], "{aggregated: {count: 2, placement: "+placement+"}}",
				source[config.SourceSynthetic], load[config.LoadConcurrency])
			run(t, perf[config.PerfLinear], "{disaggregated: {prefill: {placement: "+placement+"}, decode: {count: 2, placement: "+
				placement+"}, kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0}}}",
				source[config.SourceSynthetic], load[config.LoadConcurrency])
		})
	}
}

// Run never changes the caller's spec: a run with an option, then one
// without it, gives the second the report of a spec that never had it.
func TestRunDoesNotChangeTheSpec(t *testing.T) {
	yml := clientSpec(1000, "", traceTraffic(t, example1Rows(), "{mode: concurrency, concurrency: 1}"))
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	before := string(s.JSON())

	with, err := Run(s, WithResponseOverhead(1.0, 100), WithSendLeg(0.5), WithDetokenization(500, 100),
		WithInterTurnDelay(3), WithRequestTimeout(60000))
	require.NoError(t, err)
	assert.Equal(t, before, string(s.JSON()), "the options changed Run's copy only")
	without, err := Run(s)
	require.NoError(t, err)
	fresh := runYAML(t, yml)

	assert.Equal(t, fresh.Records, without.Records, "no trace of the first run's options")
	assert.NotEqual(t, with.Records, without.Records, "the options did change the first run")
	// the options' spec reaches the first report's metadata only
	assert.True(t, strings.Contains(string(with.Metadata.Spec), `"response_overhead":{"base_ms":1,"per_output_token_us":100}`))
	assert.False(t, strings.Contains(string(without.Metadata.Spec), "response_overhead"))
}

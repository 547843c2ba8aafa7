package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// withoutCruise keeps every pass end on the event queue.
func withoutCruise() Option { return func(o *runOptions) { o.noCruise = true } }

// withLanded leaves the number of cruising passes the run ended in *n.
func withLanded(n *int64) Option { return func(o *runOptions) { o.landed = n } }

// TestCruiseReportEqualsEventQueue replays specs whose passes cruise (closed
// loops under KV starvation with preemptions, warm-up phases, sessions
// without detokenization, arrivals that fall on pass ends, a mixture-of-
// experts model) with cruising and with every pass end on the event queue:
// the whole report, timeline included, must be the same bytes, and the
// cruising run must have cruised (else the case tests nothing).
func TestCruiseReportEqualsEventQueue(t *testing.T) {
	linear := `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  workers: {aggregated: {count: 3}}
  scheduler: {max_num_batched_tokens: 512, max_num_seqs: 8, block_size: 16, enable_prefix_caching: true, num_gpu_blocks: 60, max_model_len: 960}
`
	cases := map[string]string{
		"closed loop, KV-starved, warm-up": linear + `
traffic:
  source: {type: synthetic, num_requests: 400, isl: {kind: uniform, min: 1, max: 400}, osl: {kind: uniform, min: 1, max: 300}}
  load: {mode: concurrency, concurrency: 24, warmup_requests: 30}
`,
		"sessions, no detokenization": linear + `
traffic:
  source: {type: sessions, num_sessions: 40, turns: {kind: uniform, min: 1, max: 5}, isl: {kind: uniform, min: 1, max: 200}, osl: {kind: uniform, min: 1, max: 200}}
  load: {mode: concurrency, concurrency: 8, inter_turn_delay_ms: 3}
`,
		// 2.1 ms per pass at 476.19 req/s: arrivals (every 2.1 ms) fall on pass ends.
		"constant rate, arrivals on pass ends": linear + `
traffic:
  source: {type: synthetic, num_requests: 200, isl: 64, osl: 100}
  load: {mode: rate, rate_rps: 476.1904761904762, arrival: constant}
`,
	}
	cases["mixture of experts, closed loop, warm-up"] = `
engine:
  model: Qwen/Qwen3-30B-A3B
  model_config_dir: AIC/model_configs
  system: h100_sxm
  workers: {aggregated: {count: 2, tp: 1}}
  scheduler: {max_num_seqs: 64, max_num_batched_tokens: 2048}
traffic:
  source: {type: synthetic, num_requests: 600, isl: {kind: uniform, min: 1, max: 2000}, osl: {kind: uniform, min: 1, max: 500}}
  load: {mode: concurrency, concurrency: 64, warmup_requests: 10}
`
	for name, yml := range cases {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(yml, "AIC/") {
				yml = strings.Replace(yml, "AIC/", sharedAIC(t)+"/", 1)
			}
			s, err := config.DecodeYAML([]byte(yml))
			require.NoError(t, err)
			var landed int64
			cruised, err := Run(s, WithTimeline(), withLanded(&landed))
			require.NoError(t, err)
			require.Positive(t, landed, "no pass cruised: the case does not test cruising")
			queued, err := Run(s, WithTimeline(), withoutCruise(), withLanded(&landed))
			require.NoError(t, err)
			require.Zero(t, landed)
			a, err := json.Marshal(cruised)
			require.NoError(t, err)
			b, err := json.Marshal(queued)
			require.NoError(t, err)
			require.True(t, string(a) == string(b), "reports differ (%d and %d bytes)", len(a), len(b))
		})
	}
}

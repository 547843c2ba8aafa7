package replay

import (
	"strconv"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stagesSpec is the linear engine running a synthetic source (isl 100, osl 2)
// through load stages; a request alone costs a 3.0 ms prefill and a 2.1 ms
// decode pass.
func stagesSpec(requests int, load string) string {
	return linearEngineFor(1000) + "traffic:\n  source: {type: synthetic, num_requests: " + itoa(requests) +
		", isl: 100, osl: 2}\n  load: " + load + "\n"
}

// Two stages, inference-perf style: a closed loop of 1 over 2 requests, then
// 2 requests spread over 2 ms. lead 1 ms, polls every 10 ms, interval 5 ms.
//
//	stage 0 begins at 0, sends from 1.0: r0 1.0 → 6.1, r1 6.1 → 11.2
//	drained at 11.2, found at the poll of 20.0, stage 1 begins at 25.0
//	its sends count from 26.0: r2 in (26.0, 28.0), r3 at 28.0 (the spread's end)
func TestStagesHandWorked(t *testing.T) {
	load := `{mode: stages, lead_s: 0.001, poll_s: 0.010, interval_s: 0.005, stages: [{requests: 2, concurrency: 1},
    {requests: 2, rate_rps: 1000, duration_s: 0.002, arrival: spread}]}`
	rep := runYAML(t, stagesSpec(4, load))
	require.Len(t, rep.Records, 4)
	r := rep.Records
	assert.Equal(t, int64(1_000_000), r[0].SendNs)
	assert.Equal(t, int64(6_100_000), r[0].EndNs)
	assert.Equal(t, int64(6_100_000), r[1].SendNs)
	assert.Equal(t, int64(11_200_000), r[1].EndNs)
	assert.Greater(t, r[2].SendNs, int64(26_000_000))
	assert.Less(t, r[2].SendNs, int64(28_000_000))
	assert.Equal(t, int64(28_000_000), r[3].SendNs)

	// without polls the next stage begins interval_s after the drain: 11.2 + 5 + 1
	rep = runYAML(t, stagesSpec(4, `{mode: stages, lead_s: 0.001, interval_s: 0.005, stages: [{requests: 2, concurrency: 1},
    {requests: 2, concurrency: 2}]}`))
	assert.Equal(t, int64(17_200_000), rep.Records[2].SendNs)
	assert.Equal(t, int64(17_200_000), rep.Records[3].SendNs)
}

// A per-second Poisson stage sends exactly its requests, none before its
// origin; a stage's requests must add up to the source's.
func TestStagesPerSecondPoisson(t *testing.T) {
	rep := runYAML(t, stagesSpec(20, `{mode: stages, lead_s: 1, stages: [{requests: 20, rate_rps: 4, arrival: per_second_poisson}]}`))
	require.Len(t, rep.Records, 20)
	for _, rec := range rep.Records {
		assert.Greater(t, rec.SendNs, int64(1_000_000_000))
	}
	_, err := runYAMLErr(stagesSpec(21, `{mode: stages, stages: [{requests: 20, concurrency: 2}]}`))
	assert.ErrorContains(t, err, "traffic.source.num_requests: 21, but the stages send 20 requests")
	_, err = runYAMLErr(stagesSpec(2, `{mode: stages, stages: [{requests: 2, concurrency: 2, rate_rps: 3}]}`))
	assert.ErrorContains(t, err, "traffic.load.stages[0].rate_rps: belongs to an open-loop stage")
	_, err = runYAMLErr(stagesSpec(2, `{mode: stages, stages: [{requests: 2, rate_rps: 3, arrival: spread}]}`))
	assert.ErrorContains(t, err, "traffic.load.stages[0].duration_s: must be in (0,")
}

func itoa(n int) string { return strconv.Itoa(n) }

// runYAMLErr decodes and runs yml, returning the first error.
func runYAMLErr(yml string) (any, error) {
	s, err := config.DecodeYAML([]byte(yml))
	if err != nil {
		return nil, err
	}
	return Run(s)
}

// inference-perf's shared-prefix generator through traffic.benchmark: one
// group of 2 prompts (64-token system prompt + 36-token question), a
// concurrent stage of 4 requests, 1 in flight. Each prompt after the first
// finds the system prompt's 4 blocks cached; the third and fourth requests
// repeat a whole prompt (6 of its 7 blocks: 96 tokens, the last block of the
// 100 kept out as vLLM keeps a prompt's last token).
func TestInferencePerfSharedPrefixReplay(t *testing.T) {
	rep := runYAML(t, linearEngineFor(1000)+`traffic:
  benchmark: {tool: inference_perf, api: {streaming: true},
    data: {type: shared_prefix, shared_prefix: {num_groups: 1, num_prompts_per_group: 2, system_prompt_len: 64, question_len: 36, output_len: 2}},
    load: {type: concurrent, stages: [{num_requests: 4, concurrency_level: 1}]}}
`)
	require.Len(t, rep.Records, 4)
	cached := []int{}
	for _, r := range rep.Records {
		assert.Equal(t, 100, r.InputTokens)
		cached = append(cached, r.CachedTokens)
	}
	assert.Equal(t, []int{0, 64, 96, 96}, cached)
	assert.Equal(t, int64(1_000_000_000), rep.Records[0].SendNs, "sent from 1 s after the stage begins")
}

// A spread stage's rate is its requests over its duration: one whose rate_rps
// says another count (500 requests at 1e-6 requests/s over 1 s was sent at
// 500 requests/s, rate_rps unread) is refused naming rate_rps and the count
// it makes; a rate within a request of the count is the stage's (inference-
// perf's int(rate × duration): 0.29 × 100 = 28.999… sends 28).
func TestStagesSpreadRateMustMatchItsRequests(t *testing.T) {
	_, err := runYAMLErr(stagesSpec(500, `{mode: stages, stages: [{requests: 500, rate_rps: 1e-6, arrival: spread, duration_s: 1}]}`))
	assert.ErrorContains(t, err, "traffic.load.stages[0].rate_rps: 1e-06 requests/s over duration_s 1 s is 1e-06 requests, "+
		"but requests is 500: a spread stage sends its requests over duration_s (give requests = int(rate_rps × duration_s), 0)")
	// 10 requests/s over 60 s is 600, not 100
	_, err = runYAMLErr(stagesSpec(100, `{mode: stages, stages: [{requests: 100, rate_rps: 10, arrival: spread, duration_s: 60}]}`))
	assert.ErrorContains(t, err, "is 600 requests, but requests is 100")
	for _, n := range []int{28, 29} { // 0.29 × 100 = 28.999999999999996: both within one request
		rep := runYAML(t, stagesSpec(n, `{mode: stages, stages: [{requests: `+itoa(n)+`, rate_rps: 0.29, arrival: spread, duration_s: 100}]}`))
		assert.Len(t, rep.Records, n)
	}
}

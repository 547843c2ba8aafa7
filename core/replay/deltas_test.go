package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// A two-turn session of a Mooncake trace in AIPerf's deltas_without_responses
// mode, on the 1 ms engine (16-token blocks, 16-token hash ids):
//
//	turn 0: 40 new tokens (ids 1 2 3), 20 output tokens. Prefill 1 + 0.4 ms,
//	        then 19 decodes of 1.1 ms: ends at 1.4 + 20.9 = 22.3 ms, having
//	        written 40 + 19 tokens of KV: 3 full blocks, the third holding
//	        its own last 8 tokens and the reply's first 8.
//	turn 1: sent at 22.3 ms; its prompt is turn 0's 40, the 20 received and
//	        its own 30 (ids 4 5): 90 tokens. It finds all 3 blocks (48
//	        tokens, the reply's part included) and computes 42: TTFT 1 + 0.42
//	        = 1.42 ms, E2E 2.52 ms.
//
// Read as whole prompts (message_array_with_responses), turn 1 is its row's 30
// tokens, with nothing cached: TTFT 1.3 ms.
func TestDeltasMakeTheConversationThePrompt(t *testing.T) {
	path := writeRaw(t, `{"session_id": 7, "timestamp": 0, "input_length": 40, "output_length": 20, "hash_ids": [1, 2, 3]}
{"session_id": 7, "delay": 0, "input_length": 30, "output_length": 2, "hash_ids": [4, 5]}
`)
	run := func(mode string) []report.Record {
		rep := runYAML(t, engine1ms(1000)+fmt.Sprintf(`traffic:
  source: {type: mooncake, path: %s, isl_block_size: 16, context_mode: %s}
  load: {mode: trace}
`, path, mode))
		for _, r := range rep.Records {
			require.Equal(t, report.StatusCompleted, r.Status)
		}
		return rep.Records
	}
	recs := run("deltas_without_responses")
	assert.InDelta(t, 22.3, msOf(recs[0].EndNs), 1e-9)
	assert.InDelta(t, 22.3, msOf(recs[1].SendNs), 1e-9)
	assert.Equal(t, 90, recs[1].InputTokens)
	assert.Equal(t, 48, recs[1].CachedTokens)
	assert.InDelta(t, 1.42, ttftOf(recs[1]), 1e-9)
	assert.InDelta(t, 2.52, recs[1].E2E(), 1e-9)

	recs = run("message_array_with_responses")
	assert.Equal(t, 30, recs[1].InputTokens)
	assert.Equal(t, 0, recs[1].CachedTokens)
	assert.InDelta(t, 1.3, ttftOf(recs[1]), 1e-9)
}

// A reply cut short (a 3 ms timeout cancels turn 0 after 2 tokens, received
// at 1.4 and 2.5 ms) enters the next turn's prompt as the client received it:
// 40 + 2 + 30 = 72 tokens; turn 0 wrote 41 tokens of KV, so 2 full blocks
// (32 tokens) are found.
func TestDeltasHoldTheReplyAsReceived(t *testing.T) {
	path := writeRaw(t, `{"session_id": 1, "timestamp": 0, "input_length": 40, "output_length": 20, "hash_ids": [1, 2, 3]}
{"session_id": 1, "delay": 0, "input_length": 30, "output_length": 2, "hash_ids": [4, 5]}
`)
	rep := runYAML(t, engine1ms(1000)+fmt.Sprintf(`traffic:
  source: {type: mooncake, path: %s, isl_block_size: 16, context_mode: deltas_without_responses}
  load: {mode: trace, request_timeout_ms: 3}
`, path))
	r0, r1 := rep.Records[0], rep.Records[1]
	require.Equal(t, report.StatusCanceled, r0.Status)
	assert.Equal(t, 2, r0.OutputTokens)
	assert.Equal(t, 72, r1.InputTokens)
	assert.Equal(t, 32, r1.CachedTokens)
}

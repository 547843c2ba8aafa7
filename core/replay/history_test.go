package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// historySpec: the linear engine (2 ms + 0.01 ms per prompt token + 0.1 ms
// per decode), one client, one session of two turns of 100 new tokens and
// osl output tokens each.
func historySpec(blocks int, osl, extra string) string {
	return linearEngineFor(blocks) + `
traffic:
  source: {type: sessions, num_sessions: 1, turns: 2, isl: 100, osl: ` + osl + `}
  load: {mode: concurrency, concurrency: 1` + extra + `}
`
}

// GIVEN a turn canceled after 2 of its 5 tokens, THEN the next turn's prompt
// holds the 2 the client received, as a chat client appends the reply it
// got: 100 + 2 + 100 = 202 tokens (the generator's full history would make
// it 205):
//
//	turn 0: prefill [0, 3.0] (2 + 1.0), tokens at 3.0 and 5.1 (decodes of
//	        2.1 ms), canceled at 6.0 (request_timeout_ms 6)
//	turn 1: sent at 6.0, waits for the pass running then ([5.1, 7.2]: the
//	        engine drops turn 0 after it), 96 tokens cached (turn 0's 6 full
//	        blocks), prefill of 106: [7.2, 10.26] (2 + 1.06)
func TestCanceledTurnAddsWhatTheClientReceived(t *testing.T) {
	rep := runYAML(t, historySpec(1000, "5", ", request_timeout_ms: 6"))
	require.Len(t, rep.Records, 2)
	t0, t1 := rep.Records[0], rep.Records[1]
	assert.Equal(t, "canceled", t0.Status)
	assert.Equal(t, 2, t0.OutputTokens)
	assert.Equal(t, 202, t1.InputTokens)
	assert.Equal(t, 96, t1.CachedTokens)
	assert.InDelta(t, 6.0, msOf(t1.SendNs), 1e-9)
	assert.InDelta(t, 10.26, msOf(t1.FirstTokenNs), 1e-9)
}

// GIVEN a turn rejected (prompt 100 + output 250 > max_model_len 320, a
// cache of 20 blocks), THEN it added nothing to the conversation: the next
// turn's prompt is 100 + 0 + 100 = 200 tokens, not 100 + 250 + 100 = 450
// (200 + 250 is over 320 too: rejected as well, naming its real prompt).
func TestRejectedTurnAddsNoHistory(t *testing.T) {
	rep := runYAML(t, historySpec(20, "250", ""))
	require.Len(t, rep.Records, 2)
	assert.Equal(t, "rejected", rep.Records[0].Status)
	assert.Equal(t, 200, rep.Records[1].InputTokens)
	assert.Equal(t, "prompt (200) + output (250) tokens exceed max_model_len (320)", rep.Records[1].Reason)
}

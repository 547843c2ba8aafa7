package workload

import (
	"io"
	"strings"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two sessions of 3 fixed turns, 100 new input and 10 output tokens per turn:
// input_k = k × (100 + 10) + 100 → 100, 210, 320.
func TestSessions_ConversationGrows(t *testing.T) {
	src, err := NewSessions(config.SessionsSource{NumSessions: 2, Turns: fixedLen(3),
		ISL: fixedLen(100), OSL: fixedLen(10)}, NewStreams(1))
	require.NoError(t, err)
	var got []Request
	for {
		var r Request
		if err := src.Next(&r); err == io.EOF {
			break
		}
		got = append(got, r)
	}
	require.Len(t, got, 6)
	for i, r := range got {
		assert.Equal(t, int64(i), r.ID)
		assert.Equal(t, int64(i/3), r.SessionID)
		assert.Equal(t, i%3, r.Turn)
		assert.Equal(t, (i%3)*110+100, r.InputTokens)
		assert.Equal(t, i%3 == 2, r.LastTurn)
		assert.NotZero(t, r.ContentKey)
	}
	assert.NotEqual(t, got[0].ContentKey, got[3].ContentKey)
}

// Stream hashes: turn k+1's prompt blocks begin with every block turn k wrote
// (its prompt and all output tokens but the last).
func TestSessions_HashesExtendAcrossTurns(t *testing.T) {
	t0 := Request{InputTokens: 100, OutputTokens: 10, ContentKey: 42}
	t1 := Request{InputTokens: 210, OutputTokens: 10, ContentKey: 42}
	h0 := BlockHashes(&t0, 16, nil)
	h1 := BlockHashes(&t1, 16, nil)
	require.Len(t, h0, (100+9)/16) // 6 full blocks of KV written by turn 0
	require.Len(t, h1, (210+9)/16)
	assert.Equal(t, h0, h1[:len(h0)])
	other := Request{InputTokens: 100, OutputTokens: 10, ContentKey: 43}
	assert.NotEqual(t, h0[0], BlockHashes(&other, 16, nil)[0])
}

func TestMooncake_SessionAndDelay(t *testing.T) {
	src := NewMooncakeSource(strings.NewReader(`{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 4}
{"timestamp": 1, "input_length": 10, "output_length": 1, "session_id": 4, "delay": 2.5}
{"timestamp": 2, "input_length": 10, "output_length": 1}
`), "s.jsonl")
	var r Request
	require.NoError(t, src.Next(&r))
	assert.Equal(t, int64(4), r.SessionID)
	assert.False(t, r.HasDelay)
	require.NoError(t, src.Next(&r))
	assert.True(t, r.HasDelay)
	assert.Equal(t, int64(2_500_000), r.DelayNs)
	require.NoError(t, src.Next(&r))
	assert.Equal(t, int64(-1), r.SessionID)

	bad := NewMooncakeSource(strings.NewReader(`{"timestamp": 0, "input_length": 10, "output_length": 1, "delay": 1}`+"\n"), "b.jsonl")
	err := bad.Next(&r)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "b.jsonl:1: delay: a delay needs a session_id")
}

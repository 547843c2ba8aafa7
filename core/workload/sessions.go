package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/aisimulate/aisimulate/core/config"
)

// Stream names used by the sessions generator (besides StreamISL and StreamOSL).
const (
	StreamTurns = "turns"
)

// NewSessions returns a Source of every turn of every session (a sessions
// traffic.source: NumSessions conversations of Turns turns, each turn adding
// ISL new input tokens and producing OSL tokens), session by session. Turn
// k's prompt is the whole conversation so far plus its new input:
//
//	input_k = Σ_{i<k} (new_i + output_i) + new_k
//
// so each prompt extends the previous prompt and its answer (a sum past
// math.MaxInt stays math.MaxInt: such a prompt is longer than any
// max_model_len and is rejected, never wrapped to a short one); the requests carry
// the session's ContentKey, so the prefix cache can reuse the earlier turns.
// Request IDs count turns in generation order. Turn counts come from stream
// "turns", new input from "isl" and outputs from "osl".
func NewSessions(spec config.SessionsSource, streams *Streams) (Source, error) {
	if streams == nil {
		return nil, errors.New("workload: sessions: streams: missing (nil)")
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("workload: sessions: %w", err)
	}
	return &sessionSource{spec: spec, turns: streams.Get(StreamTurns), isl: streams.Get(StreamISL),
		osl: streams.Get(StreamOSL), key: streams.Seed()}, nil
}

type sessionSource struct {
	spec             config.SessionsSource
	turns, isl, osl  *rand.Rand
	key              uint64
	session, turn, n int // current session, its next turn, its turn count
	history          int // tokens of the conversation so far
	id               int64
}

// Next implements Source.
func (s *sessionSource) Next(r *Request) error {
	if s.turn == s.n { // start the next session
		if s.session >= s.spec.NumSessions {
			return io.EOF
		}
		s.n, s.turn, s.history = sampleLength(s.spec.Turns, s.turns), 0, 0
		s.session++
	}
	in := addTokens(s.history, sampleLength(s.spec.ISL, s.isl))
	out := sampleLength(s.spec.OSL, s.osl)
	*r = Request{
		ID: s.id, InputTokens: in, OutputTokens: out,
		SessionID: int64(s.session - 1), Turn: s.turn, LastTurn: s.turn == s.n-1,
		// non-zero and distinct per session and seed
		ContentKey: mix64(s.key^0x5e55_1045) ^ uint64(s.session),
	}
	s.history = addTokens(in, out)
	s.turn++
	s.id++
	return nil
}

// addTokens is a + b for token counts ≥ 0, saturated at math.MaxInt.
func addTokens(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Stream names used by the sessions generator (besides StreamISL and StreamOSL).
const (
	StreamTurns = "turns"
)

// SessionsSpec describes generated multi-turn conversations: NumSessions
// sessions of Turns turns each; every turn adds ISL new input tokens to the
// conversation and answers with OSL output tokens.
type SessionsSpec struct {
	NumSessions int  // ≥ 0
	Turns       Dist // turns per session, ≥ 1
	ISL         Dist // new input tokens per turn, ≥ 1
	OSL         Dist // output tokens per turn, ≥ 0
}

// NewSessions returns a Source of every turn of every session, session by
// session. Turn k's prompt is the whole conversation so far plus its new input:
//
//	input_k = Σ_{i<k} (new_i + output_i) + new_k
//
// so each prompt extends the previous prompt and its answer (a sum past
// math.MaxInt stays math.MaxInt: such a prompt is longer than any
// max_model_len and is rejected, never wrapped to a short one); the requests carry
// the session's ContentKey, so the prefix cache can reuse the earlier turns.
// Request IDs count turns in generation order. Turn counts come from stream
// "turns", new input from "isl" and outputs from "osl".
func NewSessions(spec SessionsSpec, streams *Streams) (Source, error) {
	if streams == nil {
		return nil, errors.New("workload: sessions: streams: missing (nil)")
	}
	if spec.NumSessions < 0 {
		return nil, fmt.Errorf("workload: sessions: num_sessions: must be ≥ 0, got %d", spec.NumSessions)
	}
	for _, c := range []struct {
		name string
		d    Dist
		min  int
	}{{"turns", spec.Turns, 1}, {"isl", spec.ISL, 1}, {"osl", spec.OSL, 0}} {
		if err := c.d.Validate(c.min); err != nil {
			return nil, fmt.Errorf("workload: sessions: %s.%w", c.name, err)
		}
	}
	return &sessionSource{spec: spec, turns: streams.Get(StreamTurns), isl: streams.Get(StreamISL),
		osl: streams.Get(StreamOSL), key: streams.Seed()}, nil
}

type sessionSource struct {
	spec             SessionsSpec
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
		s.n, s.turn, s.history = s.spec.Turns.Sample(s.turns), 0, 0
		s.session++
	}
	in := addTokens(s.history, s.spec.ISL.Sample(s.isl))
	out := s.spec.OSL.Sample(s.osl)
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

package replay

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// runSim replays yml and returns its state after the loop.
func runSim(t *testing.T, yml string, opts ...Option) *sim {
	t.Helper()
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	m, err := prepare(s, opts)
	require.NoError(t, err)
	t.Cleanup(m.tr.close)
	require.NoError(t, m.start())
	require.NoError(t, m.loop())
	require.NoError(t, m.checkEnd())
	return m
}

// One request of 16 prompt tokens and 50 output tokens on one worker of the
// linear engine: pass 1 computes the prompt and samples token 1 (2.0 + 0.16
// ms), passes 2–50 decode (2.1 ms each). Passes 1 and 2 are explicit (the
// first two tokens' times are recorded), pass 50 gives the last token; passes
// 3–49 hold a steady request only and cruise. Events pushed: the arrival,
// the ends of passes 1, 2 and 50, the client's release — 5, where every pass
// end an event would make 52.
func TestCruiseRunsSteadyPassesWithoutEvents(t *testing.T) {
	yml := linearEngineFor(1000) + `
traffic:
  source: {type: synthetic, num_requests: 1, isl: 16, osl: 50}
  load: {mode: concurrency, concurrency: 1}
`
	m := runSim(t, yml)
	require.Equal(t, uint64(5), m.h.seq)
	require.Equal(t, int64(50), m.workers[0].Counters().Passes)
	require.Equal(t, int64(2_160_000+49*2_100_000), m.now)
	require.Equal(t, int64(2_160_000+49*2_100_000), m.records[0].EndNs)

	ref := runSim(t, yml, WithPerTokenDecode()) // no steady requests: every pass end is an event
	require.Equal(t, uint64(52), ref.h.seq)
	require.Equal(t, ref.records, m.records)
}

// A request that arrives while its worker cruises joins the first pass that
// starts after it. A (16 + 40 tokens) runs alone: pass k ends at 2.16 +
// (k − 1) × 2.1 ms, and from pass 3 on it cruises. B (16 + 5) arrives at 30
// ms, during pass 15 (29.46–31.56 ms); pass 16 computes B's prompt beside A's
// decode (2.0 + 0.16 + 0.1 = 2.26 ms), so B's first token comes at 33.82 ms,
// and A's next tokens 2.2 ms apart (B decoding too) until B finishes.
func TestCruiseArrivalJoinsTheNextPass(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 16, out: 40}, {ts: 30, in: 16, out: 5}}
	yml := traceSpec(t, 1000, rows, "")
	rep := runYAML(t, yml)
	b := rep.Records[1]
	require.Equal(t, int64(30_000_000), b.ArrivalNs)
	require.InDelta(t, 33.82, msOf(b.FirstTokenNs), 1e-9)
	require.InDelta(t, 3.82, msOf(b.FirstTokenNs-b.ArrivalNs), 1e-9)
	// B: passes 16–20 (its 5 tokens); A: 40 passes, 5 of them 0.1 ms longer
	// (pass 16 with B's prompt, 17–20 with B's decode)
	require.InDelta(t, 33.82+4*2.2, msOf(b.EndNs), 1e-9)
	require.InDelta(t, 2.16+39*2.1+0.16+4*0.1, msOf(rep.Records[0].EndNs), 1e-9)

	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	ref, err := Run(s, WithPerTokenDecode())
	require.NoError(t, err)
	require.Equal(t, ref.Records, rep.Records)
}

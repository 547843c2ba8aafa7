package client

import (
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/workload"
)

func TestNewPathUnits(t *testing.T) {
	p := NewPath(Costs{SendMs: 0.255, Detokenize: true, DetokBaseUs: 150, DetokPerTokenUs: 2,
		OverheadBaseMs: 1.40, OverheadPerOutputTokenUs: 3.65, InterTurnDelayMs: 10})
	assert.Equal(t, int64(255_000), p.SendNs)
	assert.Equal(t, int64(10_000_000), p.InterTurnDelayNs)
	// 1.40 ms + 3.65 µs × 128 = 1.8672 ms
	assert.Equal(t, int64(1_867_200), p.ReleaseNs(0, 128))
	// no output: base only
	assert.Equal(t, int64(5+1_400_000), p.ReleaseNs(5, 0))
	assert.Equal(t, int64(7), p.TurnDelayNs(7, true))
	assert.Equal(t, int64(10_000_000), p.TurnDelayNs(0, false))
}

// The arrival delay is the send leg plus the input processing per prompt
// token: 0.255 ms + 2.5 µs × 4,096 = 10.495 ms; without a per-token cost it is
// the send leg whatever the prompt; a huge cost saturates instead of wrapping.
func TestArrivalDelayNs(t *testing.T) {
	p := NewPath(Costs{SendMs: 0.255, IntakePerTokenUs: 2.5})
	assert.Equal(t, int64(10_495_000), p.ArrivalDelayNs(4096))
	assert.Equal(t, int64(255_000), p.ArrivalDelayNs(0))
	plain := NewPath(Costs{SendMs: 0.255})
	assert.Equal(t, int64(255_000), plain.ArrivalDelayNs(1_000_000))
	huge := NewPath(Costs{SendMs: 1e9, IntakePerTokenUs: 1e5})
	assert.Greater(t, huge.ArrivalDelayNs(math.MaxInt32), int64(0))
}

// The output processor is a FIFO server: a job starts at max(pass end, previous
// job done). base 500 µs, 2,000 µs per token (worked example 2's queueing case):
// jobs at 14.00 (1 token) → 16.50; 17.10 (2) → 21.60; 19.30 (2) → 26.10.
func TestOutputProcessorFIFO(t *testing.T) {
	p := NewPath(Costs{Detokenize: true, DetokBaseUs: 500, DetokPerTokenUs: 2000})
	var o OutputProcessor
	assert.Equal(t, int64(16_500_000), o.Submit(&p, 14_000_000, 1))
	assert.Equal(t, int64(21_600_000), o.Submit(&p, 17_100_000, 2))
	assert.Equal(t, int64(26_100_000), o.Submit(&p, 19_300_000, 2)) // waited 2.3 ms
	assert.Equal(t, int64(2_500_000+4_500_000+4_500_000), o.BusyNs)
}

// sliceSource replays fixed requests.
type sliceSource struct {
	rs []workload.Request
	i  int
}

func (s *sliceSource) Next(r *workload.Request) error {
	if s.i == len(s.rs) {
		return io.EOF
	}
	*r = s.rs[s.i]
	s.i++
	return nil
}

// Rows a0, b0, a1, c (no session), b1, a2: starts are a0, b0, c in order; the
// later turns of a and b come out on demand, numbered by session.
func TestFeedStartsAndTurns(t *testing.T) {
	a, b := int64(1), int64(2)
	src := &sliceSource{rs: []workload.Request{
		{ID: 0, SessionID: a}, {ID: 1, SessionID: b}, {ID: 2, SessionID: a},
		{ID: 3, SessionID: -1}, {ID: 4, SessionID: b}, {ID: 5, SessionID: a},
	}}
	f := NewFeed(src)
	var r, next workload.Request
	var ids []int64
	for {
		ok, err := f.NextStart(&r)
		require.NoError(t, err)
		if !ok {
			break
		}
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []int64{0, 1, 3}, ids)
	prev := workload.Request{ID: 0, SessionID: a}
	var turns []int
	for {
		ok, err := f.NextTurn(&prev, &next)
		require.NoError(t, err)
		if !ok {
			break
		}
		turns = append(turns, int(next.ID), next.Turn)
		prev = next
	}
	assert.Equal(t, []int{2, 1, 5, 2}, turns) // ids 2 and 5 are a's turns 1 and 2
	prev = workload.Request{ID: 1, SessionID: b}
	ok, err := f.NextTurn(&prev, &next)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(4), next.ID)
}

// A generator's LastTurn ends a session without reading ahead.
func TestFeedLastTurnReadsNothing(t *testing.T) {
	src := &sliceSource{rs: []workload.Request{{ID: 0, SessionID: 0, LastTurn: true}, {ID: 1, SessionID: 1}}}
	f := NewFeed(src)
	var r, next workload.Request
	ok, _ := f.NextStart(&r)
	require.True(t, ok)
	ok, _ = f.NextTurn(&r, &next)
	assert.False(t, ok)
	assert.Equal(t, 1, src.i, "nothing beyond the first row was read")
}

// TestJitterNs_DeterministicMean: the jitter is exponential with the
// configured mean, drawn from the client_jitter stream of the seed.
// μ = 0.31 ms = 310,000 ns; 1e5 draws have a sample mean within 1 % of μ
// (standard error μ/√1e5 ≈ 0.32 %) and a sample std ≈ μ (exponential);
// none is negative. The same seed repeats the draws exactly; μ = 0 draws
// nothing and returns 0.
func TestJitterNs_DeterministicMean(t *testing.T) {
	p := NewPath(Costs{OverheadBaseMs: 1.40, OverheadJitterMs: 0.31})
	require.Equal(t, 310_000.0, p.OverheadJitterNs)
	draw := func(seed uint64) []int64 {
		rng := workload.NewStreams(seed).Get(StreamJitter)
		out := make([]int64, 100_000)
		for i := range out {
			out[i] = p.JitterNs(rng)
		}
		return out
	}
	a, b := draw(7), draw(7)
	assert.Equal(t, a, b)
	var sum, sum2 float64
	for _, v := range a {
		require.GreaterOrEqual(t, v, int64(0))
		sum += float64(v)
		sum2 += float64(v) * float64(v)
	}
	n := float64(len(a))
	mean := sum / n
	std := math.Sqrt(sum2/n - mean*mean)
	assert.InEpsilon(t, 310_000.0, mean, 0.01)
	assert.InEpsilon(t, 310_000.0, std, 0.02)
	assert.NotEqual(t, a[:10], draw(8)[:10])

	var off Path
	rng := workload.NewStreams(7).Get(StreamJitter)
	assert.Equal(t, int64(0), off.JitterNs(rng))
	assert.Equal(t, draw(7)[0], p.JitterNs(rng), "μ = 0 must not advance the stream")
}

// TestSerialReleaseNs: a serial client finishes one response at a time.
// base 1.40 ms, 3.65 µs/token, 128 tokens: overhead 1.8672 ms = 1,867,200 ns.
// Two responses end together at t = 10 ms: the first is released at
// 10 + 1.8672 = 11.8672 ms; the second starts when the client is free
// (11.8672 ms) and is released at 13.7344 ms. A parallel client releases
// both at 11.8672 ms. Jitter adds on top (here 500 ns).
func TestSerialReleaseNs(t *testing.T) {
	p := NewPath(Costs{OverheadBaseMs: 1.40, OverheadPerOutputTokenUs: 3.65, OverheadSerial: true})
	first := p.SerialReleaseNs(10_000_000, 0, 128, 0)
	assert.Equal(t, int64(11_867_200), first)
	assert.Equal(t, int64(13_734_400), p.SerialReleaseNs(10_000_000, first, 128, 0))
	assert.Equal(t, int64(13_734_900), p.SerialReleaseNs(10_000_000, first, 128, 500))
	// a response that ends after the client became free starts at its end
	assert.Equal(t, int64(21_867_200), p.SerialReleaseNs(20_000_000, first, 128, 0))
	p.OverheadSerial = false
	assert.Equal(t, int64(11_867_200), p.SerialReleaseNs(10_000_000, first, 128, 0))
}

// Read-ahead is bounded: with MaxHeld 2, finding the start after session a's
// three later turns (rows a0, a1, a2, a3, b0) stops with a HeldLimitError
// once two rows are held, instead of holding the whole session; Held counts
// what the feed keeps and drops as turns are handed out.
func TestFeedReadAheadIsBounded(t *testing.T) {
	a, b := int64(1), int64(2)
	rows := []workload.Request{{ID: 0, SessionID: a}, {ID: 1, SessionID: a}, {ID: 2, SessionID: a},
		{ID: 3, SessionID: a}, {ID: 4, SessionID: b}}
	f := NewFeed(&sliceSource{rs: rows})
	f.MaxHeld = 2
	var r workload.Request
	ok, err := f.NextStart(&r) // a0, held: nothing
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 0, f.Held())
	ok, err = f.NextStart(&r) // reads a1, a2 (held 2), then a3 would make 3
	assert.False(t, ok)
	var he *HeldLimitError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, 2, he.Held)

	f = NewFeed(&sliceSource{rs: rows}) // unbounded: b0 found, a1..a3 held, then handed out
	require.NoError(t, firstErr(f.NextStart(&r)))
	require.NoError(t, firstErr(f.NextStart(&r)))
	assert.Equal(t, int64(4), r.ID)
	assert.Equal(t, 3, f.Held())
	prev := workload.Request{ID: 0, SessionID: a}
	require.NoError(t, firstErr(f.NextTurn(&prev, &r)))
	assert.Equal(t, 2, f.Held())
}

func firstErr(_ bool, err error) error { return err }

// With a shared event loop the input processing is a job in the output
// processor's FIFO. base 100 µs, 50 µs per token, intake 2 µs per prompt token:
// a pass ends at 10.0 ms with 8 tokens (job 0.5 ms → 10.5); a request of 1,000
// prompt tokens reaches the API server at 10.2 and waits for it (2.0 ms, 10.5
// → 12.5); the next pass's job (11.0, 8 tokens) waits for the intake (12.5 →
// 13.0); a request of 500 tokens at 13.5 finds the loop idle (13.5 → 14.5).
func TestIntakeSharesTheLoop(t *testing.T) {
	p := NewPath(Costs{Detokenize: true, DetokBaseUs: 100, DetokPerTokenUs: 50, IntakePerTokenUs: 2, SharedLoop: true})
	assert.True(t, p.SharedLoop)
	var o OutputProcessor
	assert.Equal(t, int64(10_500_000), o.Submit(&p, 10_000_000, 8))
	assert.Equal(t, int64(12_500_000), o.Intake(&p, 10_200_000, 1000))
	assert.Equal(t, int64(13_000_000), o.Submit(&p, 11_000_000, 8))
	assert.Equal(t, int64(14_500_000), o.Intake(&p, 13_500_000, 500))
	assert.Equal(t, int64(500_000+2_000_000+500_000+1_000_000), o.BusyNs)
	assert.Equal(t, int64(2_000_000), p.IntakeNs(1000))
}

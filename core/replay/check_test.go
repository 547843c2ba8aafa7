package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/workload"
)

// checkTrace runs Check on the linear engine reading rows (a Mooncake file)
// in the given load mode.
func checkTrace(t *testing.T, rows, load string) (string, error) {
	t.Helper()
	path := writeRaw(t, rows)
	s, err := config.DecodeYAML([]byte(linearEngineFor(1000) + traceTrafficAt(path, load)))
	require.NoError(t, err)
	_, err = Check(s)
	return path, err
}

// Check reads the whole trace through the replay's reader: a bad row anywhere
// is the error Run would meet, file:line, though nothing is replayed.
func TestCheckReadsTheWholeTrace(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 5, "output_length": 2}` + "\n"
	_, err := checkTrace(t, good+good, "{mode: trace}")
	require.NoError(t, err)

	path, err := checkTrace(t, good+`{"timestamp": 1, "input_length": -5, "output_length": 2}`+"\n", "{mode: trace}")
	var de *workload.DataError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, path+":2: input_length: must be ≥ 1, got -5", err.Error())

	// trace mode: a row that starts something needs a timestamp (line 3: the
	// first row of session "b"); a later turn of "a" may go without one
	rows := `{"timestamp": 0, "input_length": 5, "output_length": 2, "session_id": "a"}` + "\n" +
		`{"input_length": 5, "output_length": 2, "session_id": "a", "delay": 1}` + "\n" +
		`{"input_length": 5, "output_length": 2, "session_id": "b"}` + "\n"
	path, err = checkTrace(t, rows, "{mode: trace}")
	require.ErrorAs(t, err, &de)
	assert.Equal(t, path+":3: timestamp: missing: load mode trace sends each request at its timestamp (only a later turn of a session, sent after the turn before it, may go without one)", err.Error())
	// a closed loop does not use timestamps
	_, err = checkTrace(t, rows, "{mode: concurrency, concurrency: 1}")
	require.NoError(t, err)
}

// Check reads the starts the replay reads before any turn can end, through
// the same feed: a trace whose first session holds 4,999 later turns before
// the second session starts needs them all read ahead (held) by the replay's
// second start, at 0 for the second client of a closed loop, when the first
// is sent in load mode trace. With a budget of the estimate plus 1,000 rows,
// Check refuses it as the replay does, with the replay's message; with room
// for the 4,999 rows, both accept it.
func TestCheckMeetsTheReadAheadBudget(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		b.WriteString(`{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 0}` + "\n")
	}
	b.WriteString(`{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 1}` + "\n")
	path := writeRaw(t, b.String())
	for _, load := range []string{"{mode: concurrency, concurrency: 2}", "{mode: trace}"} {
		spec := linearEngineFor(1000) + traceTrafficAt(path, load)
		e := estimateYAML(t, spec)
		budget := func(rows int64) string {
			return spec + fmt.Sprintf("execution: {max_memory_gb: %.9f}\n", float64(e.Total+rows*requestB)/1e9)
		}
		s, err := config.DecodeYAML([]byte(budget(1000)))
		require.NoError(t, err)
		_, checkErr := Check(s)
		_, runErr := Run(s)
		var ce *config.Error
		require.ErrorAs(t, checkErr, &ce, load)
		assert.Equal(t, "execution.max_memory_gb", ce.Field)
		assert.Contains(t, ce.Msg, "the workload would be read 1000 rows ahead (later turns of open sessions) to reach the next session, which would pass the memory budget: lower the trace's rows between one session's start and the next ("+path+")")
		require.Error(t, runErr)
		assert.Equal(t, runErr.Error(), checkErr.Error(), load)

		s, err = config.DecodeYAML([]byte(budget(6000)))
		require.NoError(t, err)
		_, checkErr = Check(s)
		assert.NoError(t, checkErr, load)
		_, runErr = Run(s)
		assert.NoError(t, runErr, load)
	}
}

// The later turns the feed read ahead are known to Check's read of the rest:
// a turn without a timestamp of a session whose start the feed read is not
// taken for a start (load mode trace needs timestamps on starts only).
func TestCheckKnowsTheSessionsReadAhead(t *testing.T) {
	rows := `{"timestamp": 0, "input_length": 5, "output_length": 2, "session_id": "a"}` + "\n" +
		`{"input_length": 5, "output_length": 2, "session_id": "a", "delay": 1}` + "\n" +
		`{"timestamp": 1, "input_length": 5, "output_length": 2, "session_id": "b"}` + "\n" +
		`{"input_length": 5, "output_length": 2, "session_id": "a", "delay": 1}` + "\n" +
		`{"input_length": 5, "output_length": 2, "session_id": "b", "delay": 1}` + "\n"
	_, err := checkTrace(t, rows, "{mode: trace}")
	require.NoError(t, err)
	// a start without a timestamp after them is still refused (line 6)
	path, err := checkTrace(t, rows+`{"input_length": 5, "output_length": 2, "session_id": "c"}`+"\n", "{mode: trace}")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), path+":6: timestamp: missing"), err.Error())
}

// stopAfter is a context whose Err is nil for its first n looks, then
// context.Canceled: a Ctrl-C that lands while the trace is being read.
type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// CheckContext stops reading a trace when its context is done: it looks
// before the first row and every 16,384 rows, so a check canceled before it
// starts reads nothing (the bad row 50,000 is never met), and one canceled at
// its third look stops after 2 × 16,384 = 32,768 rows. Through the feed (a
// closed loop's starts, read ahead past a session's later turns) as well.
func TestCheckStopsWhenCanceled(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100_000; i++ {
		if i == 49_999 {
			b.WriteString(`{"timestamp": 1, "input_length": -5, "output_length": 2}` + "\n")
			continue
		}
		b.WriteString(`{"timestamp": 0, "input_length": 5, "output_length": 2}` + "\n")
	}
	path := writeRaw(t, b.String())
	check := func(ctx context.Context, load string) error {
		s, err := config.DecodeYAML([]byte(linearEngineFor(1000) + traceTrafficAt(path, load)))
		require.NoError(t, err)
		_, err = CheckContext(ctx, s)
		return err
	}
	err := check(context.Background(), "{mode: trace}")
	require.Error(t, err)
	assert.Equal(t, path+":50000: input_length: must be ≥ 1, got -5", err.Error())

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	err = check(canceled, "{mode: trace}")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "check stopped after reading 0 rows of "+path+": context canceled", err.Error())

	err = check(&stopAfter{context.Background(), 2}, "{mode: trace}")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "check stopped after reading 32768 rows of "+path+": context canceled", err.Error())

	// one session of 100,000 rows (a bad one at 50,000) and a second client:
	// the feed reads past the session's later turns, polled as it goes
	var sb strings.Builder
	for i := 0; i < 100_000; i++ {
		in := 5
		if i == 49_999 {
			in = -5
		}
		fmt.Fprintf(&sb, `{"timestamp": 0, "input_length": %d, "output_length": 2, "session_id": 7}`+"\n", in)
	}
	path = writeRaw(t, sb.String())
	err = check(context.Background(), "{mode: concurrency, concurrency: 2}")
	require.Error(t, err)
	assert.Equal(t, path+":50000: input_length: must be ≥ 1, got -5", err.Error())
	err = check(&stopAfter{context.Background(), 1}, "{mode: concurrency, concurrency: 2}")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "check stopped after reading 16384 rows of "+path+": context canceled", err.Error())
}

package replay

import (
	"os"
	"path/filepath"
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
	path := filepath.Join(t.TempDir(), "tb.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(rows), 0o644))
	s, err := config.DecodeYAML([]byte(linearEngineFor(1000) + "\ntraffic:\n  source: {type: mooncake, path: " + path + "}\n  load: " + load + "\n"))
	require.NoError(t, err)
	_, err = Check(s)
	return path, err
}

// Check reads the whole trace through the replay's reader: a bad row anywhere
// is the error Run would meet, file:line, though nothing is replayed (#16 C5).
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

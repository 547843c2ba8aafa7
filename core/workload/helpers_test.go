package workload

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Real traces, read in place (never copied into the repository).
const (
	mooncakeConversationPath = "../../../shared/data/traces/mooncake/conversation_trace.jsonl"
	mooncakeSyntheticPath    = "../../../shared/data/traces/mooncake/synthetic_trace.jsonl"
	azureCodePath            = "../../../shared/data/traces/azure/AzureLLMInferenceTrace_code.csv"
	azureConvPath            = "../../../shared/data/traces/azure/AzureLLMInferenceTrace_conv.csv"
)

// realTrace returns the path of a shared data file, skipping the test when
// the data is absent.
func realTrace(tb testing.TB, rel string) string {
	tb.Helper()
	if _, err := os.Stat(rel); err != nil {
		tb.Skipf("real trace not available: %v", err)
	}
	return rel
}

// writeTemp writes content to a new file named name in a temp dir and
// returns its path.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// drain reads src to the end and returns the requests and the first non-EOF
// error (nil when it reached io.EOF).
func drain(src Source) ([]Request, error) {
	var out []Request
	for {
		var r Request
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

// seq returns [lo, lo+1, …, hi].
func seq(lo, hi int64) []int64 {
	var s []int64
	for v := lo; v <= hi; v++ {
		s = append(s, v)
	}
	return s
}

package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openMooncakeAll(t *testing.T, path string) ([]Request, error) {
	t.Helper()
	src, c, err := OpenMooncake(path)
	require.NoError(t, err)
	defer c.Close()
	return drain(src)
}

func TestMooncake_RealConversationTrace(t *testing.T) {
	path := realTrace(t, mooncakeConversationPath)
	reqs, err := openMooncakeAll(t, path)
	require.NoError(t, err)
	// GIVEN the FAST25 conversation trace: 12,031 rows (wc -l), no blank lines.
	require.Len(t, reqs, 12031)

	// Line 1 of the file:
	// {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, …, 13]}
	// 14 ids = ⌈6758 / 512⌉ (13·512 = 6656 < 6758 ≤ 7168 = 14·512).
	assert.Equal(t, Request{
		ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 6758, OutputTokens: 500,
		HashIDs: seq(0, 13), HashBlockTokens: 512, SessionID: -1, Turn: 0, Line: 1,
	}, reqs[0])
	// Line 2: {"timestamp": 0, "input_length": 7322, "output_length": 490, "hash_ids": [0, 14, …, 27]}
	assert.Equal(t, Request{
		ID: 1, Timestamp: 0, HasTimestamp: true, InputTokens: 7322, OutputTokens: 490,
		HashIDs: append([]int64{0}, seq(14, 27)...), HashBlockTokens: 512, SessionID: -1, Line: 2,
	}, reqs[1])
	// Last line: timestamp 3536999 ms = 3,536,999,000,000 ns, input 20774, output 508.
	last := reqs[len(reqs)-1]
	assert.Equal(t, int64(12030), last.ID)
	assert.Equal(t, 12031, last.Line)
	assert.Equal(t, int64(3_536_999_000_000), last.Timestamp)
	assert.Equal(t, 20774, last.InputTokens)
	assert.Equal(t, 508, last.OutputTokens)
	assert.Equal(t, []int64{0, 182750}, last.HashIDs[:2])

	// THEN the first two rows share only source block 0 (id 0): with 16-token
	// engine blocks they share exactly 512/16 = 32 block hashes.
	h0 := BlockHashes(&reqs[0], 16, nil)
	h1 := BlockHashes(&reqs[1], 16, nil)
	assert.Len(t, h0, 6758/16) // 422: the input limits, not the ids (14·512/16 = 448)
	assert.Equal(t, 32, sharedPrefix(h0, h1))

	// Every row: ids cover the prompt (⌈in/512⌉ ids) and times never go back.
	for i, r := range reqs {
		require.Equal(t, (r.InputTokens+511)/512, len(r.HashIDs), "row %d", i)
		if i > 0 {
			require.GreaterOrEqual(t, r.Timestamp, reqs[i-1].Timestamp)
		}
	}
}

func TestMooncake_RealSyntheticTrace(t *testing.T) {
	path := realTrace(t, mooncakeSyntheticPath)
	reqs, err := openMooncakeAll(t, path)
	require.NoError(t, err)
	assert.Len(t, reqs, 3993) // wc -l
}

func TestMooncake_Parse(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    []Request
	}{
		{
			name: "integer rows, timed from the first",
			content: `{"timestamp": 7, "input_length": 600, "output_length": 3, "hash_ids": [4, 5]}` + "\n" +
				`{"timestamp": 9, "input_length": 10, "output_length": 3}` + "\n",
			// the first row is the time origin; 9 − 7 ms = 2,000,000 ns
			want: []Request{
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 600, OutputTokens: 3,
					HashIDs: []int64{4, 5}, HashBlockTokens: 512, SessionID: -1, Line: 1},
				{ID: 1, Timestamp: 2_000_000, HasTimestamp: true, InputTokens: 10, OutputTokens: 3, SessionID: -1, Line: 2}},
		},
		{
			name: "float timestamps, whole-valued float lengths",
			content: `{"timestamp": 1.5, "input_length": 12.0, "output_length": 3.0, "hash_ids": [1]}` + "\n" +
				`{"timestamp": 1.25e3, "input_length": 1, "output_length": 2e0, "hash_ids": [1]}` + "\n" +
				`{"timestamp": 1250.000001, "input_length": 1, "output_length": 1}` + "\n",
			want: []Request{
				// 1.5 ms is the time origin
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 12, OutputTokens: 3, HashIDs: []int64{1}, HashBlockTokens: 512, SessionID: -1, Line: 1},
				// 1.25e3 ms = 1250 ms; 1250 − 1.5 = 1248.5 ms = 1,248,500,000 ns
				{ID: 1, Timestamp: 1_248_500_000, HasTimestamp: true, InputTokens: 1, OutputTokens: 2, HashIDs: []int64{1}, HashBlockTokens: 512, SessionID: -1, Line: 2},
				// 1250.000001 − 1.5 ms = 1,248,500,001 ns; no hash_ids → nil, block tokens 0
				{ID: 2, Timestamp: 1_248_500_001, HasTimestamp: true, InputTokens: 1, OutputTokens: 1, SessionID: -1, Line: 3},
			},
		},
		{
			name: "blank lines, CRLF, extra keys, empty and null hash_ids, no final newline",
			content: "\r\n" +
				`{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [], "extra": "x"}` + "\r\n" +
				"   \n" +
				`{"timestamp": 0, "input_length": 6, "output_length": 2, "hash_ids": null}`,
			want: []Request{
				// line 1 is blank: the first request is on line 2 but keeps ID 0
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 5, OutputTokens: 1, SessionID: -1, Line: 2},
				{ID: 1, Timestamp: 0, HasTimestamp: true, InputTokens: 6, OutputTokens: 2, SessionID: -1, Line: 4},
			},
		},
		{
			// epoch milliseconds rebase exactly: .25 ms and .000001 ms survive
			// (float64 ns would step by 256 ns at 1.7·10¹⁸)
			name: "epoch milliseconds",
			content: `{"timestamp": 1715299200000.25, "input_length": 1, "output_length": 1}` + "\n" +
				`{"timestamp": 1715299200005.000001, "input_length": 1, "output_length": 1}` + "\n",
			want: []Request{
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 1, OutputTokens: 1, SessionID: -1, Line: 1},
				// 5.000001 − 0.25 = 4.750001 ms
				{ID: 1, Timestamp: 4_750_001, HasTimestamp: true, InputTokens: 1, OutputTokens: 1, SessionID: -1, Line: 2},
			},
		},
		{
			// AIPerf's forms: no timestamp (a load that does not send by
			// timestamp), string session ids, a later turn with only a delay
			name: "no timestamp, string session ids, delay only",
			content: `{"input_length": 4, "output_length": 1, "session_id": "conv-a"}` + "\n" +
				`{"timestamp": 3, "input_length": 5, "output_length": 1, "session_id": "conv-b"}` + "\n" +
				`{"input_length": 6, "output_length": 1, "session_id": "conv-a", "delay": 2.5}` + "\n",
			want: []Request{
				{ID: 0, InputTokens: 4, OutputTokens: 1, SessionID: 0, Line: 1},
				{ID: 1, HasTimestamp: true, InputTokens: 5, OutputTokens: 1, SessionID: 1, Line: 2},
				{ID: 2, InputTokens: 6, OutputTokens: 1, SessionID: 0, DelayNs: 2_500_000, HasDelay: true, Line: 3},
			},
		},
		{name: "empty file", content: "", want: nil},
		{name: "only blank lines", content: "\n\n  \n", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := drain(NewMooncakeSource(strings.NewReader(tc.content), "t.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestMooncake_Errors(t *testing.T) {
	const ok = `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}` + "\n"
	cases := []struct {
		name    string
		content string
		want    string // message after "path"
	}{
		{"missing output_length on line 2",
			ok + `{"timestamp": 1, "input_length": 10, "hash_ids": [1]}` + "\n",
			":2: output_length: missing"},
		{"null output_length", `{"timestamp": 0, "input_length": 10, "output_length": null}`,
			":1: output_length: missing (null)"},
		{"negative output_length", `{"timestamp": 0, "input_length": 10, "output_length": -3}`,
			":1: output_length: must be ≥ 1, got -3 (vLLM refuses max_tokens < 1: a request generates at least one token)"},
		{"zero output_length", `{"timestamp": 0, "input_length": 10, "output_length": 0}`,
			":1: output_length: must be ≥ 1, got 0 (vLLM refuses max_tokens < 1: a request generates at least one token)"},
		{"fractional output_length", `{"timestamp": 0, "input_length": 10, "output_length": 1.5}`,
			":1: output_length: not an integer: 1.5"},
		{"string output_length", `{"timestamp": 0, "input_length": 10, "output_length": "12"}`,
			`:1: output_length: must be a number, got string "12"`},
		{"boolean output_length", `{"timestamp": 0, "input_length": 10, "output_length": true}`,
			":1: output_length: must be a number, got true"},
		{"input_length 0", `{"timestamp": 0, "input_length": 0, "output_length": 1}`,
			":1: input_length: must be ≥ 1, got 0"},
		{"missing input_length", `{"timestamp": 0, "output_length": 1}`,
			":1: input_length: missing"},
		{"misspelt input_length", `{"timestamp": 0, "input_len": 100, "output_length": 1, "extra": {"a": 1}}`,
			`:1: input_length: missing; the row has "extra", "input_len", which this format does not read ` +
				"(its keys: timestamp, input_length, output_length, hash_ids, session_id, delay)"},
		// an LLMServingSim row given as a Mooncake trace: its format is named
		{"an LLMServingSim row", `{"input_toks": 2, "output_toks": 1, "arrival_time_ns": 10, "input_tok_ids": [1, 2]}`,
			`:1: input_length: missing; the row has "arrival_time_ns", "input_tok_ids", "input_toks", "output_toks", ` +
				"which this format does not read (its keys: timestamp, input_length, output_length, hash_ids, session_id, delay) " +
				"(the row is an LLMServingSim trace's: traffic.source.type llmservingsim)"},
		{"misspelt output_length", `{"timestamp": 0, "input_length": 100, "output_tokens": 1}`,
			`:1: output_length: missing; the row has "output_tokens", which this format does not read ` +
				"(its keys: timestamp, input_length, output_length, hash_ids, session_id, delay)"},
		{"input_length beyond int64", `{"timestamp": 0, "input_length": 99999999999999999999, "output_length": 1}`,
			":1: input_length: out of range: 99999999999999999999"},
		{"input_length 1e30", `{"timestamp": 0, "input_length": 1e30, "output_length": 1}`,
			":1: input_length: out of range: 1e30"},
		{"negative timestamp", `{"timestamp": -1, "input_length": 1, "output_length": 1}`,
			":1: timestamp: must be ≥ 0, got -1"},
		// 1e300 ms · 10⁶ does not fit in int64 ns
		{"timestamp out of range", `{"timestamp": 1e300, "input_length": 1, "output_length": 1}`,
			":1: timestamp: out of range: 1e300"},
		// 9223372036855 ms · 10⁶ = 9.223372036855e18 > MaxInt64 ≈ 9.223372036854775807e18
		{"timestamp too far after the origin", `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n" +
			`{"timestamp": 9223372036855, "input_length": 1, "output_length": 1}`,
			":2: timestamp: 9223372036855 ms is more than 292 years after the time origin (the first timestamp, 0 ms on line 1)"},
		{"null timestamp then backwards", `{"timestamp": 4, "input_length": 1, "output_length": 1}` + "\n" +
			`{"timestamp": null, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 3, "input_length": 1, "output_length": 1}`,
			":3: timestamp: goes backwards: 3 ms is before 4 ms on line 1"},
		{"session ids of both kinds", `{"input_length": 1, "output_length": 1, "session_id": 3}` + "\n" +
			`{"input_length": 1, "output_length": 1, "session_id": "3"}`,
			":2: session_id: a string, but line 1 gave a number: use one kind of session id in a file"},
		{"empty session id", `{"input_length": 1, "output_length": 1, "session_id": ""}`,
			":1: session_id: empty string"},
		{"boolean session id", `{"input_length": 1, "output_length": 1, "session_id": true}`,
			":1: session_id: must be a number, got true"},
		{"delay without a session", `{"input_length": 1, "output_length": 1, "delay": 5}`,
			":1: delay: a delay needs a session_id (it is the wait after the previous turn)"},
		{"timestamp goes backwards",
			`{"timestamp": 10, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 5.5, "input_length": 1, "output_length": 1}`,
			":2: timestamp: goes backwards: 5.5 ms is before 10 ms on line 1"},
		{"truncated JSON", `{"timestamp": 0,`,
			":1: invalid JSON: unexpected end of JSON input"},
		{"bad JSON after blank lines", "\n\n{bad}\n",
			":3: invalid JSON: invalid character 'b' looking for beginning of object key string"},
		{"array row", `[1, 2]`,
			":1: row is not a JSON object (the file starts with a JSON array: a trace is JSON lines, one object per line)"},
		{"array row after the first", ok + `[1, 2]`, ":2: row is not a JSON object"},
		// a JSON document of rows, on one line or pretty-printed, given as a JSON-lines trace
		{"one JSON array of rows", `[{"timestamp": 0, "input_length": 1, "output_length": 1}]`,
			":1: row is not a JSON object (the file starts with a JSON array: a trace is JSON lines, one object per line)"},
		{"a pretty-printed JSON array", "[\n  {\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n]\n",
			":1: invalid JSON: unexpected end of JSON input (the file starts with a JSON array: a trace is JSON lines, one object per line)"},
		// an Azure CSV given as a JSON-lines trace: the first row says which type reads it
		{"an Azure CSV", "\nTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,10,1\n",
			":2: invalid JSON: invalid character 'T' looking for beginning of value (the file looks like CSV: an Azure trace is traffic.source.type azure)"},
		// ... only the first row: a later bad row with a comma is just invalid JSON
		{"a later row with commas", ok + "1,2\n",
			":2: invalid JSON: invalid character ',' after top-level value"},
		// a field given twice: JSON leaves which value counts undefined (encoding/json
		// would keep the last); keys match fields ignoring case, as encoding/json does
		{"duplicate output_length", ok + `{"timestamp": 1, "input_length": 10, "output_length": 5, "output_length": 7}`,
			`:2: output_length: given twice in the row ("output_length" and "output_length"): JSON leaves which one counts undefined; keep one`},
		{"duplicate timestamp in another case", `{"Timestamp": 0, "input_length": 10, "timestamp": 3, "output_length": 5}`,
			`:1: Timestamp: given twice in the row ("Timestamp" and "timestamp"): JSON leaves which one counts undefined; keep one`},
		{"duplicate null hash_ids", `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": null, "hash_ids": [1]}`,
			`:1: hash_ids: given twice in the row ("hash_ids" and "hash_ids"): JSON leaves which one counts undefined; keep one`},
		{"hash_ids not an array", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": "x"}`,
			`:1: hash_ids: must be an array of integers, got "x"`},
		{"fractional hash id", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1.5]}`,
			":1: hash_ids: must be an array of integers"},
		// ⌈1024 / 512⌉ = 2 blocks, so a third id would name an empty block (AIPerf
		// refuses the row); 1025 tokens take 3 (the last holds one token)
		{"more ids than blocks", `{"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2, 3]}` + "\n" +
			`{"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2, 3]}`,
			":2: hash_ids: 3 ids for input_length 1024: 512-token blocks hold it in 2 (⌈1024 / 512⌉), so the last 1 would hold no token (traffic.source.isl_block_size gives the tokens per id)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "trace.jsonl", tc.content)
			_, err := openMooncakeAll(t, path)
			var de *DataError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, path+tc.want, err.Error())
		})
	}
}

// The time origin and the string session ids are the reader's own to state
// (the report's metadata): the first timestamp as written, the names by number.
func TestMooncake_TimeOriginAndSessionNames(t *testing.T) {
	src := NewMooncakeSource(strings.NewReader(
		`{"input_length": 1, "output_length": 1, "session_id": "b"}`+"\n"+
			`{"timestamp": 60000.5, "input_length": 1, "output_length": 1, "session_id": "a"}`+"\n"+
			`{"timestamp": 60001, "input_length": 1, "output_length": 1, "session_id": "b"}`), "o.jsonl")
	to := src.(TimeOriginer)
	_, _, ok := to.TimeOrigin()
	assert.False(t, ok, "nothing read yet")
	reqs, err := drain(src)
	require.NoError(t, err)
	ms, text, ok := to.TimeOrigin()
	assert.True(t, ok)
	assert.Equal(t, "60000.5", ms)
	assert.Equal(t, "60000.5", text)
	assert.Equal(t, []string{"b", "a"}, src.(SessionNamer).SessionNames())
	assert.Equal(t, []int64{0, 1, 0}, []int64{reqs[0].SessionID, reqs[1].SessionID, reqs[2].SessionID})
	assert.Equal(t, int64(500_000), reqs[2].Timestamp) // 60001 − 60000.5 ms
}

// A key the reader does not read may repeat (it is ignored either way), and
// a nested object may repeat a field's name.
func TestMooncake_RepeatedIgnoredKeys(t *testing.T) {
	reqs, err := drain(NewMooncakeSource(strings.NewReader(
		`{"note": 1, "note": 2, "timestamp": 0, "input_length": 10, "output_length": 5, "meta": {"timestamp": 9}}`), "d.jsonl"))
	require.NoError(t, err)
	require.Len(t, reqs, 1)
	assert.Equal(t, 5, reqs[0].OutputTokens)
}

func TestMooncake_ErrorIsSticky(t *testing.T) {
	src := NewMooncakeSource(strings.NewReader(
		`{"timestamp": 0, "input_length": 1}`+"\n"+`{"timestamp": 0, "input_length": 1, "output_length": 1}`), "s.jsonl")
	var r Request
	err1 := src.Next(&r)
	require.EqualError(t, err1, "s.jsonl:1: output_length: missing")
	assert.Equal(t, Request{}, r, "r is unchanged on error")
	assert.Same(t, err1, src.Next(&r), "the error repeats; the valid line 2 is not read")
}

func TestMooncake_EOFRepeats(t *testing.T) {
	src := NewMooncakeSource(strings.NewReader(`{"timestamp": 0, "input_length": 1, "output_length": 1}`), "e.jsonl")
	var r Request
	require.NoError(t, src.Next(&r))
	assert.ErrorIs(t, src.Next(&r), io.EOF)
	assert.ErrorIs(t, src.Next(&r), io.EOF)
}

func TestMooncake_HashIDsNotShared(t *testing.T) {
	// GIVEN a caller that reuses one Request for every Next
	src := NewMooncakeSource(strings.NewReader(
		`{"timestamp": 0, "input_length": 1000, "output_length": 1, "hash_ids": [1, 2]}`+"\n"+
			`{"timestamp": 0, "input_length": 1000, "output_length": 1, "hash_ids": [3, 4]}`), "h.jsonl")
	var r Request
	require.NoError(t, src.Next(&r))
	kept := r.HashIDs
	require.NoError(t, src.Next(&r))
	// THEN the first request's ids are not overwritten by the second's
	assert.Equal(t, []int64{1, 2}, kept)
	assert.Equal(t, []int64{3, 4}, r.HashIDs)
}

func TestMooncake_LongLines(t *testing.T) {
	// A 200,000-id line (≈1.3 MB) spans many 64 KiB reads and is still parsed.
	var b strings.Builder
	b.WriteString(`{"timestamp": 0, "input_length": 102400000, "output_length": 1, "hash_ids": [0`) // 200,000 × 512
	for i := 1; i < 200_000; i++ {
		fmt.Fprintf(&b, ", %d", i)
	}
	b.WriteString("]}\n")
	b.WriteString(`{"timestamp": 0, "input_length": 2, "output_length": 1}`)
	got, err := drain(NewMooncakeSource(strings.NewReader(b.String()), "l.jsonl"))
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Len(t, got[0].HashIDs, 200_000)
	assert.Equal(t, int64(199_999), got[0].HashIDs[199_999])
	assert.Equal(t, 2, got[1].Line)

	// A line over the 16 MiB bound is a DataError, not unbounded memory.
	huge := strings.Repeat(" ", maxLineBytes+1)
	_, err = drain(NewMooncakeSource(strings.NewReader("\n"+huge), "big.jsonl"))
	assert.EqualError(t, err, "big.jsonl:2: line longer than 16777216 bytes (16 MiB)")
}

// A Mooncake file written with a UTF-8 byte-order mark (as some editors and
// Windows tools save JSONL) reads like the same file without it, as Azure does.
func TestMooncake_ByteOrderMark(t *testing.T) {
	rows := `{"timestamp": 0, "input_length": 10, "output_length": 2}` + "\n" +
		`{"timestamp": 5, "input_length": 20, "output_length": 3}` + "\n"
	plain, err := drain(NewMooncakeSource(strings.NewReader(rows), "t.jsonl"))
	require.NoError(t, err)
	withBOM, err := drain(NewMooncakeSource(strings.NewReader("\ufeff"+rows), "t.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, plain, withBOM)
	// 5 ms = 5,000,000 ns on line 2
	assert.Equal(t, Request{ID: 1, Timestamp: 5_000_000, HasTimestamp: true, InputTokens: 20, OutputTokens: 3, SessionID: -1, Line: 2}, withBOM[1])

	// Only at the start of the file: a BOM before a later row is invalid JSON.
	_, err = drain(NewMooncakeSource(strings.NewReader(rows+"\ufeff"+rows), "t.jsonl"))
	assert.ErrorContains(t, err, "t.jsonl:3: invalid JSON")
}

func TestOpenMooncake_MissingFile(t *testing.T) {
	_, _, err := OpenMooncake("/nonexistent/trace.jsonl")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// rowReader generates n Mooncake rows on the fly, so the test input itself is
// never held in memory.
type rowReader struct {
	i, n int
	buf  []byte
}

func (g *rowReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.buf = fmt.Appendf(g.buf[:0], `{"timestamp": %d, "input_length": 600, "output_length": 10, "hash_ids": [%d, %d]}`+"\n", g.i, g.i, g.i+1)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// W1: a 1M-request trace streams — the live heap after half of it has been
// read is a small constant, far below the ≈ 85 MB of text read so far.
func TestMooncake_StreamsMillionRows(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1M generated rows")
	}
	const n = 1_000_000
	src := NewMooncakeSource(&rowReader{n: n}, "gen.jsonl")
	runtime.GC()
	var before, mid runtime.MemStats
	runtime.ReadMemStats(&before)
	var r Request
	count := 0
	for {
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		count++
		if count == n/2 {
			runtime.GC()
			runtime.ReadMemStats(&mid)
		}
	}
	assert.Equal(t, n, count)
	assert.Equal(t, int64(n-1), r.ID)
	assert.Equal(t, int64(n-1)*1_000_000, r.Timestamp) // (n−1) ms
	grew := int64(mid.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grew, int64(4<<20), "live heap grew by %d bytes while streaming", grew)
}

func BenchmarkMooncakeRead(b *testing.B) {
	path := realTrace(b, mooncakeConversationPath)
	st, err := os.Stat(path)
	require.NoError(b, err)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var r Request
	for b.Loop() {
		src, c, err := OpenMooncake(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			err := src.Next(&r)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		c.Close()
		if n != 12031 {
			b.Fatalf("read %d rows, want 12031", n)
		}
	}
}

// A delay on a session's first turn is refused naming file:line (AIPerf sends
// a conversation's first turn at once: it never waits a delay before it); a
// delay of 0 there, and a delay on a later turn, are accepted.
func TestMooncake_DelayOnAFirstTurn(t *testing.T) {
	path := writeTemp(t, "trace.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "session_id": "a", "delay": 0}`+"\n"+
		`{"input_length": 1, "output_length": 1, "session_id": "a", "delay": 5}`+"\n"+
		`{"timestamp": 1, "input_length": 1, "output_length": 1, "session_id": "b", "delay": 2.5}`+"\n")
	src, closer, err := OpenMooncake(path)
	require.NoError(t, err)
	defer closer.Close()
	var r Request
	require.NoError(t, src.Next(&r))
	require.NoError(t, src.Next(&r))
	assert.Equal(t, int64(5_000_000), r.DelayNs)
	err = src.Next(&r)
	var de *DataError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, path+`:3: delay: on the first turn of session "b": AIPerf sends a conversation's first turn at once and waits the delay only before a later turn; give the first turn a timestamp (its send time) instead`, err.Error())
}

// A trace whose hash ids cover 16 tokens each (traffic.source.isl_block_size:
// 16, as Alibaba's Bailian traces and compare's own trace): the reader keeps
// the ids and says how many tokens each covers, and the engine's blocks share
// exactly the 16-token blocks the ids say are equal.
func TestMooncake_ISLBlockSize(t *testing.T) {
	// GIVEN a two-turn conversation in 16-token blocks: turn 1 is 40 tokens
	// (⌈40/16⌉ = 3 ids), turn 2 100 tokens (⌈100/16⌉ = 7 ids) whose first 3
	// ids are turn 1's
	rows := `{"timestamp": 0, "input_length": 40, "output_length": 8, "hash_ids": [1, 2, 3]}
{"timestamp": 5, "input_length": 100, "output_length": 8, "hash_ids": [1, 2, 3, 4, 5, 6, 7]}
`
	reqs, err := drain(NewMooncakeSourceBlocks(strings.NewReader(rows), "b.jsonl", 16))
	require.NoError(t, err)
	require.Len(t, reqs, 2)
	t1, t2 := &reqs[0], &reqs[1]
	assert.Equal(t, 16, t1.HashBlockTokens)
	assert.Equal(t, 16, t2.HashBlockTokens)
	assert.Equal(t, []int64{1, 2, 3}, t1.HashIDs)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, t2.HashIDs)

	// THEN at engine block size 16 turn 1 has ⌊40/16⌋ = 2 full blocks and
	// turn 2 ⌊100/16⌋ = 6; both of turn 1's are turn 2's first two
	h1, h2 := BlockHashes(t1, 16, nil), BlockHashes(t2, 16, nil)
	require.Len(t, h1, 2)
	require.Len(t, h2, 6)
	assert.Equal(t, h1, h2[:2])
	// turn 2's block 2 is [32, 48), id 3 in both turns: a request of 48
	// tokens with turn 1's ids has it whole, and shares it
	whole := &Request{InputTokens: 48, HashIDs: []int64{1, 2, 3}, HashBlockTokens: 16, SessionID: -1}
	assert.Equal(t, h2[:3], BlockHashes(whole, 16, nil))
	// one source block per engine block: 6 groups of one block, no two alike
	g2 := groupsOf(t2, 16)
	assert.Equal(t, groupsOf(t1, 16), g2[:2])
	assert.Len(t, distinct(g2), 6)

	// engine block size 8: ⌊100/8⌋ = 12 blocks, two in each 16-token id: 6 groups of 2
	g8 := groupsOf(t2, 8)
	require.Len(t, g8, 12)
	assert.Len(t, distinct(g8), 6)
	for j := 0; j < 12; j += 2 {
		assert.Equal(t, g8[j], g8[j+1], "blocks %d and %d lie in id %d", j, j+1, j/2)
	}
	// engine block size 32: ⌊100/32⌋ = 3 blocks, each over two ids (a group of
	// its own); turn 1 has ⌊40/32⌋ = 1, turn 2's first
	h32 := BlockHashes(t2, 32, nil)
	require.Len(t, h32, 3)
	assert.Len(t, distinct(groupsOf(t2, 32)), 3)
	assert.Equal(t, h32[:1], BlockHashes(t1, 32, nil))
}

// The block size bounds the ids a row may have (⌈input_length / size⌉, as
// AIPerf's prompt generator) and is at least one token.
func TestMooncake_ISLBlockSizeErrors(t *testing.T) {
	row := `{"timestamp": 0, "input_length": 40, "output_length": 1, "hash_ids": [1, 2, 3]}` + "\n"
	_, err := drain(NewMooncakeSource(strings.NewReader(row), "b.jsonl"))
	var de *DataError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "hash_ids", de.Field)
	assert.Contains(t, de.Error(), "3 ids for input_length 40: 512-token blocks hold it in 1 (⌈40 / 512⌉), so the last 2 would hold no token")

	four := `{"timestamp": 0, "input_length": 40, "output_length": 1, "hash_ids": [1, 2, 3, 4]}` + "\n"
	_, err = drain(NewMooncakeSourceBlocks(strings.NewReader(four), "b.jsonl", 16))
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "4 ids for input_length 40: 16-token blocks hold it in 3 (⌈40 / 16⌉), so the last 1 would hold no token")

	src := NewMooncakeSourceBlocks(strings.NewReader(row), "b.jsonl", 0)
	var r Request
	err = src.Next(&r)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "isl_block_size), got 0")
	assert.Equal(t, err, src.Next(&r), "the error repeats")
	_, _, err = OpenMooncakeBlocks("/nonexistent/trace.jsonl", -1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "got -1", "the size is checked before the file is opened")
}

// distinct is the set of values of v.
func distinct(v []uint64) map[uint64]struct{} {
	out := map[uint64]struct{}{}
	for _, x := range v {
		out[x] = struct{}{}
	}
	return out
}

package workload

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openAzureAll(t *testing.T, path string) ([]Request, error) {
	t.Helper()
	src, c, err := OpenAzure(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return drain(src)
}

func TestAzure_RealCodeTrace(t *testing.T) {
	path := realTrace(t, azureCodePath)
	reqs, err := openAzureAll(t, path)
	require.NoError(t, err)
	// 8,820 lines (header + 8,819 rows; the last has no newline), CRLF endings.
	require.Len(t, reqs, 8819)

	// Line 2: 2023-11-16 18:17:03.9799600,4808,10 — the origin.
	assert.Equal(t, Request{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 4808, OutputTokens: 10, SessionID: -1, Line: 2}, reqs[0])
	// Line 3: 2023-11-16 18:17:04.0319600,3180,8
	// 04.0319600 − 03.9799600 = 0.0520000 s = 52,000,000 ns.
	assert.Equal(t, Request{ID: 1, Timestamp: 52_000_000, HasTimestamp: true, InputTokens: 3180, OutputTokens: 8, SessionID: -1, Line: 3}, reqs[1])
	// Line 4: 2023-11-16 18:17:04.0781490 → 0.0981890 s = 98,189,000 ns.
	assert.Equal(t, int64(98_189_000), reqs[2].Timestamp)
	// Last line 8820: 2023-11-16 19:14:19.9280160,549,173
	// 18:17:03.9799600 → 19:14:03.9799600 is 57 min = 3420 s, plus 15.9480560 s
	// = 3435.9480560 s = 3,435,948,056,000 ns.
	last := reqs[len(reqs)-1]
	assert.Equal(t, Request{ID: 8818, Timestamp: 3_435_948_056_000, HasTimestamp: true, InputTokens: 549, OutputTokens: 173, SessionID: -1, Line: 8820}, last)
}

func TestAzure_RealConvTrace(t *testing.T) {
	path := realTrace(t, azureConvPath)
	reqs, err := openAzureAll(t, path)
	require.NoError(t, err)
	require.Len(t, reqs, 19366)
	// 18:15:50.9951690 − 18:15:46.6805900 = 4.3145790 s
	assert.Equal(t, int64(4_314_579_000), reqs[1].Timestamp)
	assert.Equal(t, 396, reqs[1].InputTokens)
	assert.Equal(t, 109, reqs[1].OutputTokens)
}

func TestAzure_Parse(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    []Request
	}{
		{
			name: "columns found by name in any order, extra column, whole-second time",
			content: "GeneratedTokens,Extra,TIMESTAMP,ContextTokens\n" +
				"7,x,2023-11-16 18:17:03,100\n" +
				"1,y,2023-11-16 18:17:04.5,1\n",
			want: []Request{
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 100, OutputTokens: 7, SessionID: -1, Line: 2},
				// 04.5 − 03 = 1.5 s = 1,500,000,000 ns
				{ID: 1, Timestamp: 1_500_000_000, HasTimestamp: true, InputTokens: 1, OutputTokens: 1, SessionID: -1, Line: 3},
			},
		},
		{
			name: "BOM, CRLF, case-insensitive header, blank line, midnight, 9 digits, T separator",
			content: "\ufefftimestamp, contexttokens ,GENERATEDTOKENS\r\n" +
				"2023-11-16 23:59:59.9999999,5,1\r\n" +
				"\r\n" +
				"2023-11-17T00:00:00.000000123,6,2\r\n",
			want: []Request{
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 5, OutputTokens: 1, SessionID: -1, Line: 2},
				// 23:59:59.9999999 → 00:00:00.000000123 = 100 ns + 123 ns = 223 ns;
				// the blank line 3 is skipped but counted
				{ID: 1, Timestamp: 223, HasTimestamp: true, InputTokens: 6, OutputTokens: 2, SessionID: -1, Line: 4},
			},
		},
		{
			// The 2024 release writes a UTC offset and drops the fraction at a
			// whole second: 00:00:00.041683 − 00:00:00 = 41.683 ms
			name: "2024 form: UTC offset, fraction optional",
			content: "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
				"2024-05-12 00:00:00+00:00,374,44\n" +
				"2024-05-12 00:00:00.041683+00:00,396,109\n",
			want: []Request{
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 374, OutputTokens: 44, SessionID: -1, Line: 2},
				{ID: 1, Timestamp: 41_683_000, HasTimestamp: true, InputTokens: 396, OutputTokens: 109, SessionID: -1, Line: 3},
			},
		},
		{
			// An offset is applied: 01:00:01.5+01:00 is 00:00:01.5 UTC, 1.5 s
			// after the first row (UTC, no offset: the 2023 form)
			name: "offsets converted to UTC, mixed with the 2023 form",
			content: "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
				"2024-05-12 00:00:00.0000000,1,1\n" +
				"2024-05-12T01:00:01.5+01:00,2,2\n",
			want: []Request{
				{ID: 0, Timestamp: 0, HasTimestamp: true, InputTokens: 1, OutputTokens: 1, SessionID: -1, Line: 2},
				{ID: 1, Timestamp: 1_500_000_000, HasTimestamp: true, InputTokens: 2, OutputTokens: 2, SessionID: -1, Line: 3},
			},
		},
		{
			name:    "header only",
			content: "TIMESTAMP,ContextTokens,GeneratedTokens\n",
			want:    nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewAzureSource(strings.NewReader(tc.content), "t.csv")
			require.NoError(t, err)
			got, err := drain(src)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// The time origin is the first row's time: ms since the Unix epoch (UTC) and
// as written. 2024-05-12 00:00:00.041683 UTC = 1715472000 s + 41.683 ms.
func TestAzure_TimeOrigin(t *testing.T) {
	src, err := NewAzureSource(strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2024-05-12 00:00:00.041683+00:00,1,1\n"), "o.csv")
	require.NoError(t, err)
	_, err = drain(src)
	require.NoError(t, err)
	ms, text, ok := src.(TimeOriginer).TimeOrigin()
	assert.True(t, ok)
	assert.Equal(t, "1715472000041.683", ms)
	assert.Equal(t, "2024-05-12 00:00:00.041683+00:00", text)
}

func TestAzure_Errors(t *testing.T) {
	const header = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const row = "2023-11-16 18:17:03.9799600,4808,10\n"
	cases := []struct {
		name    string
		content string
		want    string // message after the path
	}{
		{"empty file", "", ": empty file: no header row"},
		{"missing column", "TIMESTAMP,ContextTokens\n" + row,
			":1: GeneratedTokens: column missing from the header"},
		{"duplicate column", "TIMESTAMP,ContextTokens,GeneratedTokens,contexttokens\n",
			":1: ContextTokens: column appears twice in the header"},
		{"empty output", header + "2023-11-16 18:17:03.9799600,4808,\n",
			":2: GeneratedTokens: missing (empty value)"},
		{"short row", header + row + "2023-11-16 18:17:04.0319600,3180\n",
			":3: GeneratedTokens: missing (row has 2 fields)"},
		{"context tokens 0", header + row + "2023-11-16 18:17:04.0319600,0,8\n",
			":3: ContextTokens: must be ≥ 1, got 0"},
		{"negative output", header + "2023-11-16 18:17:03.9799600,4808,-1\n",
			":2: GeneratedTokens: must be ≥ 1, got -1 (vLLM refuses max_tokens < 1: a request generates at least one token)"},
		{"extra field", header + "2023-11-16 18:15:47.68,374,44,1,2,3\n",
			":2: row has 6 fields, but the header (line 1) has 3"},
		{"short of an unused column", "TIMESTAMP,ContextTokens,GeneratedTokens,Extra\n" + "2023-11-16 18:15:47.68,374,44\n",
			":2: row has 3 fields, but the header (line 1) has 4"},
		{"zero output", header + "2023-11-16 18:17:03.9799600,4808,0\n",
			":2: GeneratedTokens: must be ≥ 1, got 0 (vLLM refuses max_tokens < 1: a request generates at least one token)"},
		{"non-numeric output", header + "2023-11-16 18:17:03.9799600,4808,abc\n",
			":2: GeneratedTokens: not a number: abc"},
		{"fractional output", header + "2023-11-16 18:17:03.9799600,4808,2.5\n",
			":2: GeneratedTokens: not an integer: 2.5"},
		{"bad timestamp", header + "2023/11/16 18:17:03,4808,10\n",
			":2: TIMESTAMP: cannot parse 2023/11/16 18:17:03: want YYYY-MM-DD hh:mm:ss[.fraction][+hh:mm]"},
		{"timestamp goes backwards", header + row + "2023-11-16 18:17:03.0000000,1,1\n",
			":3: TIMESTAMP: goes backwards: 2023-11-16 18:17:03.0000000 is before the row on line 2"},
		{"malformed CSV", header + row + "2023-11-16 18:17:04,1\"2,3\n",
			":3: malformed CSV: bare \" in non-quoted-field"},
		// a JSON-lines trace given as an Azure CSV: the hint names the types that read it
		{"a Mooncake trace", `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n",
			":1: malformed CSV: bare \" in non-quoted-field (the file looks like JSON lines: a Mooncake or LLMServingSim trace is traffic.source.type mooncake or llmservingsim)"},
		{"a JSON array", "\ufeff [1, 2]\n",
			":1: TIMESTAMP: column missing from the header (the file looks like JSON lines: a Mooncake or LLMServingSim trace is traffic.source.type mooncake or llmservingsim)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "trace.csv", tc.content)
			_, err := openAzureAll(t, path)
			var de *DataError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, path+tc.want, err.Error())
		})
	}
}

func TestOpenAzure_MissingFile(t *testing.T) {
	_, _, err := OpenAzure("/nonexistent/trace.csv")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Every reader bounds a line at MaxLineBytes, as Mooncake does: an Azure file
// with one enormous line, header or never-closed quote is a DataError naming
// the line the record starts on, read in bounded memory.
func TestAzure_LongRecords(t *testing.T) {
	const header = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const row = "2023-11-16 18:17:03,10,1\n"
	huge := strings.Repeat("x", MaxLineBytes) // with the row's own bytes: over the bound
	cases := []struct {
		name, content, want string
	}{
		{"a data row without line breaks", header + row + "2023-11-16 18:17:04,1,1," + huge + "\n",
			"t.csv:3: line longer than 16777216 bytes (16 MiB)"},
		{"the header", "TIMESTAMP,ContextTokens,GeneratedTokens," + huge, "t.csv:1: line longer than 16777216 bytes (16 MiB)"},
		// short physical lines, but the quote opened on line 2 never closes:
		// one record of 17 MiB
		{"an unterminated quote", header + "\"" + strings.Repeat("y\n", MaxLineBytes/2+1),
			"t.csv:2: line longer than 16777216 bytes (16 MiB)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewAzureSource(strings.NewReader(tc.content), "t.csv")
			if err == nil {
				_, err = drain(src)
			}
			var de *DataError
			require.ErrorAs(t, err, &de)
			assert.EqualError(t, err, tc.want)
		})
	}

	// A quoted field that spans lines and closes is one record, under the
	// bound: row 2's ContextTokens "3\n" (trimmed: 3) continues on line 4.
	src, err := NewAzureSource(strings.NewReader(header+"2023-11-16 18:17:03,\"12\",1\n\"2023-11-16 18:17:04\",\"3\n\",2\n"), "q.csv")
	require.NoError(t, err)
	got, err := drain(src)
	require.NoError(t, err)
	// 04 − 03 = 1 s = 1e9 ns
	assert.Equal(t, []Request{{ID: 0, HasTimestamp: true, InputTokens: 12, OutputTokens: 1, SessionID: -1, Line: 2},
		{ID: 1, Timestamp: 1_000_000_000, HasTimestamp: true, InputTokens: 3, OutputTokens: 2, SessionID: -1, Line: 3}}, got)
}

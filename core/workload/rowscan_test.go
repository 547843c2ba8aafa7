package workload

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// scanAgrees checks scanRow against encoding/json on one line: when scanRow
// settles a line, json.Unmarshal into mooncakeRow succeeds with the same raw
// values. It returns what scanRow reported.
func scanAgrees(t *testing.T, line string) bool {
	t.Helper()
	var v [6]rawRef
	if !scanRow([]byte(line), mooncakeKeys, v[:]) {
		return false
	}
	var row mooncakeRow
	require.NoError(t, json.Unmarshal([]byte(line), &row), "scanRow accepted %q", line)
	require.Equal(t, mooncakeRow{v[0], v[1], v[2], v[3], v[4], v[5]}, row, "line %q", line)
	return true
}

func TestScanRow_SettlesPlainRows(t *testing.T) {
	var v [6]rawRef
	line := ` { "timestamp" : 27482.5 ,"input_length":6955,"output_length": 52,` +
		`"hash_ids":[ 46, 47 ,-1e3 ],"other":{"a":[true,false,null,{}],"b":"x\"\\\/\b\f\n\r\t\u00e9é"},` +
		`"session_id":"s1","delay":null,"x":[]} `
	require.True(t, scanRow([]byte(line), mooncakeKeys, v[:]))
	want := []string{"27482.5", "6955", "52", "[ 46, 47 ,-1e3 ]", `"s1"`, "null"}
	for i, w := range want {
		require.Equal(t, w, string(v[i]), "key %s", mooncakeKeys[i])
	}
	require.True(t, scanAgrees(t, line))
	for _, line := range []string{
		`{}`,
		`{"input_length":1}`,
		`{"hash_ids":[[[[1]]]],"input_length":0.5E-7}`,
		`{"timestamp":-0,"timestamp2":1}`,
		"{\t\"delay\"\r\n:\n-0.0e+0}",
	} {
		require.True(t, scanAgrees(t, line), "line %q", line)
	}
}

// Lines scanRow leaves to encoding/json: every invalid one (its error text is
// the contract) and the valid ones whose keys need encoding/json's matching.
func TestScanRow_LeavesTheRestToEncodingJSON(t *testing.T) {
	for _, line := range []string{
		// invalid JSON
		``, `{`, `}`, `{"input_length":}`, `{"input_length":1,}`, `{"input_length" 1}`,
		`{"input_length":01}`, `{"input_length":1.}`, `{"input_length":.5}`, `{"input_length":1e}`,
		`{"input_length":+1}`, `{"input_length":-}`, `{"input_length":1}x`, `{"input_length":1}{}`,
		`{"input_length":tru}`, `{"input_length":nul}`, `{"input_length":True}`, `{"input_length":NaN}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, "{\"a\":\"tab\there\"}", `{"a":"open}`,
		`{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":{"b":1,}}`, `{"a":{1:2}}`, `{'a':1}`,
		`{"a":1 "b":2}`, "{\"a\":1}\x00", "\v{}",
		// valid, but not an object
		`[]`, `1`, `"x"`, `null`,
		// valid, keys encoding/json matches by its own rules
		`{"Timestamp":1}`, `{"INPUT_LENGTH":1}`, `{"input_length":1,"input_length":2}`,
		`{"hash_ids":null,"hash_ids":[1]}`, `{"time\u0073tamp":1}`, `{"timeſtamp":1}`,
		`{"a":` + deep(70) + `}`,
	} {
		require.False(t, scanAgrees(t, line), "line %q", line)
	}
}

func deep(n int) string {
	s := "1"
	for range n {
		s = "[" + s + "]"
	}
	return s
}

// FuzzScanRow: whatever scanRow settles, encoding/json decodes to the same
// raw values.
func FuzzScanRow(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":0,"input_length":6955,"output_length":52,"hash_ids":[46,47,48]}`,
		`{"session_id":"a\u00e9","delay":1.5e2,"x":{"y":[null,true]}}`,
		`{"input_length":1,"Input_length":2}`, `{"a":"\"}`, `[1]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { scanAgrees(t, line) })
}

// parseHashIDs at the int64 bounds: 18 digits are read without overflow
// checks, longer literals with them.
func TestParseHashIDs_Bounds(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []int64
		msg  string
	}{
		{`[999999999999999999, -999999999999999999, 0]`, []int64{999999999999999999, -999999999999999999, 0}, ""},
		{`[9223372036854775807,-9223372036854775808]`, []int64{math.MaxInt64, math.MinInt64}, ""},
		{`[ 7 , 1000000000000000000 ]`, []int64{7, 1e18}, ""},
		{`[9223372036854775808]`, nil, "must be an array of integers (id out of range)"},
		{`[-9223372036854775809]`, nil, "must be an array of integers (id out of range)"},
		{`[18446744073709551616]`, nil, "must be an array of integers (id out of range)"},
		{`[99999999999999999999999]`, nil, "must be an array of integers (id out of range)"},
		{`[1, -]`, nil, "must be an array of integers"},
		{`[1e3]`, nil, "must be an array of integers"},
		{`[]`, nil, ""},
	} {
		got, msg := parseHashIDs(rawRef(c.raw))
		require.Equal(t, c.msg, msg, c.raw)
		require.Equal(t, c.want, got, c.raw)
	}
}

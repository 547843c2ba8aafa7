package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// oracleRaw is a raw value as encoding/json hands it to a field, a field
// given twice being errTwice: the oracle readRow is checked against.
type oracleRaw []byte

var errTwice = errors.New("given twice")

func (r *oracleRaw) UnmarshalJSON(b []byte) error {
	if *r != nil {
		return errTwice
	}
	*r = append(oracleRaw{}, b...)
	return nil
}

type oracleMooncakeRow struct {
	Timestamp    oracleRaw `json:"timestamp"`
	InputLength  oracleRaw `json:"input_length"`
	OutputLength oracleRaw `json:"output_length"`
	HashIDs      oracleRaw `json:"hash_ids"`
	SessionID    oracleRaw `json:"session_id"`
	Delay        oracleRaw `json:"delay"`
}

// oracleTwice finds the two keys of a row that name one field (encoding/json
// matches a key to a field's tag ignoring case), decoding it key by key.
func oracleTwice(t *testing.T, line string) (first, second string) {
	dec := json.NewDecoder(strings.NewReader(line))
	seen := map[string]string{} // field tag → the key that named it first
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		key := tok.(string)
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
		for _, tag := range mooncakeFormat.keys {
			if !strings.EqualFold(key, tag) {
				continue
			}
			if prev, ok := seen[tag]; ok {
				return prev, key
			}
			seen[tag] = key
		}
	}
	t.Fatalf("no key given twice in %q", line)
	return "", ""
}

// scanAgrees checks readRow against encoding/json on one line: the same raw
// values, or the error encoding/json's decode into the row's struct words
// (invalid JSON, not an object, a field given twice with its two keys). It
// returns whether the fast walk settled the line (and checks that the walk
// knowing the line valid settles every line encoding/json takes alike).
func scanAgrees(t *testing.T, line string) bool {
	t.Helper()
	l := jsonlLines{name: "f.jsonl", line: 3}
	var got jsonRow
	derr := l.readRow([]byte(line), &mooncakeFormat, &got)
	var want oracleMooncakeRow
	err := json.Unmarshal([]byte(line), &want)
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errTwice):
		first, second := oracleTwice(t, line)
		require.Equal(t, &DataError{File: "f.jsonl", Line: 3, Field: first, Msg: fmt.Sprintf(
			"given twice in the row (%q and %q): JSON leaves which one counts undefined; keep one", first, second)}, derr, "line %q", line)
	case errors.As(err, &te):
		require.Equal(t, &DataError{File: "f.jsonl", Line: 3, Msg: "row is not a JSON object"}, derr, "line %q", line)
	case err != nil:
		require.Equal(t, &DataError{File: "f.jsonl", Line: 3, Msg: "invalid JSON: " + err.Error()}, derr, "line %q", line)
	default:
		require.Nil(t, derr, "line %q", line)
		v := got.vals
		require.Equal(t, want, oracleMooncakeRow{oracleRaw(v[0]), oracleRaw(v[1]), oracleRaw(v[2]), oracleRaw(v[3]),
			oracleRaw(v[4]), oracleRaw(v[5])}, "line %q", line)
		for _, r := range v[6:] {
			require.Nil(t, r)
		}
		// the ids: those encoding/json decodes into []int64 (which refuses
		// fractions, exponents, other values and ids out of int64's range)
		var ids []int64
		if json.Unmarshal(want.HashIDs, &ids) != nil && present(rawRef(want.HashIDs)) {
			require.True(t, strings.HasPrefix(got.idsMsg, "must be an array of integers"), "line %q: %q", line, got.idsMsg)
			require.Nil(t, got.ids)
		} else {
			require.Empty(t, got.idsMsg, "line %q", line)
			if len(ids) == 0 {
				ids = nil
			}
			require.Equal(t, ids, got.ids, "line %q", line)
		}
		var again jsonRow
		valid := rowScanner{b: []byte(line), valid: true}
		dup, ok := valid.scanRow(&mooncakeFormat, &again)
		require.True(t, ok && dup == nil, "line %q", line)
		require.Equal(t, got.vals, again.vals, "line %q", line)
	}
	var fast jsonRow
	s := rowScanner{b: []byte(line)}
	_, ok := s.scanRow(&mooncakeFormat, &fast)
	if ok {
		require.NoError(t, err, "the fast walk settled %q", line)
		require.Equal(t, got.vals, fast.vals, "line %q", line)
	}
	return ok
}

func TestScanRow_SettlesPlainRows(t *testing.T) {
	var row jsonRow
	line := ` { "timestamp" : 27482.5 ,"input_length":6955,"output_length": 52,` +
		`"hash_ids":[ 46, 47 ,-1e3 ],"other":{"a":[true,false,null,{}],"b":"x\"\\\/\b\f\n\r\t\u00e9é"},` +
		`"session_id":"s1","delay":null,"x":[]} `
	s := rowScanner{b: []byte(line)}
	_, ok := s.scanRow(&mooncakeFormat, &row)
	require.True(t, ok)
	want := []string{"27482.5", "6955", "52", "[ 46, 47 ,-1e3 ]", `"s1"`, "null"}
	for i, w := range want {
		require.Equal(t, w, string(row.vals[i]), "key %s", mooncakeFormat.keys[i])
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

// Lines the fast walk leaves to encoding/json and the walk knowing them
// valid: every invalid one (encoding/json's error text is the contract) and
// the valid ones whose keys need encoding/json's matching.
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

// FuzzScanRow: readRow gives what encoding/json decodes (the same raw
// values, or the same error), by the fast walk or the second.
func FuzzScanRow(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":0,"input_length":6955,"output_length":52,"hash_ids":[46,47,48]}`,
		`{"session_id":"a\u00e9","delay":1.5e2,"x":{"y":[null,true]}}`,
		`{"input_length":1,"Input_length":2}`, `{"a":"\"}`, `[1]`,
		`{"time\u0073tamp":1,"x":[[]],"TimeStamp":null}`, `{"deLay":1,"delay":2}`, `null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { scanAgrees(t, line) })
}

// The ids at the int64 bounds: 18 digits are read without overflow checks,
// longer literals with them.
func TestReadRow_IDsBounds(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []int64
		msg  string
	}{
		{`[999999999999999999, -999999999999999999, 0]`, []int64{999999999999999999, -999999999999999999, 0}, ""},
		{`[9223372036854775807,-9223372036854775808]`, []int64{math.MaxInt64, math.MinInt64}, ""},
		{`[ 7 , 1000000000000000000 ]`, []int64{7, 1e18}, ""},
		{`[-0, 0]`, []int64{0, 0}, ""},
		{`[9223372036854775808]`, nil, "must be an array of integers (id out of range)"},
		{`[-9223372036854775809]`, nil, "must be an array of integers (id out of range)"},
		{`[18446744073709551616]`, nil, "must be an array of integers (id out of range)"},
		{`[99999999999999999999999]`, nil, "must be an array of integers (id out of range)"},
		{`[99999999999999999999999.5]`, nil, "must be an array of integers (id out of range)"},
		{`[1.5, 99999999999999999999999]`, nil, "must be an array of integers"},
		{`[1, "2"]`, nil, "must be an array of integers"},
		{`[1, [2]]`, nil, "must be an array of integers"},
		{`[1e3]`, nil, "must be an array of integers"},
		{`"[1]"`, nil, `must be an array of integers, got "[1]"`},
		{`{}`, nil, `must be an array of integers, got {}`},
		{`[]`, nil, ""},
		{`[ ]`, nil, ""},
		{`null`, nil, ""},
	} {
		for _, valid := range []bool{false, true} { // the fast walk, and the walk of a line known valid
			line := `{"hash_ids": ` + c.raw + `}`
			if valid {
				line = `{"Hash_ids": ` + c.raw + `}`
			}
			var row jsonRow
			l := jsonlLines{}
			require.Nil(t, l.readRow([]byte(line), &mooncakeFormat, &row), line)
			require.Equal(t, c.msg, row.idsMsg, line)
			require.Equal(t, c.want, row.ids, line)
		}
	}
}

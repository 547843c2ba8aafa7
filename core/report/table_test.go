package report

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Python's repr of each value, as CPython 3.11 prints it (json.dumps of
// [repr(v) for v in values]).
func TestAppendPyFloatMatchesPythonRepr(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0.0", 1: "1.0", 0.1: "0.1", 1e-05: "1e-05", 0.0001: "0.0001", 1e16: "1e+16", 1e17: "1e+17",
		123456789.125: "123456789.125", 2.5e-07: "2.5e-07", 1.7976931348623157e308: "1.7976931348623157e+308",
		5e-324: "5e-324", 12345678901234567.0: "1.2345678901234568e+16", 9999999999999998.0: "9999999999999998.0",
		1.0 / 3: "0.3333333333333333", 100: "100.0", 1234.5678: "1234.5678", -3.25e-10: "-3.25e-10",
	} {
		assert.Equal(t, want, string(AppendPyFloat(nil, v)), "%v", v)
	}
	assert.Equal(t, "-0.0", string(AppendPyFloat(nil, math.Copysign(0, -1))))
}

// Every float formats to text that parses back to the same float, in the
// notation Python's rule picks for its decimal exponent.
func TestAppendPyFloatRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		v := math.Float64frombits(rng.Uint64())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		s := string(AppendPyFloat(nil, v))
		back, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		require.Equal(t, v, back, s)
		exp := math.Floor(math.Log10(math.Abs(v))) + 1 // decpt, up to rounding at powers of ten
		if v != 0 && (exp < -5 || exp > 17) {
			require.Contains(t, s, "e", "%v: exponent notation", v)
		}
		if v != 0 && exp > -3 && exp < 16 {
			require.NotContains(t, s, "e", "%v: fixed notation", v)
			require.Contains(t, s, ".", "%v: always a decimal point", v)
		}
	}
}

// The fast path for times on the 10⁻⁶ grid gives the same text as the
// general shortest-digits path, on and off the grid, at both ends of its
// range, and declines what it cannot write (NaN, zero, tiny, huge).
func TestAppendMicrosMatchesShortest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(v float64) {
		if out, ok := appendMicros(nil, v); ok {
			require.Equal(t, string(appendPyFloatShortest(nil, v)), string(out), "%v", v)
		}
	}
	taken := 0
	for i := 0; i < 200000; i++ {
		// k × 10⁻⁶ ms for k up to 2³²×10⁶ (µs … ~50 days), either sign
		k := rng.Int64N(1 << (10 + rng.IntN(42)))
		v := float64(k) / 1e6
		if rng.IntN(2) == 0 {
			v = -v
		}
		if _, ok := appendMicros(nil, v); ok {
			taken++
		}
		check(v)
		check(math.Nextafter(v, math.Inf(1))) // just off the grid
		check(rng.Float64() * math.Pow(10, float64(rng.IntN(14)-4)))
	}
	assert.Greater(t, taken, 190000, "grid values in range take the fast path")
	// 4459.234793 (an end_ms of a replay), 5.0, 0.0001, 0.000123: fixed notation
	for v, want := range map[float64]string{4459.234793: "4459.234793", 5: "5.0", 1e-4: "0.0001",
		0.000123: "0.000123", 4294967295.999999: "4294967295.999999", -14.2: "-14.2"} {
		out, ok := appendMicros(nil, v)
		require.True(t, ok, "%v", v)
		assert.Equal(t, want, string(out))
	}
	tenth := 0.1 // a variable: 0.1 + 0.2 in constants is exactly 0.3
	for _, v := range []float64{0, math.NaN(), 9e-5, 1 << 32, tenth + 0.2, 34.961876590551185} {
		_, ok := appendMicros(nil, v)
		assert.False(t, ok, "%v", v)
	}
}

func TestAppendJSONStringLikePython(t *testing.T) {
	// json.dumps('a"b\\c\n\x7f\u00e9\U0001F600\x01')
	assert.Equal(t, `"a\"b\\c\n\u007f\u00e9\ud83d\ude00\u0001"`,
		string(appendJSONString(nil, "a\"b\\c\n\x7f\u00e9\U0001F600\x01")))
}

// A three-row table with every kind of column and null rule.
func tinyTable() ([]byte, []TableColumn) {
	le := binary.LittleEndian
	var data []byte
	put8 := func(v uint64) { data = le.AppendUint64(data, v) }
	for _, v := range []int64{7, 8, 10} { // request_id <i8 at 0
		put8(uint64(v))
	}
	data = append(data, 0, 1, 0, 0, 0, 0, 0, 0) // status |u1 at 24 (padded to 8)
	for _, v := range []int32{-1, 0, 1, 0} {    // reason <i4 at 32 (padded)
		data = le.AppendUint32(data, uint32(v))
	}
	for _, v := range []float64{14, math.NaN(), 1e-05} { // ttft_ms <f8 at 48
		put8(math.Float64bits(v))
	}
	for _, v := range []int32{2, -1, 0, 0} { // worker <i4 at 72
		data = le.AppendUint32(data, uint32(v))
	}
	cols := []TableColumn{
		{Name: "request_id", Dtype: "<i8", Offset: 0},
		{Name: "status", Dtype: "|u1", Offset: 24, Labels: []string{"completed", "rejected"}},
		{Name: "reason", Dtype: "<i4", Offset: 32, Null: "negative", Labels: []string{"too long", `say "hi", then go`}},
		{Name: "ttft_ms", Dtype: "<f8", Offset: 48, Null: "nan"},
		{Name: "worker", Dtype: "<i4", Offset: 72, Null: "negative"},
	}
	return data, cols
}

func TestWriteTableJSONLAndCSV(t *testing.T) {
	data, cols := tinyTable()
	var out bytes.Buffer
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 0, 3, FormatJSONL))
	assert.Equal(t, `{"request_id": 7, "status": "completed", "reason": null, "ttft_ms": 14.0, "worker": 2}
{"request_id": 8, "status": "rejected", "reason": "too long", "ttft_ms": null, "worker": null}
{"request_id": 10, "status": "completed", "reason": "say \"hi\", then go", "ttft_ms": 1e-05, "worker": 0}
`, out.String())

	out.Reset()
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 0, 2, FormatCSV))
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 2, 3, FormatCSV)) // appended: no header
	assert.Equal(t, `request_id,status,reason,ttft_ms,worker
7,completed,,14.0,2
8,rejected,too long,,
10,completed,"say ""hi"", then go",1e-05,0
`, out.String())

	assert.ErrorContains(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 2, 4, FormatCSV), "outside a table of 3")
	assert.ErrorContains(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 0, 3, "xml"), "table format")
	bad := append([]TableColumn{}, cols...)
	bad[0].Dtype = "<f4"
	assert.ErrorContains(t, WriteTable(&out, bytes.NewReader(data), 3, bad, 0, 3, FormatCSV), "dtype")
	short := data[:40]
	assert.Error(t, WriteTable(&out, bytes.NewReader(short), 3, cols, 0, 3, FormatCSV), "a truncated buffer")
	assert.True(t, strings.HasPrefix(out.String(), "request_id"))
}

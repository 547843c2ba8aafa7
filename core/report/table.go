package report

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
)

// TableColumn describes one column of a per-request table held as
// little-endian arrays (the Columnar layout), for WriteTable.
type TableColumn struct {
	Name   string `json:"name"`
	Dtype  string `json:"dtype"`  // "<f8", "<i8", "<i4" or "|u1"
	Offset int64  `json:"offset"` // byte offset of the column's first value in the data
	// Null says which values are null: "nan" (a NaN float), "negative" (an
	// index below 0), or "" (none).
	Null string `json:"null,omitempty"`
	// Labels, when given, maps an integer value to the string written for it
	// (status and reason codes).
	Labels []string `json:"labels,omitempty"`
}

// Table formats of WriteTable.
const (
	// FormatJSONL writes one JSON object per row, keys in column order, in
	// the form Python's json.dumps gives ({"a": 1, "b": null}, floats as
	// Python's repr, non-ASCII escaped), so that a file written here is
	// byte-identical to one written record by record in Python.
	FormatJSONL = "jsonl"
	// FormatCSV writes a header line of the column names, then one line per
	// row (RFC 4180: a field with a comma, quote or line break is quoted; a
	// null is an empty field; floats as Python's repr).
	FormatCSV = "csv"
)

// WriteTable writes rows [from, to) of a table of n rows (columns cols,
// values in data) to w in format (FormatJSONL or FormatCSV; the CSV header
// is written when from is 0). Values are read with data.ReadAt one column
// block at a time, so data can be a file of any size.
func WriteTable(w io.Writer, data io.ReaderAt, n int64, cols []TableColumn, from, to int64, format string) error {
	return WriteTableRows(w, data, n, cols, from, to, format, from == 0)
}

// WriteTableRows is WriteTable with the CSV header written when header is
// true (a table appended chunk by chunk from separate column buffers has one
// header, before its first chunk).
func WriteTableRows(w io.Writer, data io.ReaderAt, n int64, cols []TableColumn, from, to int64, format string, header bool) error {
	return WriteTableRowsWith(w, data, n, cols, from, to, format, header, nil)
}

// WriteTableRowsWith is WriteTableRows with the rows' chunk times in data at
// times (FormatAIPerf, with the columns chunk_offset and chunk_count: each
// completed record then has inter_chunk_latency; nil: none).
func WriteTableRowsWith(w io.Writer, data io.ReaderAt, n int64, cols []TableColumn, from, to int64, format string, header bool,
	times *TimesColumn) error {
	if format != FormatJSONL && format != FormatCSV && format != FormatAIPerf {
		return fmt.Errorf("table format %q: want %s, %s or %s", format, FormatJSONL, FormatCSV, FormatAIPerf)
	}
	if from < 0 || to > n || from > to {
		return fmt.Errorf("rows [%d, %d) outside a table of %d", from, to, n)
	}
	sizes := make([]int64, len(cols))
	for i, c := range cols {
		switch c.Dtype {
		case "<f8", "<i8":
			sizes[i] = 8
		case "<i4":
			sizes[i] = 4
		case "|u1":
			sizes[i] = 1
		default:
			return fmt.Errorf("column %s: dtype %q is not one of <f8, <i8, <i4, |u1", c.Name, c.Dtype)
		}
		if c.Null != "" && c.Null != "nan" && c.Null != "negative" {
			return fmt.Errorf("column %s: null rule %q is not nan or negative", c.Name, c.Null)
		}
	}
	var aiperf aiperfCols
	if format == FormatAIPerf {
		var err error
		if aiperf, err = newAIPerfCols(cols); err != nil {
			return err
		}
		if times != nil {
			if aiperf.chunkOff < 0 || aiperf.chunkN < 0 {
				return fmt.Errorf("chunk times need the columns chunk_offset and chunk_count")
			}
			aiperf.chunks = &chunkReader{data: data, col: *times}
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	if format == FormatCSV && header {
		for i, c := range cols {
			if i > 0 {
				line = append(line, ',')
			}
			line = appendCSVString(line, c.Name)
		}
		line = append(line, '\n')
	}
	plans := make([]cellPlan, len(cols))
	for i := range cols {
		plans[i] = newCellPlan(&cols[i], sizes[i], i, format)
	}
	const block = 1 << 16 // rows read per column at a time
	bufs := make([][]byte, len(cols))
	for start := from; start < to; start += block {
		end := min(start+block, to)
		for i, c := range cols {
			need := (end - start) * sizes[i]
			if int64(cap(bufs[i])) < need {
				bufs[i] = make([]byte, need)
			}
			bufs[i] = bufs[i][:need]
			if _, err := data.ReadAt(bufs[i], c.Offset+start*sizes[i]); err != nil {
				return fmt.Errorf("column %s: %w", c.Name, err)
			}
		}
		for r := int64(0); r < end-start; r++ {
			if format == FormatAIPerf {
				row := aiperfRow{cols: cols, bufs: bufs, sizes: sizes, r: r}
				var err error
				if line, err = appendAIPerfRecord(line, &aiperf, row); err != nil {
					return err
				}
				line = append(line, '\n')
				if len(line) > 1<<16 {
					if _, err := bw.Write(line); err != nil {
						return err
					}
					line = line[:0]
				}
				continue
			}
			for i := range plans {
				p := &plans[i]
				if len(p.prefix) == 1 {
					line = append(line, p.prefix[0])
				} else {
					line = append(line, p.prefix...)
				}
				line = p.appendCell(line, bufs[i][r*p.size:])
			}
			if format == FormatJSONL {
				line = append(line, '}')
			}
			line = append(line, '\n')
			if len(line) > 1<<16 {
				if _, err := bw.Write(line); err != nil {
					return err
				}
				line = line[:0]
			}
		}
	}
	if _, err := bw.Write(line); err != nil {
		return err
	}
	return bw.Flush()
}

// cellPlan is how WriteTable writes one column's cells, worked out once:
// what goes before each cell ({"name":  or , "name":  in JSON lines, a
// comma in CSV), the value's width and null rule, and the labels as written.
type cellPlan struct {
	prefix  []byte
	null    []byte // "null" in JSON lines, nothing in CSV
	size    int64  // bytes per value: 8, 4 or 1
	float   bool
	nanNull bool     // a NaN float is null
	negNull bool     // a negative integer is null
	labels  [][]byte // nil, or the strings the integers index, encoded
}

func newCellPlan(c *TableColumn, size int64, i int, format string) cellPlan {
	p := cellPlan{size: size, float: c.Dtype == "<f8", nanNull: c.Null == "nan", negNull: c.Null == "negative"}
	switch {
	case format == FormatJSONL && i == 0:
		p.prefix = append(appendJSONString([]byte{'{'}, c.Name), ':', ' ')
	case format == FormatJSONL:
		p.prefix = append(appendJSONString([]byte{',', ' '}, c.Name), ':', ' ')
	case i > 0:
		p.prefix = []byte{','}
	}
	if format == FormatJSONL {
		p.null = []byte("null")
	}
	if c.Labels != nil {
		p.labels = make([][]byte, len(c.Labels))
		for k, l := range c.Labels {
			if format == FormatJSONL {
				p.labels[k] = appendJSONString(nil, l)
			} else {
				p.labels[k] = appendCSVString(nil, l)
			}
		}
	}
	return p
}

// appendCell writes the value at the start of v: null, a label, an integer
// or a float.
func (p *cellPlan) appendCell(b []byte, v []byte) []byte {
	if p.float {
		f := math.Float64frombits(binary.LittleEndian.Uint64(v))
		if p.nanNull && f != f {
			return append(b, p.null...)
		}
		return AppendPyFloat(b, f)
	}
	var i int64
	switch p.size {
	case 8:
		i = int64(binary.LittleEndian.Uint64(v))
	case 4:
		i = int64(int32(binary.LittleEndian.Uint32(v)))
	default:
		i = int64(v[0])
	}
	if p.negNull && i < 0 {
		return append(b, p.null...)
	}
	if p.labels != nil {
		if i < 0 || i >= int64(len(p.labels)) {
			return append(b, p.null...)
		}
		return append(b, p.labels[i]...)
	}
	return strconv.AppendInt(b, i, 10)
}

// cellInt reads an integer value of dtype "<i8", "<i4" or "|u1".
func cellInt(dtype string, v []byte) int64 {
	switch dtype {
	case "<i8":
		return int64(binary.LittleEndian.Uint64(v))
	case "<i4":
		return int64(int32(binary.LittleEndian.Uint32(v)))
	case "|u1":
		return int64(v[0])
	}
	return 0
}

// AppendPyFloat writes f as Python's repr(float) does: the shortest digits
// that round-trip, in fixed notation when the decimal exponent is in
// (−4, 16] (with ".0" when there is no fraction), else in exponent notation
// with a sign and at least two exponent digits ("1e-05", "1.5e+16").
// Source: CPython's float_repr (format_float_short, mode 'r').
//
// Times in a report are on a grid of 10⁻⁶ ms (the core's nanoseconds), so
// most values take a fast path (appendMicros) that gives the same text
// without the general shortest-digits search.
func AppendPyFloat(b []byte, f float64) []byte {
	if out, ok := appendMicros(b, f); ok {
		return out
	}
	return appendPyFloatShortest(b, f)
}

// microsLimit bounds appendMicros: below 2³² the spacing of float64 values
// is at most 2⁻²¹ < 10⁻⁶, so at most one multiple of 10⁻⁶ parses to a
// given float.
const microsLimit = 1 << 32

// appendMicros writes f when it is exactly the float nearest some k × 10⁻⁶
// with 10⁻⁴ ≤ |f| < 2³², and reports whether it did. The text is k × 10⁻⁶
// in fixed notation with trailing zeros dropped (one kept after the point),
// which is Python's repr: it round-trips (float64(k)/1e6 is correctly
// rounded, as parsing is), and no shorter text does, because any decimal
// with fewer significant digits near f is itself a multiple of 10⁻⁶, and
// only k × 10⁻⁶ among those parses to f (see microsLimit). Decimal
// exponents stay in (−4, 16], where repr uses fixed notation.
func appendMicros(b []byte, f float64) ([]byte, bool) {
	a := math.Abs(f)
	if !(a >= 1e-4 && a < microsLimit) {
		return b, false
	}
	k := math.Round(a * 1e6)
	if k/1e6 != a {
		return b, false
	}
	if f < 0 {
		b = append(b, '-')
	}
	ki := uint64(k)
	b = strconv.AppendUint(b, ki/1_000_000, 10)
	b = append(b, '.')
	frac := ki % 1_000_000
	if frac == 0 {
		return append(b, '0'), true
	}
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...), true
}

// appendPyFloatShortest is AppendPyFloat for any float: strconv's shortest
// digits, laid out by Python's rule.
func appendPyFloatShortest(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		b = append(b, '-')
	}
	ePos := 0
	for e[ePos] != 'e' {
		ePos++
	}
	exp, _ := strconv.Atoi(string(e[ePos+1:]))
	var digits [24]byte
	nd := 0
	for _, c := range e[:ePos] {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	decpt := exp + 1 // value = 0.d1d2…dn × 10^decpt
	if decpt <= -4 || decpt > 16 {
		b = append(b, digits[0])
		if nd > 1 {
			b = append(b, '.')
			b = append(b, digits[1:nd]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	switch {
	case decpt <= 0: // 0.000ddd
		b = append(b, '0', '.')
		for i := 0; i < -decpt; i++ {
			b = append(b, '0')
		}
		return append(b, digits[:nd]...)
	case decpt >= nd: // ddd000.0
		b = append(b, digits[:nd]...)
		for i := nd; i < decpt; i++ {
			b = append(b, '0')
		}
		return append(b, '.', '0')
	default: // dd.ddd
		b = append(b, digits[:decpt]...)
		b = append(b, '.')
		return append(b, digits[decpt:nd]...)
	}
}

// jsonEscapes maps the characters JSON escapes by name to that name's letter.
var jsonEscapes = [128]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}

// appendJSONString writes s as a JSON string the way Python's json.dumps does
// by default (ensure_ascii): \" \\ \n \r \t \b \f escaped by name, other
// control characters, DEL and every non-ASCII character as \uXXXX (UTF-16
// surrogate pairs above U+FFFF; an invalid UTF-8 byte as U+FFFD).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r < 0x80 && jsonEscapes[r] != 0:
			b = append(b, '\\', jsonEscapes[r])
		case r < 0x20 || (r >= 0x7f && r <= 0xffff): // outside Python's ' '..'~'
			b = u(b, r)
		case r > 0xffff:
			r -= 0x10000
			b = u(b, 0xd800+(r>>10))
			b = u(b, 0xdc00+(r&0x3ff))
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}

// appendCSVString writes s as a CSV field, quoted (quotes doubled) when it
// holds a comma, a quote or a line break.
func appendCSVString(b []byte, s string) []byte {
	quote := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

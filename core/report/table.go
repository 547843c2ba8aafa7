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
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	if format == FormatCSV && from == 0 {
		for i, c := range cols {
			if i > 0 {
				line = append(line, ',')
			}
			line = appendCSVString(line, c.Name)
		}
		line = append(line, '\n')
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
				line = append(appendAIPerfRecord(line, &aiperf, row), '\n')
				if len(line) > 1<<16 {
					if _, err := bw.Write(line); err != nil {
						return err
					}
					line = line[:0]
				}
				continue
			}
			if format == FormatJSONL {
				line = append(line, '{')
			}
			for i := range cols {
				c := &cols[i]
				if i > 0 {
					if format == FormatJSONL {
						line = append(line, ',', ' ')
					} else {
						line = append(line, ',')
					}
				}
				if format == FormatJSONL {
					line = appendJSONString(line, c.Name)
					line = append(line, ':', ' ')
				}
				line = appendCell(line, c, bufs[i][r*sizes[i]:(r+1)*sizes[i]], format)
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

// appendCell writes one value: null, a label, an integer or a float.
func appendCell(b []byte, c *TableColumn, v []byte, format string) []byte {
	null := func() []byte {
		if format == FormatJSONL {
			return append(b, "null"...)
		}
		return b
	}
	if c.Dtype == "<f8" {
		f := math.Float64frombits(binary.LittleEndian.Uint64(v))
		if c.Null == "nan" && math.IsNaN(f) {
			return null()
		}
		return AppendPyFloat(b, f)
	}
	i := cellInt(c.Dtype, v)
	if c.Null == "negative" && i < 0 {
		return null()
	}
	if c.Labels != nil {
		if i < 0 || i >= int64(len(c.Labels)) {
			return null()
		}
		if format == FormatJSONL {
			return appendJSONString(b, c.Labels[i])
		}
		return appendCSVString(b, c.Labels[i])
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
func AppendPyFloat(b []byte, f float64) []byte {
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

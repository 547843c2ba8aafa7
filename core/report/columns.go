package report

import (
	"encoding/binary"
	"math"
)

// Column is one per-request field in the columnar form of a report: enough for
// a reader to decode any column without knowing the field (Python's reader
// decodes every column the header lists).
type Column struct {
	Name   string `json:"name"`
	Dtype  string `json:"dtype"`  // numpy dtype string: "<i8", "<f8", "<i4", "|u1"
	Offset int    `json:"offset"` // byte offset of the column in the buffer
	// Nullable: an integer column whose −1 is null (a float column's null is
	// NaN).
	Nullable bool `json:"nullable,omitempty"`
	// Labels names the header's list of strings that the column's integers
	// index (LabelsStatuses, LabelsReasons; −1 is null).
	Labels string `json:"labels,omitempty"`
}

// Statuses are the codes of the status column, in order.
var Statuses = []string{StatusCompleted, StatusRejected, StatusFailed, StatusCanceled}

// Columnar is the per-request records as little-endian column arrays in one
// buffer, for bulk transfer to Python (numpy.frombuffer per column): no per
// record or per field call crosses the boundary. The columns are the fields
// of the schema (fields.go), in order.
type Columnar struct {
	N       int      `json:"n"`
	Columns []Column `json:"columns"`
	// Statuses names the codes of the status column; Reasons the distinct
	// reasons that the reason column indexes.
	Statuses []string `json:"statuses"`
	Reasons  []string `json:"reasons"`
	Data     []byte   `json:"-"`
}

// dtypeSize is the bytes of one value of a column dtype.
func dtypeSize(dtype string) int {
	switch dtype {
	case "<i8", "<f8":
		return 8
	case "<i4":
		return 4
	case "|u1":
		return 1
	}
	panic("report: unknown column dtype " + dtype)
}

// ColumnsBytes is the size of the columnar buffer of n records, bytes (every
// column padded to 8 bytes).
func ColumnsBytes(n int) int {
	size := 0
	for i := range fields {
		size += dtypeSize(fields[i].Dtype) * n
		size = (size + 7) &^ 7
	}
	return size
}

// ToColumns lays the records out column by column, in record order.
func ToColumns(rs []Record) *Columnar {
	n := len(rs)
	c := &Columnar{N: n, Statuses: Statuses, Reasons: []string{}}
	reasons := map[string]int32{}
	size := 0
	for i := range fields {
		f := &fields[i]
		col := Column{Name: f.Name, Dtype: f.Dtype, Offset: size, Nullable: f.integer != nil && f.Null != ""}
		if f.text != nil {
			col.Labels = LabelsReasons
			if f.Dtype == "|u1" {
				col.Labels = LabelsStatuses
			}
		}
		c.Columns = append(c.Columns, col)
		size += dtypeSize(f.Dtype) * n
		size = (size + 7) &^ 7 // keep every column 8-byte aligned
	}
	c.Data = make([]byte, size)
	for ci := range fields {
		f, col := &fields[ci], &c.Columns[ci]
		w := dtypeSize(f.Dtype)
		for i := range rs {
			b := c.Data[col.Offset+i*w:]
			switch {
			case f.float != nil:
				v, ok := f.float(&rs[i])
				if !ok {
					v = math.NaN()
				}
				binary.LittleEndian.PutUint64(b, math.Float64bits(v))
			case f.integer != nil:
				v, ok := f.integer(&rs[i])
				if !ok {
					v = -1
				}
				putInt(b, f.Dtype, v)
			case col.Labels == LabelsStatuses:
				s, _ := f.text(&rs[i])
				b[0] = statusCode(s)
			default:
				v := int64(-1)
				if s, ok := f.text(&rs[i]); ok {
					j, seen := reasons[s]
					if !seen {
						j = int32(len(c.Reasons))
						reasons[s] = j
						c.Reasons = append(c.Reasons, s)
					}
					v = int64(j)
				}
				putInt(b, f.Dtype, v)
			}
		}
	}
	return c
}

func putInt(b []byte, dtype string, v int64) {
	if dtype == "<i4" {
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
		return
	}
	binary.LittleEndian.PutUint64(b, uint64(v))
}

// statusCode is s's index in Statuses; an unknown status is a bug.
func statusCode(s string) byte {
	for i, x := range Statuses {
		if x == s {
			return byte(i)
		}
	}
	panic("report: unknown status " + s)
}

package report

import (
	"encoding/binary"
	"io"
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
	// index (LabelsStatuses, LabelsReasons, LabelsSessions; −1 is null).
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
	// Sessions names the sessions of a trace whose session ids are strings
	// (workload.SessionNamer): the session_id column then indexes it, so that
	// every table and export writes the trace's own id. Absent otherwise
	// (session_id is the trace's integer id, or the generated session).
	Sessions []string `json:"sessions,omitempty"`
	// Streamed is set when the records went to a sink chunk by chunk
	// instead of Data (replay.WithRecordColumns with a sink).
	Streamed *Streamed `json:"streamed,omitempty"`
	Data     []byte    `json:"-"`
}

// Streamed says how a replay streamed its records: the number of chunks, and
// whether their rows are in request_id order (else a reader that wants that
// order sorts them).
type Streamed struct {
	Chunks int  `json:"chunks"`
	Sorted bool `json:"sorted"`
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
	var b ColumnBuilder
	data := b.encode(rs)
	c := b.Header()
	c.Data = data
	return c
}

// ColumnBuilder turns records into the columnar form chunk by chunk, in record
// order, so that a replay can drop each chunk of records once it is encoded
// (or hand the chunk on) instead of holding every record and its columns at
// once. A chunk is the columnar form of its own rows (Columnar.Data of those
// rows alone: ColumnsBytes(k) bytes); the reason codes are numbered across
// chunks in record order, as ToColumns numbers them, so the chunks joined
// column by column (WriteTo) are ToColumns of all the records, byte for byte.
type ColumnBuilder struct {
	n       int
	reasons map[string]int32
	names   []string
	chunks  []Chunk
	// SessionNames, when set, returns the trace's string session ids by
	// number so far (nil when the trace has none): the header then labels
	// the session_id column with them (Columnar.Sessions).
	SessionNames func() []string
	// sorted: every request_id so far is ≥ the one before it; last is the last.
	unsorted bool
	last     int64
	scratch  []byte // Encode's buffer
}

// Chunk is the columnar form of Rows consecutive records (ColumnsBytes(Rows)
// bytes, columns padded to 8 bytes as in Columnar).
type Chunk struct {
	Rows int
	Data []byte
}

// Add encodes rs as the next chunk and keeps it (WriteTo).
func (b *ColumnBuilder) Add(rs []Record) {
	b.chunks = append(b.chunks, Chunk{Rows: len(rs), Data: b.encode(rs)})
}

// Encode encodes rs as the next chunk and returns it without keeping it, for
// a caller that streams the chunks elsewhere: its Data is valid until the
// next Encode, which reuses the buffer (a replay streams gigabytes of
// columns; fresh buffers were garbage the collector let pile up).
func (b *ColumnBuilder) Encode(rs []Record) Chunk {
	b.scratch = b.encodeInto(rs, b.scratch)
	return Chunk{Rows: len(rs), Data: b.scratch}
}

// Rows is the number of records encoded so far.
func (b *ColumnBuilder) Rows() int { return b.n }

// Sorted reports whether the records encoded so far are in request_id order.
func (b *ColumnBuilder) Sorted() bool { return !b.unsorted }

// Header is the columnar description of every record encoded so far (Data
// nil): the columns' offsets are those of WriteTo's output.
func (b *ColumnBuilder) Header() *Columnar { return b.header(b.n) }

// header describes n records laid out as one columnar buffer.
func (b *ColumnBuilder) header(n int) *Columnar {
	c := &Columnar{N: n, Statuses: Statuses, Reasons: append([]string{}, b.names...)}
	if b.SessionNames != nil {
		if names := b.SessionNames(); names != nil {
			c.Sessions = append([]string{}, names...)
		}
	}
	for i, off := range columnOffsets(n) {
		f := &fields[i]
		col := Column{Name: f.Name, Dtype: f.Dtype, Offset: off, Nullable: f.integer != nil && f.Null != ""}
		if f.text != nil {
			col.Labels = LabelsReasons
			if f.Dtype == "|u1" {
				col.Labels = LabelsStatuses
			}
		}
		if f.Name == "session_id" && c.Sessions != nil {
			col.Labels = LabelsSessions
		}
		c.Columns = append(c.Columns, col)
	}
	return c
}

// ChunkHeader is the columnar description of a chunk of rows records (its
// own offsets; the reasons numbered so far).
func (b *ColumnBuilder) ChunkHeader(rows int) *Columnar { return b.header(rows) }

// WriteTo writes the kept chunks joined column by column: the Data of
// Header(), ColumnsBytes(Rows()) bytes.
func (b *ColumnBuilder) WriteTo(w io.Writer) (int64, error) {
	var written int64
	pad := make([]byte, 8)
	for ci := range fields {
		width := dtypeSize(fields[ci].Dtype)
		size := 0
		for _, ch := range b.chunks {
			off := columnOffsets(ch.Rows)[ci]
			k, err := w.Write(ch.Data[off : off+width*ch.Rows])
			written += int64(k)
			if err != nil {
				return written, err
			}
			size += width * ch.Rows
		}
		if p := (size+7)&^7 - size; p > 0 {
			k, err := w.Write(pad[:p])
			written += int64(k)
			if err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// columnOffsets is each column's byte offset in the columnar form of n records.
func columnOffsets(n int) []int {
	offs := make([]int, len(fields))
	size := 0
	for i := range fields {
		offs[i] = size
		size += dtypeSize(fields[i].Dtype) * n
		size = (size + 7) &^ 7 // keep every column 8-byte aligned
	}
	return offs
}

// encodeBlock is how many records encode walks for every column before the
// next records: a block's records stay in the CPU cache while each column
// reads them, instead of every column streaming through all the records (a
// tenth of a 10-million-request replay's time, for the memory traffic alone).
const encodeBlock = 512

// encode lays rs out as the columnar form of its own rows.
func (b *ColumnBuilder) encode(rs []Record) []byte { return b.encodeInto(rs, nil) }

// encodeInto is encode into buf's array when it is large enough.
func (b *ColumnBuilder) encodeInto(rs []Record, buf []byte) []byte {
	if b.reasons == nil {
		b.reasons = map[string]int32{}
	}
	n := len(rs)
	offs := columnOffsets(n)
	size := ColumnsBytes(n)
	var data []byte
	if cap(buf) >= size {
		data = buf[:size]
		clear(data) // the padding between columns
	} else {
		data = make([]byte, size)
	}
	for _, r := range rs {
		if r.RequestID < b.last && b.n > 0 {
			b.unsorted = true
		}
		b.last = r.RequestID
		b.n++
	}
	for lo := 0; lo < n; lo += encodeBlock {
		hi := min(lo+encodeBlock, n)
		for ci := range fields {
			f := &fields[ci]
			w := dtypeSize(f.Dtype)
			col := data[offs[ci] : offs[ci]+w*n]
			switch {
			case f.float != nil:
				for i := lo; i < hi; i++ {
					v, ok := f.float(&rs[i])
					if !ok {
						v = math.NaN()
					}
					binary.LittleEndian.PutUint64(col[i*8:], math.Float64bits(v))
				}
			case f.integer != nil:
				for i := lo; i < hi; i++ {
					v, ok := f.integer(&rs[i])
					if !ok {
						v = -1
					}
					putInt(col[i*w:], f.Dtype, v)
				}
			case f.Dtype == "|u1":
				for i := lo; i < hi; i++ {
					s, _ := f.text(&rs[i])
					col[i] = statusCode(s)
				}
			default:
				for i := lo; i < hi; i++ {
					v := int64(-1)
					if s, ok := f.text(&rs[i]); ok {
						j, seen := b.reasons[s]
						if !seen {
							j = int32(len(b.names))
							b.reasons[s] = j
							b.names = append(b.names, s)
						}
						v = int64(j)
					}
					putInt(col[i*w:], f.Dtype, v)
				}
			}
		}
	}
	return data
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

package report

import (
	"encoding/binary"
	"math"
)

// Column is one per-request field in the columnar form of a report.
type Column struct {
	Name   string `json:"name"`
	Dtype  string `json:"dtype"`  // numpy dtype string: "<i8", "<f8", "<i4", "|u1"
	Offset int    `json:"offset"` // byte offset of the column in the buffer
}

// Statuses are the codes of the status column, in order.
var Statuses = []string{StatusCompleted, StatusRejected, StatusFailed, StatusCanceled}

// Columnar is the per-request records as little-endian column arrays in one
// buffer, for bulk transfer to Python (numpy.frombuffer per column): no per
// record or per field call crosses the boundary. A null is NaN in a float
// column and −1 in an index column (reason, worker, session, turn); the
// reader turns them back into nulls.
type Columnar struct {
	N       int      `json:"n"`
	Columns []Column `json:"columns"`
	// Statuses names the codes of the status column; Reasons the distinct
	// reasons that the reason column indexes.
	Statuses []string `json:"statuses"`
	Reasons  []string `json:"reasons"`
	Data     []byte   `json:"-"`
}

// ToColumns lays the records out column by column, in record order.
func ToColumns(rs []Record) *Columnar {
	n := len(rs)
	c := &Columnar{N: n, Statuses: Statuses, Reasons: []string{}}
	reasons := map[string]int32{}
	type col struct {
		name, dtype string
		size        int
		put         func(b []byte, r *Record)
	}
	f64 := func(name string, get func(r *Record) (float64, bool)) col {
		return col{name, "<f8", 8, func(b []byte, r *Record) {
			v, ok := get(r)
			if !ok {
				v = math.NaN()
			}
			binary.LittleEndian.PutUint64(b, math.Float64bits(v))
		}}
	}
	i64 := func(name string, get func(r *Record) int64) col {
		return col{name, "<i8", 8, func(b []byte, r *Record) { binary.LittleEndian.PutUint64(b, uint64(get(r))) }}
	}
	i32 := func(name string, get func(r *Record) int32) col {
		return col{name, "<i4", 4, func(b []byte, r *Record) { binary.LittleEndian.PutUint32(b, uint32(get(r))) }}
	}
	msAt := func(get func(r *Record) int64) func(r *Record) (float64, bool) {
		return func(r *Record) (float64, bool) { ns := get(r); return ms(ns), ns != NoTime }
	}
	cols := []col{
		i64("request_id", func(r *Record) int64 { return r.RequestID }),
		{"status", "|u1", 1, func(b []byte, r *Record) {
			for i, s := range Statuses {
				if s == r.Status {
					b[0] = byte(i)
				}
			}
		}},
		i32("reason", func(r *Record) int32 {
			if r.Reason == "" {
				return -1
			}
			i, ok := reasons[r.Reason]
			if !ok {
				i = int32(len(c.Reasons))
				reasons[r.Reason] = i
				c.Reasons = append(c.Reasons, r.Reason)
			}
			return i
		}),
		i64("input_tokens", func(r *Record) int64 { return int64(r.InputTokens) }),
		i64("output_tokens", func(r *Record) int64 { return int64(r.OutputTokens) }),
		i64("cached_tokens", func(r *Record) int64 { return int64(r.CachedTokens) }),
		f64("send_ms", msAt(func(r *Record) int64 { return r.SendNs })),
		f64("arrival_ms", msAt(func(r *Record) int64 { return r.ArrivalNs })),
		f64("first_token_ms", msAt(func(r *Record) int64 { return r.FirstTokenNs })),
		f64("end_ms", msAt(func(r *Record) int64 { return r.EndNs })),
		f64("release_ms", msAt(func(r *Record) int64 { return r.ReleaseNs })),
		f64("ttft_ms", (*Record).TTFT),
		f64("e2e_ms", func(r *Record) (float64, bool) { return r.E2E(), true }),
		f64("tpot_ms", (*Record).TPOT),
		i32("worker", func(r *Record) int32 { return int32(r.Worker) }),
		i32("prefill_worker", func(r *Record) int32 { return int32(r.PrefillWorker) }),
		i32("decode_worker", func(r *Record) int32 { return int32(r.DecodeWorker) }),
		f64("transfer_ms", func(r *Record) (float64, bool) {
			return ms(r.TransferNs), r.PrefillWorker >= 0 && r.TransferNs > 0
		}),
		i32("preemptions", func(r *Record) int32 { return int32(r.Preemptions) }),
		i64("session_id", func(r *Record) int64 { return r.SessionID }),
		i32("turn", func(r *Record) int32 {
			if r.SessionID < 0 {
				return -1
			}
			return int32(r.Turn)
		}),
	}
	size := 0
	for _, k := range cols {
		c.Columns = append(c.Columns, Column{Name: k.name, Dtype: k.dtype, Offset: size})
		size += k.size * n
		size = (size + 7) &^ 7 // keep every column 8-byte aligned
	}
	c.Data = make([]byte, size)
	for ci, k := range cols {
		off := c.Columns[ci].Offset
		for i := range rs {
			k.put(c.Data[off+i*k.size:], &rs[i])
		}
	}
	return c
}

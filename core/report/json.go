package report

import (
	"encoding/json"
	"strconv"
)

// AppendRecordJSON appends r as one JSON object: the fields of the schema
// (fields.go) in order, a null as null. Written by hand (not encoding/json)
// because a large replay writes millions of records; the output is
// byte-identical for the same record.
func AppendRecordJSON(b []byte, r *Record) []byte {
	for i := range fields {
		f := &fields[i]
		if i == 0 {
			b = append(b, '{', '"')
		} else {
			b = append(b, ',', '"')
		}
		b = append(b, f.Name...)
		b = append(b, '"', ':')
		switch {
		case f.integer != nil:
			if v, ok := f.integer(r); ok {
				b = strconv.AppendInt(b, v, 10)
			} else {
				b = append(b, "null"...)
			}
		case f.float != nil:
			if v, ok := f.float(r); ok {
				b = AppendFloat(b, v)
			} else {
				b = append(b, "null"...)
			}
		default:
			if v, ok := f.text(r); ok {
				b = strconv.AppendQuote(b, v)
			} else {
				b = append(b, "null"...)
			}
		}
	}
	return append(b, '}')
}

// AppendFloat writes v in the shortest form that round-trips, always with a
// decimal point so that readers see a float.
func AppendFloat(b []byte, v float64) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	for _, c := range b[n:] {
		if c == '.' {
			return b
		}
	}
	return append(b, '.', '0')
}

// Report is a whole replay's result.
type Report struct {
	Metadata Metadata
	Summary  Summary
	Records  []Record
	// Columns holds the records as columns instead of Records (nil) when the
	// run was asked for them (replay.WithRecordColumns); a run that streamed
	// its columns elsewhere keeps none (Columns.Rows() is still the count).
	Columns *ColumnBuilder
	// Timeline is every engine pass when the run recorded it
	// (replay.WithTimeline), else nil. JSON leaves it out.
	Timeline *Timeline
	// Chunks is when the client received each chunk of each response, when
	// the run recorded it (replay.WithTokenGaps), else nil. JSON leaves it
	// out.
	Chunks *ChunkTimes
}

// JSON writes {"metadata":…, "summary":…, "requests":[…]}. Metadata and summary
// go through encoding/json (sorted map keys, struct field order), so the bytes
// are the same for the same replay.
func (r *Report) JSON() ([]byte, error) {
	meta, err := json.Marshal(r.Metadata)
	if err != nil {
		return nil, err
	}
	sum, err := json.Marshal(r.Summary)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+len(meta)+len(sum)+len(r.Records)*400)
	b = append(b, `{"metadata":`...)
	b = append(b, meta...)
	b = append(b, `,"summary":`...)
	b = append(b, sum...)
	b = append(b, `,"requests":[`...)
	for i := range r.Records {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendRecordJSON(b, &r.Records[i])
	}
	return append(b, "]}"...), nil
}

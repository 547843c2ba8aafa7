package report

import (
	"encoding/json"
	"strconv"
)

// AppendRecordJSON appends r as one JSON object with the keys of DESIGN.md §8 in
// order. Written by hand (not encoding/json) because a large replay writes
// millions of records; the output is byte-identical for the same record.
func AppendRecordJSON(b []byte, r *Record) []byte {
	b = append(b, `{"request_id":`...)
	b = strconv.AppendInt(b, r.RequestID, 10)
	b = append(b, `,"status":`...)
	b = strconv.AppendQuote(b, r.Status)
	b = append(b, `,"reason":`...)
	if r.Reason == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, r.Reason)
	}
	b = appendInt(b, "input_tokens", r.InputTokens)
	b = appendInt(b, "output_tokens", r.OutputTokens)
	b = appendInt(b, "cached_tokens", r.CachedTokens)
	b = appendMs(b, "send_ms", r.SendNs)
	b = appendMs(b, "arrival_ms", r.ArrivalNs)
	b = appendMs(b, "first_token_ms", r.FirstTokenNs)
	b = appendMs(b, "end_ms", r.EndNs)
	b = appendMs(b, "release_ms", r.ReleaseNs)
	v, ok := r.TTFT()
	b = appendOpt(b, "ttft_ms", v, ok)
	b = appendOpt(b, "e2e_ms", r.E2E(), true)
	v, ok = r.TPOT()
	b = appendOpt(b, "tpot_ms", v, ok)
	b = appendOptInt(b, "worker", r.Worker)
	b = appendOptInt(b, "prefill_worker", r.PrefillWorker)
	b = appendOptInt(b, "decode_worker", r.DecodeWorker)
	b = appendOpt(b, "transfer_ms", ms(r.TransferNs), r.PrefillWorker >= 0 && r.TransferNs > 0)
	b = appendInt(b, "preemptions", r.Preemptions)
	if r.SessionID < 0 {
		b = append(b, `,"session_id":null,"turn":null}`...)
		return b
	}
	b = append(b, `,"session_id":`...)
	b = strconv.AppendInt(b, r.SessionID, 10)
	b = appendInt(b, "turn", r.Turn)
	return append(b, '}')
}

func appendInt(b []byte, key string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}

// appendOptInt writes a worker index, null when negative (none).
func appendOptInt(b []byte, key string, v int) []byte {
	if v < 0 {
		b = append(b, ',', '"')
		b = append(b, key...)
		return append(b, `":null`...)
	}
	return appendInt(b, key, v)
}

func appendMs(b []byte, key string, ns int64) []byte {
	return appendOpt(b, key, ms(ns), ns != NoTime)
}

func appendOpt(b []byte, key string, v float64, ok bool) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	if !ok {
		return append(b, "null"...)
	}
	return AppendFloat(b, v)
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
	Metadata map[string]any
	Summary  Summary
	Records  []Record
	// Timeline is every engine pass when the run recorded it
	// (replay.WithTimeline), else nil. JSON leaves it out.
	Timeline *Timeline
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

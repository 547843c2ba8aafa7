package workload

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// checkSource drains src (at most len(data)+1 requests: every request uses at
// least one byte) and checks the contracts every trace reader keeps: errors
// are *DataError naming the file; IDs count up from 0; lengths are in range;
// timestamps (of the rows that have one) never go back and the first is 0
// (the time origin); HashBlockTokens is set iff HashIDs is.
func checkSource(t *testing.T, src Source, name string, limit int) {
	var r Request
	prev, timed := int64(0), false
	for i := 0; ; i++ {
		if i > limit {
			t.Fatalf("more than %d requests from %d bytes", limit, limit-1)
		}
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			if !errors.Is(src.Next(&r), io.EOF) {
				t.Fatal("io.EOF does not repeat")
			}
			return
		}
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a *DataError: %v", err)
			}
			if !strings.HasPrefix(err.Error(), name+":") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if src.Next(&r) != err {
				t.Fatal("error is not sticky")
			}
			return
		}
		switch {
		case r.ID != int64(i):
			t.Fatalf("ID %d, want %d", r.ID, i)
		case r.InputTokens < 1 || r.OutputTokens < 0:
			t.Fatalf("lengths out of range: %+v", r)
		case r.HasTimestamp && r.Timestamp < prev:
			t.Fatalf("timestamp went back: %d < %d", r.Timestamp, prev)
		case r.HasTimestamp && !timed && r.Timestamp != 0:
			t.Fatalf("the first timestamp is %d ns from the time origin, want 0", r.Timestamp)
		case !r.HasTimestamp && r.Timestamp != 0:
			t.Fatalf("timestamp %d on a row without one", r.Timestamp)
		case (r.HashIDs == nil) != (r.HashBlockTokens == 0):
			t.Fatalf("HashIDs %v with HashBlockTokens %d", r.HashIDs, r.HashBlockTokens)
		case r.Line < 1:
			t.Fatalf("line %d", r.Line)
		}
		if r.HasTimestamp {
			prev, timed = r.Timestamp, true
		}
		hs := BlockHashes(&r, 16, nil)
		if want := min(r.InputTokens, len(r.HashIDs)*r.HashBlockTokens) / 16; len(hs) != want {
			t.Fatalf("%d block hashes, want %d", len(hs), want)
		}
	}
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}` + "\n"))
	f.Add([]byte(`{"timestamp": 1.5, "input_length": 12.0, "output_length": 0}` + "\r\n\r\n" + `{"timestamp": 1, "input_length": 1, "output_length": 1}`))
	f.Add([]byte(`{"timestamp": 0, "input_length": 10}` + "\n"))
	f.Add([]byte(`{"timestamp": -1e400, "input_length": "1", "output_length": null, "hash_ids": [1.5]}`))
	f.Add([]byte("[1,2]\n{}\n\x00\xff"))
	// a UTF-8 byte order mark; lengths and a delay at int64's top
	f.Add([]byte("\xef\xbb\xbf" + `{"timestamp": 0, "input_length": 10, "output_length": 1}` + "\n"))
	f.Add([]byte(`{"timestamp": 0, "input_length": 9223372036854775807, "output_length": 9223372036854775807}` + "\n" +
		`{"timestamp": 9.2e12, "input_length": 1, "output_length": 1, "session_id": 0, "delay": 9.2e12}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSource(t, NewMooncakeSource(bytes.NewReader(data), "fuzz.jsonl"), "fuzz.jsonl", len(data)+1)
	})
}

func FuzzAzure(f *testing.F) {
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n2023-11-16 18:17:04.0319600,3180,8"))
	f.Add([]byte("GeneratedTokens,TIMESTAMP,ContextTokens\n,2023-11-16 18:17:03,1\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04,1,1\n2023-11-16 18:17:03,1,1\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023-11-16 18:17:04\",1e2,2.0\n0000-01-01 00:00:00,1,1\n9999-12-31 23:59:59.999999999,1,1\n"))
	f.Add([]byte("TIMESTAMP\n\"unterminated"))
	f.Add([]byte("\xef\xbb\xbfTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,9223372036854775807,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := NewAzureSource(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("header error is not a *DataError: %v", err)
			}
			return
		}
		checkSource(t, src, "fuzz.csv", len(data)+1)
	})
}

// FuzzBlockHashes checks the re-blocking contract on arbitrary ids: the
// number of hashes, and that changing source id p leaves exactly the engine
// blocks inside tokens [0, p·S) shared.
func FuzzBlockHashes(f *testing.F) {
	f.Add([]byte{1, 2}, uint16(1024), uint16(512), uint16(16), uint8(1))
	f.Add([]byte{7, 8}, uint16(1000), uint16(512), uint16(16), uint8(0))
	f.Add([]byte{1, 2, 3}, uint16(1536), uint16(512), uint16(48), uint8(2))
	f.Add([]byte{0, 0, 0, 0}, uint16(9), uint16(3), uint16(5), uint8(1))
	f.Fuzz(func(t *testing.T, raw []byte, input, S, bs uint16, p uint8) {
		if len(raw) == 0 || S == 0 || bs == 0 || input == 0 {
			return
		}
		ids := make([]int64, len(raw))
		for i, b := range raw {
			ids[i] = int64(b)
		}
		a := &Request{InputTokens: int(input), HashIDs: ids, HashBlockTokens: int(S)}
		ha := BlockHashes(a, int(bs), nil)
		n := min(int(input), len(ids)*int(S)) / int(bs)
		if len(ha) != n {
			t.Fatalf("%d hashes, want %d", len(ha), n)
		}
		pos := int(p) % len(ids)
		ids2 := append([]int64(nil), ids...)
		ids2[pos] += 1000 // a different id at source block pos
		hb := BlockHashes(&Request{InputTokens: int(input), HashIDs: ids2, HashBlockTokens: int(S)}, int(bs), nil)
		shared := min(n, pos*int(S)/int(bs)) // blocks with (j+1)·bs ≤ pos·S
		for j := range ha {
			if (ha[j] == hb[j]) != (j < shared) {
				t.Fatalf("block %d: equal=%v, want shared blocks [0,%d)", j, ha[j] == hb[j], shared)
			}
		}
	})
}

func FuzzLLMServingSim(f *testing.F) {
	f.Add([]byte(`{"input_toks": 3, "output_toks": 512, "arrival_time_ns": 47000000, "input_tok_ids": [9906, 1917, 13], "output_tok_ids": [1]}` + "\n"))
	f.Add([]byte(`{"input_toks": 2, "output_toks": 0, "arrival_time_ns": 5, "input_tok_ids": [1, 2]}` + "\r\n\r\n" + `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 4, "input_tok_ids": [1]}`))
	f.Add([]byte(`{"input_toks": 2, "output_toks": 1, "arrival_time_ns": 0.5, "input_tok_ids": [1]}`))
	f.Add([]byte(`{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 0}` + "\n[1]\n\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSource(t, NewLLMServingSimSource(bytes.NewReader(data), "fuzz.jsonl"), "fuzz.jsonl", len(data)+1)
	})
}

package workload

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAllLLMServingSim(content string) ([]Request, error) {
	return drain(NewLLMServingSimSource(strings.NewReader(content), "w.jsonl"))
}

// idsJSON writes the ids from..to (inclusive) followed by tail as a JSON array.
func idsJSON(from, to int, tail ...int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	for _, x := range tail {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteByte(']')
	return b.String()
}

// Three prompts at block size 16: A = ids 1..40; B = ids 1..35 then 99,
// 99 (37 tokens); C = ids 1..20 then 7 (21 tokens). B agrees with A on its
// first 35 tokens, so on full blocks 0 and 1 (tokens [0, 32)); C agrees on 20
// tokens, so on block 0 only. A has ⌊40/16⌋ = 2 full blocks, B 2, C 1.
// The first arrival is the time origin: rows at 46,926,808 and 48,426,808 ns
// are at 0 and 1.5 ms (the shared workloads start 46.9 ms in).
func TestLLMServingSim_TimedFromTheFirstRow(t *testing.T) {
	src := NewLLMServingSimSource(strings.NewReader(
		`{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 46926808, "input_tok_ids": [1]}`+"\n"+
			`{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 48426808, "input_tok_ids": [2]}`), "l.jsonl")
	rs, err := drain(src)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1_500_000}, []int64{rs[0].Timestamp, rs[1].Timestamp})
	ms, text, ok := src.(TimeOriginer).TimeOrigin()
	assert.True(t, ok)
	assert.Equal(t, "46.926808", ms)
	assert.Equal(t, "46926808 ns", text)
}

func TestLLMServingSim_SharedPrefixBlocks(t *testing.T) {
	content := `{"input_toks": 40, "output_toks": 5, "arrival_time_ns": 0, "input_tok_ids": ` + idsJSON(1, 40) + `}` + "\n" +
		`{"input_toks": 37, "output_toks": 1, "arrival_time_ns": 1500000, "input_tok_ids": ` + idsJSON(1, 35, 99, 99) + `, "output_tok_ids": [4]}` + "\n\n" +
		`{"input_toks": 21, "output_toks": 2, "arrival_time_ns": 1500000, "input_tok_ids": ` + idsJSON(1, 20, 7) + `}`
	rs, err := readAllLLMServingSim(content)
	require.NoError(t, err)
	require.Len(t, rs, 3)
	assert.Equal(t, []int64{0, 1_500_000, 1_500_000}, []int64{rs[0].Timestamp, rs[1].Timestamp, rs[2].Timestamp})
	assert.Equal(t, []int{40, 37, 21}, []int{rs[0].InputTokens, rs[1].InputTokens, rs[2].InputTokens})
	assert.Equal(t, []int{5, 1, 2}, []int{rs[0].OutputTokens, rs[1].OutputTokens, rs[2].OutputTokens})
	assert.Equal(t, []int{1, 2, 4}, []int{rs[0].Line, rs[1].Line, rs[2].Line})
	for _, r := range rs {
		assert.Equal(t, 1, r.HashBlockTokens)
		assert.Equal(t, int64(-1), r.SessionID)
	}
	a, b, c := BlockHashes(&rs[0], 16, nil), BlockHashes(&rs[1], 16, nil), BlockHashes(&rs[2], 16, nil)
	require.Len(t, a, 2)
	require.Len(t, b, 2)
	require.Len(t, c, 1)
	assert.Equal(t, a, b)
	assert.Equal(t, a[0], c[0])
	// block size 32: A and B share block 0 (tokens [0, 32)); C has no full block
	assert.Equal(t, BlockHashes(&rs[0], 32, nil)[0], BlockHashes(&rs[1], 32, nil)[0])
	assert.Empty(t, BlockHashes(&rs[2], 32, nil))
}

func TestLLMServingSim_Errors(t *testing.T) {
	const ok = `{"input_toks": 2, "output_toks": 1, "arrival_time_ns": 10, "input_tok_ids": [1, 2]}` + "\n"
	cases := []struct{ name, content, want string }{
		{"missing ids", `{"input_toks": 2, "output_toks": 1, "arrival_time_ns": 0}`,
			"w.jsonl:1: input_tok_ids: missing: the prompt's token ids are required"},
		{"ids shorter than input_toks", `{"input_toks": 3, "output_toks": 1, "arrival_time_ns": 0, "input_tok_ids": [1, 2]}`,
			"w.jsonl:1: input_tok_ids: holds 2 ids, but input_toks is 3"},
		{"fractional id", `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 0, "input_tok_ids": [1.5]}`,
			"w.jsonl:1: input_tok_ids: must be an array of integers"},
		{"zero output_toks on line 2", ok + `{"input_toks": 2, "output_toks": 0, "arrival_time_ns": 20, "input_tok_ids": [1, 2]}`,
			"w.jsonl:2: output_toks: must be ≥ 1, got 0 (vLLM refuses max_tokens < 1: a request generates at least one token)"},
		{"missing output_toks on line 2", ok + `{"input_toks": 2, "arrival_time_ns": 20, "input_tok_ids": [1, 2]}`,
			"w.jsonl:2: output_toks: missing"},
		{"input_toks 0", `{"input_toks": 0, "output_toks": 1, "arrival_time_ns": 0, "input_tok_ids": []}`,
			"w.jsonl:1: input_toks: must be ≥ 1, got 0"},
		{"fractional arrival", `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 0.5, "input_tok_ids": [1]}`,
			"w.jsonl:1: arrival_time_ns: must be an integer number of ns, got 0.5"},
		{"negative arrival", `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": -1, "input_tok_ids": [1]}`,
			"w.jsonl:1: arrival_time_ns: must be ≥ 0, got -1"},
		{"arrival beyond int64", `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 99999999999999999999, "input_tok_ids": [1]}`,
			"w.jsonl:1: arrival_time_ns: out of range: 99999999999999999999"},
		{"arrival going backwards", ok + `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 9, "input_tok_ids": [1]}`,
			"w.jsonl:2: arrival_time_ns: goes backwards: 9 ns is before 10 ns on line 1"},
		{"not an object", "[1, 2]", "w.jsonl:1: row is not a JSON object (the file starts with a JSON array: a trace is JSON lines, one object per line)"},
		// a Mooncake row given as an LLMServingSim trace: its format is named
		{"a Mooncake row", `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1]}`,
			`w.jsonl:1: arrival_time_ns: missing; the row has "hash_ids", "input_length", "output_length", "timestamp", ` +
				"which this format does not read (its keys: arrival_time_ns, input_toks, output_toks, input_tok_ids) " +
				"(the row is a Mooncake trace's: traffic.source.type mooncake)"},
		{"duplicate arrival", `{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 0, "arrival_time_ns": 5, "input_tok_ids": [1]}`,
			`w.jsonl:1: arrival_time_ns: given twice in the row ("arrival_time_ns" and "arrival_time_ns"): JSON leaves which one counts undefined; keep one`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAllLLMServingSim(tc.content)
			require.Error(t, err)
			var de *DataError
			require.True(t, errors.As(err, &de), "%T", err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// The shared LLMServingSim ShareGPT workloads (../shared/data/real): 300
// requests each; the prompts' full 16-token blocks found among earlier
// prompts, counted per request as min(longest common prefix with an earlier
// prompt, prompt − 1) / 16 whole blocks (a prompt's last block is always
// recomputed), total 19,520 tokens in 32 requests (Llama file) and 20,448 in
// 32 (Qwen file) — counted independently by comparing the token ids of every
// earlier prompt (Python, once).
func TestLLMServingSim_SharedWorkloads(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "real", "llmservingsim", "workloads")
	for _, tc := range []struct {
		name         string
		hits, tokens int
		inputTokens  int64
	}{
		{"sharegpt-llama-3.1-8b-300-sps10.jsonl", 32, 19520, 257239},
		{"sharegpt-qwen3-32b-300-sps10.jsonl", 32, 20448, 258691},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("shared workload %s absent", path)
			}
			src, closer, err := OpenLLMServingSim(path)
			require.NoError(t, err)
			defer closer.Close()
			seen := map[uint64]bool{}
			var r Request
			n, hits, tokens, input := 0, 0, 0, int64(0)
			for {
				err := src.Next(&r)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				hs := BlockHashes(&r, 16, nil)
				k := 0
				for k < len(hs) && k < (r.InputTokens-1)/16 && seen[hs[k]] {
					k++
				}
				if k > 0 {
					hits++
					tokens += 16 * k
				}
				for _, h := range hs {
					seen[h] = true
				}
				input += int64(r.InputTokens)
				n++
			}
			assert.Equal(t, 300, n)
			assert.Equal(t, tc.inputTokens, input)
			assert.Equal(t, tc.hits, hits)
			assert.Equal(t, tc.tokens, tokens)
		})
	}
}

package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Messages quote a bad value in at most 64 bytes, so that a data file read
// as a config, or a megabyte-long name, cannot flood the message.
func TestMessagesQuoteShortly(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	cases := []struct {
		name, json, field, msg string
	}{
		{"an unknown key", `{"engine": {"` + long + `": 1}}`, "engine." + strings.Repeat("x", 64) + "…", "unknown field"},
		{"an enumeration", `{"engine": {"model": "m", "system": "s", "backend": "` + long + `"}}`, "engine.backend",
			"is 100000 bytes long, more than any name or path (at most 4096)"},
		{"a wrong type", `{"engine": {"model": "m", "system": "s", "scheduler": {"max_num_seqs": "` + strings.Repeat("y", 200) + `"}}}`,
			"engine.scheduler.max_num_seqs", `expected an integer, got the string "` + strings.Repeat("y", 64) + `"…`},
		{"an enumeration under the length bound", `{"engine": {"model": "m", "system": "s", "backend": "` + strings.Repeat("z", 100) + `"}}`,
			"engine.backend", `"` + strings.Repeat("z", 64) + `"… is not supported (one of vllm, trtllm, sglang)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.json))
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
			assert.Contains(t, ce.Msg, tc.msg)
			assert.Less(t, len(err.Error()), 400)
		})
	}
}

// Integers past int64 say so (they used to read "expected an integer"), and a
// seed takes the whole uint64 range.
func TestIntegersOutOfRange(t *testing.T) {
	spec := func(numRequests, seed string) string {
		return `{"engine": {"model": "m", "system": "s"}, "traffic": {"source": {"type": "synthetic", "num_requests": ` +
			numRequests + `, "isl": 1, "osl": 1}, "load": {"mode": "concurrency", "concurrency": 1}}, "execution": {"seed": ` + seed + `}}`
	}
	_, err := Decode([]byte(spec("100000000000000000000", "0")))
	assert.EqualError(t, err, "traffic.source.num_requests: the integer 100000000000000000000 is out of range (at most 2^63 − 1)")
	s, err := Decode([]byte(spec("1", "18446744073709551615")))
	require.NoError(t, err)
	assert.Equal(t, uint64(18446744073709551615), s.Execution.Seed)
	s, err = DecodeYAML([]byte("engine: {model: m, system: s}\ntraffic: {source: {type: synthetic, num_requests: 1, isl: 1, osl: 1}, load: {mode: concurrency, concurrency: 1}}\nexecution: {seed: 18446744073709551615}\n"))
	require.NoError(t, err)
	assert.Equal(t, uint64(18446744073709551615), s.Execution.Seed)
	_, err = Decode([]byte(spec("1", "18446744073709551616")))
	assert.EqualError(t, err, "execution.seed: the integer 18446744073709551616 is out of range (at most 2^63 − 1)")
}

// A gamma process's cv is bounded where its shape 1/cv² stays sampleable;
// the message says why (it used to read "must be finite and > 0, got 1e-200").
func TestGammaCV(t *testing.T) {
	yml := func(cv string) []byte {
		return []byte("engine: {model: m, system: s}\ntraffic: {source: {type: synthetic, num_requests: 1, isl: 1, osl: 1}, load: {mode: rate, rate_rps: 1, arrival: gamma, cv: " + cv + "}}\n")
	}
	for _, cv := range []string{"1e-200", "0.0009", "1001", "1e200"} {
		_, err := DecodeYAML(yml(cv))
		var ce *Error
		require.ErrorAs(t, err, &ce, cv)
		assert.Equal(t, "traffic.load.cv", ce.Field)
		assert.Contains(t, ce.Msg, "must be in [0.001, 1000]")
	}
	for _, cv := range []string{"0.001", "1", "1000"} {
		_, err := DecodeYAML(yml(cv))
		assert.NoError(t, err, cv)
	}
}

// Scheduler limits and roofline efficiencies are bounded where the engine's
// arithmetic stays exact (and a pass time finite).
func TestSchedulerAndEfficiencyBounds(t *testing.T) {
	yml := func(engine string) []byte {
		return []byte("engine: {model: m, system: s, " + engine + "}\ntraffic: {source: {type: synthetic, num_requests: 1, isl: 1, osl: 1}, load: {mode: concurrency, concurrency: 1}}\n")
	}
	for _, c := range []struct{ engine, field, msg string }{
		{"scheduler: {max_num_seqs: 16777217, max_num_batched_tokens: 16777217}", "engine.scheduler.max_num_seqs", "must be ≤ 16777216, got 16777217"},
		{"scheduler: {max_num_batched_tokens: 4611686018427387904}", "engine.scheduler.max_num_batched_tokens", "must be ≤ 1073741824, got 4611686018427387904"},
		{"scheduler: {max_model_len: 4611686018427387904}", "engine.scheduler.max_model_len", "must be ≤ 1073741824, got 4611686018427387904"},
		{"perf: {source: roofline, compute_efficiency: 1.0e-300}", "engine.perf.compute_efficiency", "must be in [0.001, 1], got 1e-300"},
		{"perf: {source: roofline, memory_efficiency: 0.0009}", "engine.perf.memory_efficiency", "must be in [0.001, 1], got 0.0009"},
	} {
		_, err := DecodeYAML(yml(c.engine))
		var ce *Error
		require.ErrorAs(t, err, &ce, c.engine)
		assert.Equal(t, c.field, ce.Field)
		assert.Equal(t, c.msg, ce.Msg)
	}
}

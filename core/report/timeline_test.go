package report

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The column layout of a timeline: every column 8-byte aligned, values
// little-endian in pass order, times in ms.
func TestTimelineColumns(t *testing.T) {
	tl := &Timeline{Pools: []string{"prefill", "decode"}, KVBlocksTotal: []int{100, 200}, Passes: []Pass{
		{Pool: 0, Worker: 2, StartNs: 0, EndNs: 7_120_000, PrefillTokens: 512, PrefillRequests: 1, Running: 1, Waiting: 2, KVBlocksUsed: 32},
		{Pool: 1, Worker: 0, StartNs: 7_120_000, EndNs: 9_320_500, DecodeRequests: 3, Running: 3, KVBlocksUsed: 70, KVBlocksCached: 5},
		{Pool: 0, Worker: 1, StartNs: 8_000_000, EndNs: 8_500_000, PrefillTokens: 1 << 40},
	}}
	c := tl.Columns()
	require.Equal(t, 3, c.N)
	col := map[string]Column{}
	for _, k := range c.Columns {
		col[k.Name] = k
		assert.Zero(t, k.Offset%8, k.Name)
	}
	le := binary.LittleEndian
	f64 := func(name string, i int) float64 {
		return math.Float64frombits(le.Uint64(c.Data[col[name].Offset+8*i:]))
	}
	i64 := func(name string, i int) int64 { return int64(le.Uint64(c.Data[col[name].Offset+8*i:])) }
	i32 := func(name string, i int) int32 { return int32(le.Uint32(c.Data[col[name].Offset+4*i:])) }
	assert.Equal(t, []byte{0, 1, 0}, c.Data[col["pool"].Offset:col["pool"].Offset+3])
	assert.Equal(t, int32(2), i32("worker", 0))
	assert.Equal(t, 7.12, f64("end_ms", 0))
	assert.Equal(t, 9.3205, f64("end_ms", 1))
	assert.Equal(t, int64(1<<40), i64("prefill_tokens", 2))
	assert.Equal(t, int32(3), i32("decode_requests", 1))
	assert.Equal(t, int32(2), i32("waiting", 0))
	assert.Equal(t, int64(5), i64("kv_blocks_cached", 1))
	assert.Equal(t, "|u1", col["pool"].Dtype)
	assert.Equal(t, []int{100, 200}, c.KVBlocksTotal)
}

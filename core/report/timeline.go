package report

import (
	"encoding/binary"
	"math"
)

// Pass is one engine pass of one worker, as the timeline records it: what the
// scheduler formed at the pass start and how long the perf model priced it.
type Pass struct {
	Pool   uint8 // index into Timeline.Pools
	Worker int32 // the worker's index in its pool (as in Record.Worker)
	// StartNs and EndNs bound the pass on the virtual clock (ns from the
	// start of the replay); EndNs − StartNs is the pass time.
	StartNs, EndNs int64
	// PrefillTokens is the prompt tokens computed, over PrefillRequests
	// chunks; DecodeRequests decode one token each.
	PrefillTokens   int64
	PrefillRequests int32
	DecodeRequests  int32
	// Running is the worker's running set and Waiting its queue after
	// scheduling (engine.PassStats).
	Running, Waiting int32
	// KVBlocksUsed is the KV blocks held by requests at the pass start;
	// KVBlocksCached the unreferenced blocks still holding prefix-cache
	// content. Capacity: Timeline.KVBlocksTotal of the pool.
	KVBlocksUsed, KVBlocksCached int64
}

// Timeline is every pass of a replay, recorded when asked for
// (replay.WithTimeline): Passes in start order (time, then global worker
// order), Pools the pool names a Pass.Pool indexes ("aggregated", or
// "prefill" and "decode"), KVBlocksTotal each pool's KV capacity per worker
// in blocks.
type Timeline struct {
	Pools         []string `json:"pools"`
	KVBlocksTotal []int    `json:"kv_blocks_total"`
	Passes        []Pass   `json:"-"`
}

// TimelineColumns is a Timeline as little-endian column arrays (numpy dtype
// strings), the way Columnar carries records: pool (|u1, an index into
// Pools), worker (<i4), start_ms and end_ms (<f8, ms), prefill_tokens (<i8),
// prefill_requests, decode_requests, running, waiting (<i4), kv_blocks_used
// and kv_blocks_cached (<i8). Offsets are from the start of Data.
type TimelineColumns struct {
	N             int      `json:"n"`
	Columns       []Column `json:"columns"`
	Pools         []string `json:"pools"`
	KVBlocksTotal []int    `json:"kv_blocks_total"`
	Data          []byte   `json:"-"`
}

// Columns lays the passes out column by column, in pass order.
func (t *Timeline) Columns() *TimelineColumns {
	ps := t.Passes
	n := len(ps)
	c := &TimelineColumns{N: n, Pools: t.Pools, KVBlocksTotal: t.KVBlocksTotal}
	type col struct {
		name, dtype string
		size        int
		put         func(b []byte, p *Pass)
	}
	le := binary.LittleEndian
	i32 := func(name string, get func(p *Pass) int32) col {
		return col{name, "<i4", 4, func(b []byte, p *Pass) { le.PutUint32(b, uint32(get(p))) }}
	}
	i64 := func(name string, get func(p *Pass) int64) col {
		return col{name, "<i8", 8, func(b []byte, p *Pass) { le.PutUint64(b, uint64(get(p))) }}
	}
	msCol := func(name string, get func(p *Pass) int64) col {
		return col{name, "<f8", 8, func(b []byte, p *Pass) { le.PutUint64(b, math.Float64bits(ms(get(p)))) }}
	}
	cols := []col{
		{"pool", "|u1", 1, func(b []byte, p *Pass) { b[0] = p.Pool }},
		i32("worker", func(p *Pass) int32 { return p.Worker }),
		msCol("start_ms", func(p *Pass) int64 { return p.StartNs }),
		msCol("end_ms", func(p *Pass) int64 { return p.EndNs }),
		i64("prefill_tokens", func(p *Pass) int64 { return p.PrefillTokens }),
		i32("prefill_requests", func(p *Pass) int32 { return p.PrefillRequests }),
		i32("decode_requests", func(p *Pass) int32 { return p.DecodeRequests }),
		i32("running", func(p *Pass) int32 { return p.Running }),
		i32("waiting", func(p *Pass) int32 { return p.Waiting }),
		i64("kv_blocks_used", func(p *Pass) int64 { return p.KVBlocksUsed }),
		i64("kv_blocks_cached", func(p *Pass) int64 { return p.KVBlocksCached }),
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
		for i := range ps {
			k.put(c.Data[off+i*k.size:], &ps[i])
		}
	}
	return c
}

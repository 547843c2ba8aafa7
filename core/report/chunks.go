package report

import (
	"encoding/binary"
	"fmt"
	"io"
)

// ChunkTimes is when the client received each chunk of each request's
// response (replay.WithTokenGaps): the records' times as one flat column.
// A chunk is the tokens the client received at one instant (an engine that
// returns several tokens of a step at once, speculative decoding or
// TensorRT-LLM's stream_interval, sends them as one streamed message), so a
// request's times strictly increase and its gaps are AIPerf's
// inter_chunk_latency (aiperf/metrics/types/inter_chunk_latency_metric.py:
// the differences of consecutive responses' timestamps).
type ChunkTimes struct {
	// Start and Count, one of each per record (in send order, as the
	// records): record i's chunk times are Times[Start[i]:Start[i]+Count[i]].
	Start []int64
	Count []int32
	// Times is every chunk's receive time, ns on the replay's clock, a
	// request's together, requests in the order they ended.
	Times []int64
}

// Of is record i's chunk times.
func (c *ChunkTimes) Of(i int) []int64 { return c.Times[c.Start[i] : c.Start[i]+int64(c.Count[i])] }

// Add appends record i's chunk times ns (a record's once; records added in
// any order, each index below the count of records).
func (c *ChunkTimes) Add(i int, ns []int64) {
	c.grow(i + 1)
	c.Start[i], c.Count[i] = int64(len(c.Times)), int32(len(ns))
	c.Times = append(c.Times, ns...)
}

// Cut drops the first k records (a load generator's warm-up) and pads the
// spans to n records (the later ones without any chunk).
func (c *ChunkTimes) Cut(k, n int) {
	c.grow(k + n)
	c.Start, c.Count = c.Start[k:k+n], c.Count[k:k+n]
}

// grow pads the spans to at least n records (the added ones without any chunk).
func (c *ChunkTimes) grow(n int) {
	if len(c.Start) < n {
		c.Start = append(c.Start, make([]int64, n-len(c.Start))...)
		c.Count = append(c.Count, make([]int32, n-len(c.Count))...)
	}
}

// ChunkTimesBytes is the memory WithTokenGaps adds per output token: one
// int64 receive time (a chunk of several tokens takes one; the estimate
// counts every token); ChunkSpanBytes per request (its Start and Count).
const (
	ChunkTimesBytes = 8
	ChunkSpanBytes  = 12
)

// TimesColumn is where a table's flat chunk times are in its data (N int64
// values from Offset): the rows' chunk_offset and chunk_count columns index
// it.
type TimesColumn struct {
	Offset int64 `json:"offset"`
	N      int64 `json:"n"`
}

// chunkReader reads a row's chunk times from a table's data.
type chunkReader struct {
	data io.ReaderAt
	col  TimesColumn
	buf  []byte
	ns   []int64
}

// times is the count chunk times from index start.
func (c *chunkReader) times(start, count int64) ([]int64, error) {
	if start < 0 || count < 0 || start+count > c.col.N {
		return nil, fmt.Errorf("chunk times [%d, %d) outside the %d given", start, start+count, c.col.N)
	}
	if need := int(count) * 8; cap(c.buf) < need {
		c.buf = make([]byte, need)
	}
	c.buf = c.buf[:count*8]
	if _, err := c.data.ReadAt(c.buf, c.col.Offset+start*8); err != nil {
		return nil, fmt.Errorf("chunk times: %w", err)
	}
	c.ns = c.ns[:0]
	for i := range count {
		c.ns = append(c.ns, int64(binary.LittleEndian.Uint64(c.buf[i*8:])))
	}
	return c.ns, nil
}

// appendInterChunkLatency writes AIPerf's inter_chunk_latency of chunk
// times ns (at least two): each gap in ms, as AIPerf's record exporter
// converts its ns (MetricRecordDict.to_display_dict: value × (1000 / 10⁹)
// per element of a list metric), unit "ms".
func appendInterChunkLatency(b []byte, first *bool, ns []int64) []byte {
	b = append(metricStart(b, first, "inter_chunk_latency"), '[')
	for i := 1; i < len(ns); i++ {
		if i > 1 {
			b = append(b, ", "...)
		}
		b = AppendPyFloat(b, float64(ns[i]-ns[i-1])*(1000.0/1e9))
	}
	return metricEnd(append(b, ']'), "ms")
}

package aic

import "fmt"

// TableNCCL is the measured NCCL collectives table (comm/nccl/<NCCL
// version>/nccl_perf.parquet): all_gather, reduce_scatter, all_reduce and
// alltoall of message_size elements over 2, 4 and 8 GPUs.
const TableNCCL = "nccl_perf"

// ncclBackend is the folder under comm/ that holds the NCCL tables; their
// versions are NCCL's, not the serving framework's.
const ncclBackend = "nccl"

type ncclRow struct {
	Dtype       string  `parquet:"nccl_dtype,optional"`
	NumGPUs     int64   `parquet:"num_gpus,optional"`
	MessageSize int64   `parquet:"message_size,optional"`
	Op          string  `parquet:"op_name,optional"`
	Latency     float64 `parquet:"latency,optional"`
}

type ncclKey struct {
	dtype, op  string
	gpus, size int64
}

// loadNCCL keeps the 16-bit ("half") rows: the MoE layers move bf16
// hidden states.
func loadNCCL(path string) ([]ncclRow, error) {
	return loadRows(path, func(r *ncclRow) (ncclKey, bool) {
		return ncclKey{r.Dtype, r.Op, r.NumGPUs, r.MessageSize},
			r.Dtype == "half" && r.NumGPUs > 1 && r.MessageSize > 0 && validLatency(r.Latency)
	})
}

// newNCCLCurve picks op's rows over gpus GPUs: latency (s) over the whole
// gathered or scattered buffer (bf16 elements), capped by any larger size's
// time (padEnvelope), priced like the all-reduce (allReduceCurve.Seconds)
// with one ring phase. Errors: the table has no such rows (the message
// names the op and the GPU counts it has).
func newNCCLCurve(rows []ncclRow, op string, gpus int64, bw float64) (*allReduceCurve, error) {
	c := &allReduceCurve{gpus: gpus, bw: bw, phases: 1}
	var sizes []float64
	have := map[int64]bool{}
	for i := range rows {
		r := &rows[i]
		if r.Op != op {
			continue
		}
		have[r.NumGPUs] = true
		if r.NumGPUs == gpus {
			sizes = append(sizes, float64(r.MessageSize))
		}
	}
	if len(sizes) == 0 {
		var counts []int64
		for _, g := range []int64{2, 4, 8, 16, 32, 64, 72} {
			if have[g] {
				counts = append(counts, g)
			}
		}
		return nil, fmt.Errorf("no %s rows over %d GPUs (measured: %v)", op, gpus, counts)
	}
	c.sizes = sortedUnique(sizes)
	c.sec = make([]float64, len(c.sizes))
	for i := range rows {
		r := &rows[i]
		if r.Op == op && r.NumGPUs == gpus {
			c.sec[indexOf(c.sizes, float64(r.MessageSize))] = r.Latency * 1e-3
		}
	}
	padEnvelope(c.sec) // a message can be padded to a larger measured one
	return c, nil
}

package hardware

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadYAML: any bytes given as a system YAML read to a system inside
// Validate's bounds, or to an error naming the file; never a panic.
func FuzzReadYAML(f *testing.F) {
	f.Add([]byte(minimalYAML))
	f.Add([]byte("gpu: {mem_bw: 1e-300, mem_capacity: 17179869184, bfloat16_tc_flops: 5e13}\nnode: {num_gpus_per_node: 4, intra_node_bw: 3e10}\nmisc: {other_mem: 1073741824}\n"))
	// values written in other units (GB/s, GiB, TFLOP/s, µs, Gbit/s, %): refused with a hint
	f.Add([]byte("gpu: {mem_bw: 3350, mem_capacity: 80, bfloat16_tc_flops: 989, fp8_tc_flops: 1978, mem_empirical_constant_latency: 3, mem_bw_empirical_scaling_factor: 80}\n" +
		"node: {num_gpus_per_node: 8, intra_node_bw: 450, inter_node_bw: 400}\nmisc: {other_mem: 3, nccl_mem: {2: 342}}\n"))
	// a real system, h100_sxm.yaml's values
	f.Add([]byte("gpu: {mem_bw: 3350000000000, mem_bw_empirical_scaling_factor: 0.8, mem_empirical_constant_latency: 0.000003, mem_capacity: 85899345920, bfloat16_tc_flops: 989000000000000, fp8_tc_flops: 1978000000000000, sm_version: 90}\n" +
		"node: {num_gpus_per_node: 8, inter_node_bw: 50000000000, intra_node_bw: 450000000000}\nmisc: {nccl_mem: {1: 0, 2: 358612992, 4: 411041792, 8: 411041792}, other_mem: 3758096384}\n"))
	f.Add([]byte("a: &a [x, x, x]\nb: &b [*a, *a, *a]\ngpu: *b\n"))
	f.Add([]byte("misc: {nccl_mem: {-1: 5, 2: 99999999999999999999}}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz_gpu.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadYAML(path)
		if err != nil {
			return
		}
		if err := s.Validate(path); err != nil {
			t.Fatalf("accepted outside the bounds: %v", err)
		}
		if f := s.Flops("fp8"); !(f > 0) || math.IsInf(f, 0) {
			t.Fatalf("flops %v", f)
		}
	})
}

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
	f.Add([]byte("gpu: {mem_bw: 1e-300, mem_capacity: 2048, bfloat16_tc_flops: 5e12}\nnode: {num_gpus_per_node: 4, intra_node_bw: 300}\nmisc: {other_mem: 7}\n"))
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

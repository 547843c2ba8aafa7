package hardware

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ListFile reads a system YAML as Lookup would: its figures, or the reason.
func TestListFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "my_gpu.yaml")
	require.NoError(t, os.WriteFile(good, []byte("gpu: {mem_bw: 2e12, mem_capacity: 85899345920, bfloat16_tc_flops: 3e14}\n"+
		"node: {num_gpus_per_node: 4, intra_node_bw: 1e11}\nmisc: {other_mem: 0}\n"), 0o644))
	broken := filepath.Join(dir, "broken.yml")
	require.NoError(t, os.WriteFile(broken, []byte("gpu: {}\n"), 0o644))

	assert.Equal(t, Listing{Name: "my_gpu", Source: good, Supported: true, MemCapacity: 80 << 30, MemBW: 2e12,
		BF16Flops: 3e14, GPUsPerNode: 4}, ListFile(good, "my_gpu"))
	l := ListFile(broken, "broken")
	assert.False(t, l.Supported)
	assert.Contains(t, l.Reason, "gpu.mem_bw is missing")
	for file, want := range map[string]string{"a.yaml": "a", "b.yml": "b", "c.json": ""} {
		got, ok := NameOfFile(file)
		assert.Equal(t, want, got)
		assert.Equal(t, want != "", ok)
	}
	assert.Len(t, BuiltinListings(), len(BuiltinNames()))
}

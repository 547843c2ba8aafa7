package hardware

import (
	"path/filepath"
	"strings"
)

// Listing is one GPU system a replay can name: a built-in or a system YAML
// in a systems folder, with its headline figures.
type Listing struct {
	// Name is what engine.system takes ("h100_sxm").
	Name string `json:"name"`
	// Source is "built-in" or the YAML path.
	Source string `json:"source"`
	// Supported is false when the YAML does not read; Reason says why.
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
	// HBM size (bytes) and bandwidth (B/s), dense bf16 and fp8 tensor-core
	// peaks (FLOP/s; fp8 0 without fp8 tensor cores), GPUs per node.
	MemCapacity int64   `json:"mem_capacity_bytes,omitempty"`
	MemBW       float64 `json:"mem_bw_bytes_per_s,omitempty"`
	BF16Flops   float64 `json:"bf16_flops,omitempty"`
	FP8Flops    float64 `json:"fp8_flops,omitempty"`
	GPUsPerNode int     `json:"gpus_per_node,omitempty"`
}

// BuiltinListings lists the built-in systems, sorted by name.
func BuiltinListings() []Listing {
	var out []Listing
	for _, name := range BuiltinNames() {
		s, _ := Builtin(name)
		out = append(out, listing(s, "built-in"))
	}
	return out
}

// NameOfFile is the system name a systems folder's file stands for (its name
// without .yaml or .yml), and false for any other file.
func NameOfFile(file string) (string, bool) {
	ext := filepath.Ext(file)
	if ext != ".yaml" && ext != ".yml" {
		return "", false
	}
	return strings.TrimSuffix(file, ext), true
}

// ListFile reads the system YAML at path as Lookup would and describes it:
// its figures, or ReadYAML's error.
func ListFile(path, name string) Listing {
	s, err := ReadYAML(path)
	if err != nil {
		return Listing{Name: name, Source: path, Reason: err.Error()}
	}
	return listing(s, path)
}

func listing(s *System, source string) Listing {
	return Listing{Name: s.Name, Source: source, Supported: true, MemCapacity: s.MemCapacity, MemBW: s.MemBW,
		BF16Flops: s.BF16Flops, FP8Flops: s.FP8Flops, GPUsPerNode: s.GPUsPerNode}
}

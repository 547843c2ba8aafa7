package hardware

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aisimulate/aisimulate/core/model"
)

// systemYAML is the part of an AIConfigurator system file that System needs.
// Pointers distinguish a missing field from zero.
type systemYAML struct {
	GPU struct {
		MemBW           *float64 `yaml:"mem_bw"`
		MemBWScaling    *float64 `yaml:"mem_bw_empirical_scaling_factor"`
		MemConstLatency *float64 `yaml:"mem_empirical_constant_latency"`
		MemCapacity     *int64   `yaml:"mem_capacity"`
		BF16Flops       *float64 `yaml:"bfloat16_tc_flops"`
		FP8Flops        *float64 `yaml:"fp8_tc_flops"`
		FP4Flops        *float64 `yaml:"fp4_tc_flops"`
		SMVersion       *int     `yaml:"sm_version"`
	} `yaml:"gpu"`
	Node struct {
		GPUsPerNode *int     `yaml:"num_gpus_per_node"`
		IntraNodeBW *float64 `yaml:"intra_node_bw"`
		InterNodeBW *float64 `yaml:"inter_node_bw"`
	} `yaml:"node"`
	Misc struct {
		NCCLMem     map[int]int64 `yaml:"nccl_mem"`
		OtherMem    *int64        `yaml:"other_mem"`
		NCCLVersion string        `yaml:"nccl_version"`
	} `yaml:"misc"`
}

// ReadYAML reads a system spec in the AIConfigurator schema
// (aic-core/src/aiconfigurator_core/systems/<name>.yaml). The System is named
// after the file without its extension. Required: gpu.mem_bw,
// gpu.mem_capacity, gpu.bfloat16_tc_flops (all > 0), node.intra_node_bw,
// node.num_gpus_per_node (> 0), misc.other_mem (≥ 0). Optional:
// gpu.fp8_tc_flops, gpu.fp4_tc_flops, gpu.sm_version and node.inter_node_bw (0 when absent), gpu.mem_bw_empirical_scaling_factor
// (1 when absent), gpu.mem_empirical_constant_latency (0), misc.nccl_mem
// (empty), misc.nccl_version (""). Unknown fields are ignored: the files carry many that the
// simulator does not use (but a missing required field names a key of its
// section that looks like a misspelling of it: missing). Every value must lie within the physical bounds
// of System.Validate (bounds.go: at least 1 GB/s for a bandwidth, 1 TFLOP/s
// for a FLOP rate, 1 GiB of memory), and the file within
// model.MaxConfigFileBytes. Errors name the file and the field, and the
// unit the field is in.
func ReadYAML(path string) (*System, error) {
	data, err := model.ReadConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	var y systemYAML
	if err := yaml.Unmarshal(data, &y); err != nil {
		return nil, fmt.Errorf("hardware: %s: %w", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	s := &System{Name: name, MemBWScaling: 1, NCCLMem: map[int]int64{}}

	posF := func(field string, v *float64, dst *float64) error {
		if v == nil {
			return missing(path, field, data)
		}
		if !(*v > 0) {
			return fmt.Errorf("hardware: %s: field %s = %g, want > 0", path, field, *v)
		}
		*dst = *v
		return nil
	}
	for _, f := range []struct {
		field string
		v     *float64
		dst   *float64
	}{
		{"gpu.mem_bw", y.GPU.MemBW, &s.MemBW},
		{"gpu.bfloat16_tc_flops", y.GPU.BF16Flops, &s.BF16Flops},
		{"node.intra_node_bw", y.Node.IntraNodeBW, &s.IntraNodeBW},
	} {
		if err := posF(f.field, f.v, f.dst); err != nil {
			return nil, err
		}
	}
	if y.GPU.MemCapacity == nil {
		return nil, missing(path, "gpu.mem_capacity", data)
	}
	if *y.GPU.MemCapacity <= 0 {
		return nil, fmt.Errorf("hardware: %s: field gpu.mem_capacity = %d, want > 0", path, *y.GPU.MemCapacity)
	}
	s.MemCapacity = *y.GPU.MemCapacity
	if y.Node.GPUsPerNode == nil {
		return nil, missing(path, "node.num_gpus_per_node", data)
	}
	if *y.Node.GPUsPerNode <= 0 {
		return nil, fmt.Errorf("hardware: %s: field node.num_gpus_per_node = %d, want > 0", path, *y.Node.GPUsPerNode)
	}
	s.GPUsPerNode = *y.Node.GPUsPerNode
	if y.Misc.OtherMem == nil {
		return nil, missing(path, "misc.other_mem", data)
	}
	if *y.Misc.OtherMem < 0 {
		return nil, fmt.Errorf("hardware: %s: field misc.other_mem = %d, want ≥ 0", path, *y.Misc.OtherMem)
	}
	s.OtherMem = *y.Misc.OtherMem
	s.NCCLVersion = y.Misc.NCCLVersion
	if v := y.GPU.SMVersion; v != nil {
		if *v < 0 || *v > 1000 {
			return nil, fmt.Errorf("hardware: %s: field gpu.sm_version = %d, want in [0, 1000]", path, *v)
		}
		s.SMVersion = *v
	}

	for _, f := range []struct {
		field string
		v     *float64
		dst   *float64
	}{{"gpu.fp8_tc_flops", y.GPU.FP8Flops, &s.FP8Flops}, {"gpu.fp4_tc_flops", y.GPU.FP4Flops, &s.FP4Flops},
		{"node.inter_node_bw", y.Node.InterNodeBW, &s.InterNodeBW}} {
		if f.v == nil {
			continue
		}
		if !(*f.v >= 0) {
			return nil, fmt.Errorf("hardware: %s: field %s = %g, want ≥ 0", path, f.field, *f.v)
		}
		*f.dst = *f.v
	}
	if v := y.GPU.MemBWScaling; v != nil {
		s.MemBWScaling = *v // in (0, 1]: Validate
	}
	if v := y.GPU.MemConstLatency; v != nil {
		if *v < 0 {
			return nil, fmt.Errorf("hardware: %s: field gpu.mem_empirical_constant_latency = %g, want ≥ 0", path, *v)
		}
		s.MemConstLatency = *v
	}
	for tp, m := range y.Misc.NCCLMem {
		if tp <= 0 || m < 0 {
			return nil, fmt.Errorf("hardware: %s: field misc.nccl_mem[%d] = %d, want TP > 0 and bytes ≥ 0", path, tp, m)
		}
		s.NCCLMem[tp] = m
	}
	if err := s.Validate(path); err != nil {
		return nil, err
	}
	return s, nil
}

// Lookup returns the built-in system called nameOrPath, else the system read
// from the YAML file at nameOrPath. When neither exists, the error lists the
// built-in names.
func Lookup(nameOrPath string) (*System, error) {
	if s, ok := Builtin(nameOrPath); ok {
		return s, nil
	}
	if fi, err := os.Stat(nameOrPath); err == nil && fi.Mode().IsRegular() {
		return ReadYAML(nameOrPath)
	}
	return nil, fmt.Errorf("hardware: unknown system %q: not a built-in (%s) and not a YAML file",
		nameOrPath, strings.Join(BuiltinNames(), ", "))
}

// missing is the error for a required field the file lacks, naming a key of
// the same section that looks like a misspelling of it (within two edits, and
// no field this reader knows): unknown keys are otherwise ignored, as the
// AIConfigurator files carry many.
func missing(path, field string, data []byte) error {
	section, key, _ := strings.Cut(field, ".")
	var raw map[string]map[string]any
	_ = yaml.Unmarshal(data, &raw) // the typed decode has read it; a section of another shape has no keys here
	var near []string
	for k := range raw[section] {
		if !knownKeys[section+"."+k] && editDistance(k, key) <= 2 {
			near = append(near, section+"."+k)
		}
	}
	if len(near) == 0 {
		return fmt.Errorf("hardware: %s: field %s is missing", path, field)
	}
	sort.Strings(near)
	return fmt.Errorf("hardware: %s: field %s is missing (the file has %s: misspelt?)", path, field, strings.Join(near, ", "))
}

// knownKeys are the fields systemYAML reads.
var knownKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeOf(systemYAML{})
	for i := 0; i < t.NumField(); i++ {
		sec := t.Field(i)
		for j := 0; j < sec.Type.NumField(); j++ {
			m[sec.Tag.Get("yaml")+"."+sec.Type.Field(j).Tag.Get("yaml")] = true
		}
	}
	return m
}()

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

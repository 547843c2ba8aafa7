package hardware

import "sort"

// builtinSystems returns fresh copies of the built-in systems. Every value is
// read from ../shared/data/aic/systems/<name>.yaml (source:
// ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/systems/, commit
// 095f58a51c4ca8e61b66ec108d86f223f8d559ce); TestBuiltinsMatchYAML checks
// them against the files. AllReduce is not in the files: it is the fit of
// each system's newest custom_allreduce_perf table under
// ../shared/data/aic/systems/data/<name>/comm/vllm/ that
// scripts/fit_allreduce.py prints (docs/accuracy.md, "The roofline's
// all-reduce"): NVLink systems reach 0.33–0.68 of IntraNodeBW, the PCIe
// ones 0.23 (rtx_pro_6000_server, 2 GPUs) down to 0.07 (l40s, 8 GPUs).
func builtinSystems() []System {
	// misc.nccl_mem is the same in all the files.
	nccl := func() map[int]int64 {
		return map[int]int64{1: 0, 2: 358612992, 4: 411041792, 8: 411041792}
	}
	const otherMem = 3758096384 // 3.5 GiB, misc.other_mem in all the files
	return []System{
		{ // h100_sxm.yaml
			Name: "h100_sxm", SMVersion: 90, MemBW: 3350e9, MemCapacity: 85899345920, // 80 GiB
			BF16Flops: 989e12, FP8Flops: 1978e12,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 450e9, InterNodeBW: 50e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.27.3",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 4.2e-6, BusBW: 232.2e9}, 4: {LatencyS: 4.9e-6, BusBW: 248.8e9}, 8: {LatencyS: 5.7e-6, BusBW: 304.4e9}},
		},
		{ // h200_sxm.yaml
			Name: "h200_sxm", SMVersion: 90, MemBW: 4800e9, MemCapacity: 151397597184, // 141 GiB
			BF16Flops: 989e12, FP8Flops: 1978e12,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 450e9, InterNodeBW: 50e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.26.2",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 4.4e-6, BusBW: 242.6e9}, 4: {LatencyS: 4.9e-6, BusBW: 262.2e9}, 8: {LatencyS: 5.6e-6, BusBW: 327.0e9}},
		},
		{ // b200_sxm.yaml
			Name: "b200_sxm", SMVersion: 100, MemBW: 7700e9, MemCapacity: 193273528320, // 180 GiB
			BF16Flops: 2250e12, FP8Flops: 4500e12, FP4Flops: 9000e12,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 900e9, InterNodeBW: 100e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.27.3",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 7.3e-6, BusBW: 307.7e9}, 4: {LatencyS: 7.7e-6, BusBW: 367.7e9}, 8: {LatencyS: 8.7e-6, BusBW: 486.6e9}},
		},
		{ // a100_sxm.yaml: no fp8_tc_flops
			Name: "a100_sxm", SMVersion: 80, MemBW: 2039e9, MemCapacity: 85899345920, // 80 GiB
			BF16Flops: 312e12, FP8Flops: 0,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 300e9, InterNodeBW: 25e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.27.3",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 5.0e-6, BusBW: 164.5e9}, 4: {LatencyS: 5.8e-6, BusBW: 148.9e9}, 8: {LatencyS: 7.1e-6, BusBW: 150.6e9}},
		},
		{ // b300_sxm.yaml
			Name: "b300_sxm", SMVersion: 103, MemBW: 7750e9, MemCapacity: 288400343040, // 275,040 MiB
			BF16Flops: 2250e12, FP8Flops: 4500e12, FP4Flops: 14000e12,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 900e9, InterNodeBW: 100e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.27",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 7.3e-6, BusBW: 314.5e9}, 4: {LatencyS: 7.6e-6, BusBW: 369.9e9}, 8: {LatencyS: 8.5e-6, BusBW: 480.4e9}},
		},
		{ // gb200.yaml: GB200 NVL72, 4 GPUs per node (compute tray), 72 per NVLink rack
			Name: "gb200", SMVersion: 100, MemBW: 8000e9, MemCapacity: 198674743296, // 189,471 MiB
			BF16Flops: 2500e12, FP8Flops: 5000e12, FP4Flops: 10000e12,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 4, IntraNodeBW: 900e9, InterNodeBW: 900e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.23",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 5.1e-6, BusBW: 176.7e9}, 4: {LatencyS: 5.6e-6, BusBW: 350.8e9}},
		},
		{ // l40s.yaml: PCIe 4.0 between GPUs, no fp4
			Name: "l40s", SMVersion: 89, MemBW: 864e9, MemCapacity: 48305799168, // 46,068 MiB
			BF16Flops: 362.05e12, FP8Flops: 733e12,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 32e9, InterNodeBW: 50e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.27.3",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 5.3e-6, BusBW: 19.1e9}, 4: {LatencyS: 12.1e-6, BusBW: 3.9e9}, 8: {LatencyS: 21.1e-6, BusBW: 2.3e9}},
		},
		{ // rtx_pro_6000_server.yaml: RTX PRO 6000 Blackwell Server Edition,
			// peaks scaled to its 2430 MHz SM clock; PCIe 5.0 between GPUs
			Name: "rtx_pro_6000_server", SMVersion: 120, MemBW: 1792e9, MemCapacity: 102641958912, // 97,887 MiB
			BF16Flops: 467800534963698, FP8Flops: 935601069927397, FP4Flops: 1871202139854795,
			MemBWScaling: 0.8, MemConstLatency: 3e-6,
			GPUsPerNode: 8, IntraNodeBW: 64e9, InterNodeBW: 50e9, OtherMem: otherMem, NCCLMem: nccl(), NCCLVersion: "2.29.2",
			AllReduce: map[int]AllReduceLink{2: {LatencyS: 18.6e-6, BusBW: 15.0e9}},
		},
	}
}

// Builtin returns a copy of the built-in system called name and true, or
// nil and false.
func Builtin(name string) (*System, bool) {
	for _, s := range builtinSystems() {
		if s.Name == name {
			s := s
			return &s, true
		}
	}
	return nil, false
}

// BuiltinNames lists the built-in system names, sorted.
func BuiltinNames() []string {
	var names []string
	for _, s := range builtinSystems() {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

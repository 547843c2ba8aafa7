//go:build !linux

package replay

// machineMemory is 0 (unknown) outside Linux: the default budget is then
// defaultBudgetUnknown.
func machineMemory() int64 { return 0 }

package replay

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// machineMemory is the memory this process may use, bytes: the smallest of
// the physical memory (/proc/meminfo MemTotal), the cgroup's limit (v2
// memory.max, v1 memory.limit_in_bytes) and the address-space limit
// (RLIMIT_AS); 0 when none is known.
func machineMemory() int64 {
	best := int64(0)
	take := func(v int64) {
		if v > 0 && (best == 0 || v < best) {
			best = v
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if fields := strings.Fields(rest); len(fields) > 0 { // "24547052 kB"
					if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
						take(kb << 10)
					}
				}
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v < 1<<60 {
				take(v) // "max" (v2) or a huge number (v1) means no limit
			}
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < 1<<60 {
		take(int64(rl.Cur))
	}
	return best
}

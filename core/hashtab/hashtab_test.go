package hashtab

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The table agrees with a Go map under random puts and deletes that force long
// probe chains and wrap-around (keys share their low bits).
func TestTableMatchesMap(t *testing.T) {
	tb := Make(16)
	ref := map[uint64]int32{}
	rng := uint64(1)
	for step := 0; step < 20000; step++ {
		rng = rng*6364136223846793005 + 1442695040888963407
		key := (rng>>33)%24<<4 | 0xF // 24 keys, all with home slot 15
		if _, ok := ref[key]; ok && rng&1 == 0 {
			tb.Del(key)
			delete(ref, key)
		} else if len(ref) < 24 { // past half of 16 slots: the table grows
			id := int32(step)
			_, had := ref[key]
			if !had {
				ref[key] = id
			}
			if rng&2 == 0 {
				tb.Put(key, id)
			} else { // getOrPut: the value present, or id stored
				got, added := tb.GetOrPut(key, func() int32 { return id })
				require.Equal(t, !had, added)
				require.Equal(t, ref[key], got)
			}
		}
		for k, v := range ref {
			got, ok := tb.Get(k)
			require.True(t, ok)
			require.Equal(t, v, got)
		}
	}
}

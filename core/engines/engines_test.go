package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// TestEveryBackendHasAFamily: each engine.backend value config accepts has a
// family of that name, and the table holds no other.
func TestEveryBackendHasAFamily(t *testing.T) {
	backends := config.Enums()["engine.backend"]
	require.NotEmpty(t, backends)
	for _, b := range backends {
		f, err := For(b)
		if assert.NoError(t, err, b) {
			assert.Equal(t, b, f.Name())
		}
	}
	assert.Len(t, families, len(backends))
	_, err := For("tgi")
	assert.EqualError(t, err, `engine.backend "tgi" has no engine family`)
}

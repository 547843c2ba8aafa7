package version

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionIsSemver(t *testing.T) {
	assert.Regexp(t, regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`), String())
}

package pybind

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/workload"
)

type dataErrorInfo struct {
	file  string
	line  int
	field string
}

// asDataError reports whether err is bad workload data, and where.
func asDataError(err error) (dataErrorInfo, bool) {
	var de *workload.DataError
	if !errors.As(err, &de) {
		return dataErrorInfo{}, false
	}
	return dataErrorInfo{file: de.File, line: de.Line, field: de.Field}, true
}

// BinaryKindHeadBytes is how many of a file's first bytes BinaryKind reads:
// enough for the longest magic number workload.BinaryKind tells (xz's six).
const BinaryKindHeadBytes = 16

// BinaryKind returns {"binary": {"kind": workload.BinaryKind(head)}}, head the file's
// first bytes in hexadecimal (gopy passes a C string, which a NUL would cut):
// "" for a text file, else the binary format's name ("gzip-compressed",
// "Parquet", …), so that Python names a binary file as the trace readers do
// without a table of its own. Bad hex, or more than BinaryKindHeadBytes
// bytes, is a config error.
func BinaryKind(headHex string) string {
	return guard(func() string {
		head, err := hex.DecodeString(headHex)
		if err != nil || len(head) > BinaryKindHeadBytes {
			return errorEnvelope(&config.Error{Field: "head", Msg: fmt.Sprintf("expected at most %d bytes in hexadecimal", BinaryKindHeadBytes)})
		}
		b, _ := json.Marshal(map[string]map[string]string{"binary": {"kind": workload.BinaryKind(head)}})
		return string(b)
	})
}

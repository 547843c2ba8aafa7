package pybind

import (
	"errors"

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

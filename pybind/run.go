package pybind

import (
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/replay"
)

// Run replays a JSON spec and returns {"report": {"metadata", "summary",
// "requests"}} or an error envelope (see the package doc).
func Run(spec string) string {
	return guard(func() string {
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		rep, err := replay.Run(s)
		if err != nil {
			return errorEnvelope(err)
		}
		b, err := rep.JSON()
		if err != nil {
			return errorEnvelope(err)
		}
		return `{"report":` + string(b) + `}`
	})
}

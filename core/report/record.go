package report

// Request statuses (terminal).
const (
	StatusCompleted = "completed"
	StatusRejected  = "rejected"
	StatusFailed    = "failed"
	StatusCanceled  = "canceled"
)

// NoTime marks a timestamp that never happened (a rejected request's first token).
const NoTime int64 = -1

// Record is one request's timeline (ns from the start of the replay) and counts.
type Record struct {
	RequestID    int64
	Status       string
	Reason       string
	InputTokens  int
	OutputTokens int // tokens produced and received
	CachedTokens int
	SendNs       int64 // the client sent the request
	ArrivalNs    int64 // the request reached the engine
	FirstTokenNs int64 // the client received the first token (NoTime without output)
	// SecondTokenNs: the client received the second token (NoTime below 2).
	SecondTokenNs int64
	EndNs         int64 // the client received the end of the response
	ReleaseNs     int64 // the client acted on the response
	Worker        int   // the worker that served the client (P/D: the decode worker)
	// P/D only (−1 otherwise): the prefill and decode workers (indices in their
	// pools) and the KV transfer time (0 when no transfer started).
	PrefillWorker int
	DecodeWorker  int
	TransferNs    int64
	Preemptions   int
	SessionID     int64 // -1 outside a session
	Turn          int
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// TTFT is time to first token, first_token − send (ms); ok is false without output.
func (r *Record) TTFT() (float64, bool) {
	if r.FirstTokenNs == NoTime {
		return 0, false
	}
	return ms(r.FirstTokenNs - r.SendNs), true
}

// E2E is end-to-end latency, end − send (ms).
func (r *Record) E2E() float64 { return ms(r.EndNs - r.SendNs) }

// TPOT is time per output token after the first, (e2e − ttft)/(output − 1) (ms),
// defined for two or more output tokens (AIPerf's inter-token latency).
func (r *Record) TPOT() (float64, bool) {
	if r.OutputTokens < 2 || r.FirstTokenNs == NoTime {
		return 0, false
	}
	return ms(r.EndNs-r.FirstTokenNs) / float64(r.OutputTokens-1), true
}

// TTST is AIPerf's time to second token: the gap between the first and the
// second token received, second_token − first_token (ms); ok is false below
// 2 tokens. (AIPerf, metrics/types/ttst_metric.py: content_responses[1] −
// content_responses[0].)
func (r *Record) TTST() (float64, bool) {
	if r.SecondTokenNs == NoTime || r.FirstTokenNs == NoTime || r.OutputTokens < 2 || r.SecondTokenNs < r.FirstTokenNs {
		return 0, false
	}
	return ms(r.SecondTokenNs - r.FirstTokenNs), true
}

// PerUserTPS is AIPerf's output token throughput per user: 1 / TPOT, tokens
// per second, for two or more output tokens (AIPerf
// output_token_throughput_per_user = 1 / inter_token_latency in seconds).
func (r *Record) PerUserTPS() (float64, bool) {
	tpot, ok := r.TPOT()
	if !ok || tpot <= 0 {
		return 0, false
	}
	return 1000 / tpot, true
}

package report

// InFlight is the measured requests in flight: sent, and the end of their
// response not yet received by the client (a rejected request until its
// rejection reaches it). Mean is over the measured window (Little's law: the
// sum of every measured request's send-to-end time / DurationMs; null when the
// duration is 0); Peak is the most at any moment.
type InFlight struct {
	Mean *float64 `json:"mean"`
	Peak int      `json:"peak"`
}

// WorkerUtilization is the share of the run each worker (each data-parallel
// rank) spent running passes: its time in passes (Pool.WorkerBusyMs) / the
// run's span, from the first request sent (warm-up included) to the last
// event. The span holds every pass, so a share is at most 1; without warm-up
// and canceled requests it is the measured window (DurationMs) to within the
// last response's way back to the client. Mean, Min and Max are over every
// worker of every pool.
type WorkerUtilization struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Saturation says that the deployment did not keep up with the load it was
// offered: the engines' waiting queues grew through the sending window
// (docs/metrics.md, "Saturation"). Present in a summary only then.
//
// The sending window runs from the first measured send to the last.
// OfferedRequestRateRPS = measured requests sent / that window (s);
// OfferedTokenRateTPS = their prompt + output tokens (the output each asked
// for) / that window. ServedRequestRateRPS and ServedTokenRateTPS are the
// completed requests and their prompt + output tokens / DurationMs.
// QueueFirstHalf and QueueSecondHalf are the mean number of requests waiting
// in the engines' queues (placed on a worker, not yet admitted to a pass: new,
// preempted, P/D handoffs) as seen by the sends of each half of the sending
// window; QueueGrowthRPS is their difference over the time between the two
// halves' mean send times, requests/s (for a queue growing steadily at the
// excess of the offered over the served rate, that excess).
// BusiestWorkerUtilization is WorkerUtilization.Max.
type Saturation struct {
	OfferedRequestRateRPS    float64 `json:"offered_request_rate_rps"`
	OfferedTokenRateTPS      float64 `json:"offered_token_rate_tps"`
	ServedRequestRateRPS     float64 `json:"served_request_rate_rps"`
	ServedTokenRateTPS       float64 `json:"served_token_rate_tps"`
	QueueFirstHalf           float64 `json:"queue_first_half"`
	QueueSecondHalf          float64 `json:"queue_second_half"`
	QueueGrowthRPS           float64 `json:"queue_growth_rps"`
	BusiestWorkerUtilization float64 `json:"busiest_worker_utilization"`
	// Diagnosis is the one line a report shows for it.
	Diagnosis string `json:"diagnosis"`
}

// SaturatedGrowthShare is the queue growth, as a share of the offered request
// rate, from which a summary says the deployment is saturated: a queue that
// grows by at least 5 % of the offered rate (the deployment serves at most
// about 95 % of what it is offered), and by at least one request between the
// two halves of the sending window.
const SaturatedGrowthShare = 0.05

package replay

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/report"
)

// The P/D flow (docs/design.md, "P/D disaggregation"):
//
//	arrive ─► prefill worker (prefix cache of that worker; KV held after the
//	          prompt is computed) ─► handoff: pick a decode worker, which looks
//	          its own prefix cache up and reserves the prompt's blocks
//	          (engine.Worker.Handoff: waiting FIFO if they are not free) ─►
//	          transfer of the tokens it lacks × KV bytes per token /
//	          bandwidth + latency ─► the prefill worker frees its blocks; the
//	          decode worker queues the request (KVArrived) and caches the
//	          blocks it received ─► decode passes produce every
//	          client-visible token.
//
// The decode worker holds every handoff placed on it in one place, its
// engine.Worker (waiting for blocks, in transfer, arrived), so its load for
// placement is its Outstanding alone. A handoff the decode pool can never hold
// fails; it reaches the client without output when the prefill ends.

// arrivePD places a request on prefill worker w (global id), or rejects it.
func (m *sim) arrivePD(idx int32, w int) {
	f := m.flights[idx]
	rec := m.rec(f.rec)
	f.pw, f.dw = int32(w), -1
	rec.PrefillWorker, rec.DecodeWorker = m.pools[0].server(w), -1
	prompt, output := f.eng.Prompt, f.eng.Output
	if reason := f.reject; reason != "" { // CheckPrefill, at the send (fitReason)
		rec.Reason = reason
		m.end(idx, report.StatusRejected)
		return
	}
	// The prefill worker computes the prompt and keeps its KV for the transfer;
	// the decode side produces all output (a prompt-only request ends here).
	f.eng.Output, f.eng.HoldKV = 0, output > 0
	f.dec.Reset(engineID(idx, f.gen), prompt, output, f.eng.Hashes, f.eng.Groups)
	f.dec.PartialTokens = f.eng.PartialTokens
	f.dec.Unmeasured = f.warmup
	m.admit(w, idx)
}

// prefillDone handles a prefill pass's finished prompts: each is handed off.
func (m *sim) prefillDone(outs []engine.Out) {
	for _, o := range outs {
		if o.Kind != engine.OutFinished {
			panic("replay: a prefill worker produced a client token")
		}
		if idx, f := m.flightOf(o.Req.ID); f != nil {
			m.handoff(idx)
		}
	}
}

// handoff moves a prompt whose prefill ended at m.now toward a decode worker.
func (m *sim) handoff(idx int32) {
	f := m.flights[idx]
	if p := m.pools[0]; m.kvRouting && p.kv != nil { // the prefill is done: the prefill router lets it go
		p.kv.free(&f.routed[0], f.eng.Hashes)
	}
	if f.dec.Output == 0 { // prompt only: nothing to decode
		m.end(idx, report.StatusCompleted)
		return
	}
	dp := m.pools[1]
	w := dp.place(f.dec.Prompt, f.dec.Hashes, m.now, &f.routed[1])
	f.dw = int32(w)
	rec := m.rec(f.rec)
	rec.DecodeWorker, rec.Worker = dp.server(w), dp.server(w)
	if reason := m.workers[w].CheckHandoff(f.eng.Prompt, f.dec.Output); reason != "" {
		m.workers[f.pw].ReleaseHeld(f.eng)
		rec.Reason = reason
		m.end(idx, report.StatusFailed)
		return
	}
	reserved := m.workers[w].Handoff(f.dec)
	m.kvEvents(w)
	if reserved {
		m.startTransfer(idx)
		return
	}
	f.stage = stageWaitKV
}

// retryHandoffs starts the transfers of decode worker w's handoffs that were
// waiting for blocks, in order, after its pass freed blocks.
func (m *sim) retryHandoffs(w int) {
	reserved := m.workers[w].ReserveWaiting()
	m.kvEvents(w)
	for _, r := range reserved {
		idx, f := m.flightOf(r.ID)
		if f == nil {
			panic("replay: a canceled handoff was still waiting for blocks")
		}
		m.startTransfer(idx)
	}
}

// startTransfer: the decode blocks are reserved; the KV of the prompt's
// tokens the decode worker's cache lacks moves now.
func (m *sim) startTransfer(idx int32) {
	f := m.flights[idx]
	f.stage = stageTransfer
	d := m.dep.transferNs(f.dec.PulledTokens)
	m.rec(f.rec).TransferNs = d
	m.at(m.now+d, phaseTransfer, evTransferEnd, idx, f.gen)
}

// transferEnd: the KV is on the decode worker; the prefill worker frees it.
func (m *sim) transferEnd(idx int32) {
	f := m.flights[idx]
	if f.ended { // canceled during the transfer: already released
		return
	}
	f.stage = stageDecode
	m.workers[f.pw].ReleaseHeld(f.eng)
	m.workers[f.dw].KVArrived(f.dec)
}

// cancel: the client gives up on a request in flight (request_timeout_ms, or
// grace: the end of traffic.stop.grace_s). The
// engine drops it wherever it is, its KV blocks are released (on both pools in
// P/D), and it ends now as canceled, with whatever tokens were received.
func (m *sim) cancel(idx int32, grace bool) {
	f := m.flights[idx]
	switch f.stage {
	case stageEngine:
		m.workers[f.pw].Abort(f.eng)
	case stageWaitKV, stageTransfer: // the decode worker drops the handoff and any reserved blocks
		m.workers[f.pw].ReleaseHeld(f.eng)
		m.workers[f.dw].Abort(f.dec)
	case stageDecode:
		m.workers[f.dw].Abort(f.dec)
	}
	rec := m.rec(f.rec)
	rec.Reason = fmt.Sprintf("canceled by the client after request_timeout_ms (%g ms)", float64(m.path.TimeoutNs)/1e6)
	if grace {
		rec.Reason = fmt.Sprintf("canceled by the client at the end of traffic.stop.grace_s, %g s after max_duration_s", float64(m.tr.graceNs)/1e9)
	}
	m.end(idx, report.StatusCanceled)
}

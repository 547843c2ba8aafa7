package trtllm

// A hybrid model's recurrent state (linear-attention or Mamba layers:
// Qwen3-Next, Qwen3.5, Nemotron-H), as TensorRT-LLM's mamba cache manager
// holds it (tensorrt_llm/_torch/pyexecutor/mamba_cache_manager.py,
// MambaCacheManager beside the KVCacheManager in MambaHybridCacheManager):
// the conv and SSM states are two tensors of max_batch_size slots
// (Options.StateSlots), allocated once; a request takes a slot in
// prepare_resources at its first scheduled iteration (context, or a
// handoff's blocks on the generation side) and gives it back in
// free_resources (finished, paused, aborted, or its KV handed off). The
// context requests the capacity scheduler picked are kept only while free
// slots remain, in order, one a context without a slot
// (filter_ctx_requests_by_capacity: the prefix that fits); the generation
// requests hold theirs already. With the KV blocks and max_batch_size both
// bounding a worker's requests, the slots bind where a request holds its
// state outside the scheduled batch: a context worker's finished requests
// whose KV and state wait for their transfer (HoldKV), the handoffs in
// transfer on a generation worker.

// slotFree reports whether a request without a slot could take one now.
func (w *Worker) slotFree() bool { return w.opt.StateSlots == 0 || w.slotsFree > 0 }

// takeSlot gives r a slot if it has none (the caller checked slotFree).
func (w *Worker) takeSlot(r *Request) {
	if w.opt.StateSlots == 0 || r.slot {
		return
	}
	if w.slotsFree == 0 {
		panic("trtllm: a recurrent-state slot taken with none free")
	}
	w.slotsFree--
	r.slot = true
}

// freeSlot returns r's slot, if it holds one.
func (w *Worker) freeSlot(r *Request) {
	if r.slot {
		r.slot = false
		w.slotsFree++
	}
}

// filterBySlots keeps, of the contexts in w.fitting, the prefix whose
// slots fit the free ones (a context holding one needs none); the
// generation requests stay (filter_ctx_requests_by_capacity).
func (w *Worker) filterBySlots() {
	if w.opt.StateSlots == 0 {
		return
	}
	free := w.slotsFree
	kept := w.fitting[:0]
	stop := false
	for _, r := range w.fitting {
		if r.state == stContext {
			switch {
			case stop:
				continue
			case r.slot:
			case free > 0:
				free--
			default:
				stop = true
				continue
			}
		}
		kept = append(kept, r)
	}
	clear(w.fitting[len(kept):])
	w.fitting = kept
}

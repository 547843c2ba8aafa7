// Package sglang is the SGLang engine family (engine.Family, engine.Planner):
// one SGLang server, its scheduler, token pool and radix cache, as
// python/sglang/srt decides them. The replay drives it through engine.Worker.
//
// Read first:
//   - scheduler.go: how a pass is formed (managers/scheduler.py
//     get_next_batch_to_run: the last prefill pass joins the running batch; a
//     prefill pass if one can be formed, else a decode pass), admission
//     (managers/schedule_policy.py PrefillAdder: the token budgets and the
//     decode room reserved by new_token_ratio; add_one_req_ignore_eos without
//     the radix cache), the policies (SchedulePolicy.calc_priority: fcfs,
//     lpm with its fcfs fallback and in-batch prefix caching, lof), retraction
//     (managers/schedule_batch.py retract_decode) and the pass's end
//     (process_batch_result: cache_unfinished_req, cache_finished_req).
//   - radix.go: the radix cache (mem_cache/radix_cache.py): token-level
//     prefix matching over pieces of content, node splits, locks, LRU
//     eviction of unlocked leaves.
//   - worker.go: the request's state, the token pool, the checks at arrival
//     (validate_input_length, max_req_len), counters.
//   - pd.go: P/D (disaggregation/): the prefill server's held KV, the decode
//     server's reservation and arrival.
//   - plan.go: a pool's sizing (model_executor/model_runner.py
//     profile_max_num_token, init_memory_pool; the defaults of
//     server_args.py by release in core/config/sglang.go).
//
// Units: time in integer ns of the virtual clock; lengths and the pool in
// tokens (the report's blocks are pages of page_size tokens).
package sglang

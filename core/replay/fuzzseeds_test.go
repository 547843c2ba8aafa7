package replay

// fuzzSeeds are FuzzRun's seed specs: a plain replay of each kind, and the
// extreme inputs that once hung, panicked or ran out of memory
// (each of them a test of its own as well).
var fuzzSeeds = []string{
	// plain: roofline, a closed loop; linear P/D; sessions with the client path
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: synthetic, num_requests: 8, isl: 512, osl: 16}, load: {mode: concurrency, concurrency: 4}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, perf: {source: linear, base_ms: 2, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}, workers: {disaggregated: {prefill: {count: 1}, decode: {count: 2}, kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2}}}}, traffic: {source: {type: synthetic, num_requests: 8, isl: {kind: uniform, min: 1, max: 900}, osl: {kind: lognormal, mean: 20, std: 10, min: 1, max: 60}}, load: {mode: rate, rate_rps: 50, arrival: gamma, cv: 2}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, tokenization: {send_ms: 0.3}, detokenization: {base_us: 150, per_token_us: 2}, scheduler: {num_gpu_blocks: 64, block_size: 16, max_num_seqs: 4, max_num_batched_tokens: 256, max_model_len: 1024}}, traffic: {source: {type: sessions, num_sessions: 3, turns: {kind: uniform, min: 1, max: 4}, isl: 100, osl: 20}, load: {mode: concurrency, concurrency: 2, inter_turn_delay_ms: 3, response_overhead: {base_ms: 1.4, per_output_token_us: 3.65, jitter_ms: 0.5, serial: true}, request_timeout_ms: 40}}}`,
	// lengths near int64: rejected, never wrapped (used to spin forever)
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: synthetic, num_requests: 2, isl: 9223372036854775807, osl: 1}, load: {mode: concurrency, concurrency: 1}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: sessions, num_sessions: 1, turns: 8, isl: 2305843009213693952, osl: 1}, load: {mode: concurrency, concurrency: 1}}}`,
	// costs within their limits that pass the clock's range (used to panic INV-3)
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, perf: {source: linear, base_ms: 1e9, per_prefill_token_ms: 0, per_decode_seq_ms: 0}}, traffic: {source: {type: synthetic, num_requests: 1, isl: 10, osl: 4000}, load: {mode: concurrency, concurrency: 1}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, workers: {disaggregated: {prefill: {count: 1}, decode: {count: 1}, kv_transfer: {bandwidth_gb_per_s: 0.001, latency_ms: 1e9, kv_bytes_per_token: 1000000000}}}}, traffic: {source: {type: synthetic, num_requests: 4, isl: 100, osl: 2}, load: {mode: concurrency, concurrency: 1}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, perf: {source: roofline, compute_efficiency: 0.001, memory_efficiency: 0.001, layer_latency_us: 100000, pass_overhead_us: 1e9}}, traffic: {source: {type: synthetic, num_requests: 2, isl: 10, osl: 4000}, load: {mode: concurrency, concurrency: 2}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: synthetic, num_requests: 100000, isl: 1, osl: 1}, load: {mode: rate, rate_rps: 1e-6, arrival: constant}}}`,
	// work proportional to what runs (a billion-token prompt; 1e9 requests for 1 s)
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: sessions, num_sessions: 1, turns: 1, isl: 1000000000, osl: 1}, load: {mode: concurrency, concurrency: 1}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: synthetic, num_requests: 1000000000, isl: 10, osl: 1}, load: {mode: rate, rate_rps: 10}, stop: {max_duration_s: 1}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: sessions, num_sessions: 2, turns: {kind: uniform, min: 1, max: 4611686018427387904}, isl: 10, osl: 1}, load: {mode: concurrency, concurrency: 4}, stop: {max_requests: 50}}}`,
	// scheduler and memory extremes
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, scheduler: {num_gpu_blocks: 1073741824, block_size: 256, max_num_seqs: 16777216, max_num_batched_tokens: 1073741824}}, traffic: {source: {type: synthetic, num_requests: 4, isl: 3000, osl: 3}, load: {mode: concurrency, concurrency: 16777216}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, scheduler: {gpu_memory_utilization: 1.0e-9}}, traffic: {source: {type: synthetic, num_requests: 4, isl: 10, osl: 3}, load: {mode: concurrency, concurrency: 1}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm, scheduler: {num_gpu_blocks: 8, block_size: 1, max_num_seqs: 1, max_num_batched_tokens: 1, max_model_len: 8}}, traffic: {source: {type: synthetic, num_requests: 4, isl: 2, osl: 3, dataset: {entries: 1000000}}, load: {mode: concurrency, concurrency: 3}}}`,
	`{engine: {model: Qwen/Qwen3-8B, system: h100_sxm}, traffic: {source: {type: synthetic, num_requests: 4, isl: 10, osl: 3}, load: {mode: rate, rate_rps: 10, arrival: gamma, cv: 0.001}}, execution: {seed: 18446744073709551615, max_memory_gb: 0.01}}`,
}

package config

import (
	"slices"
	"strings"
)

// VLLMSpeculativeConfig is engine.scheduler.speculative_config, vLLM's
// --speculative-config under its own keys (SpeculativeConfig,
// vllm/config/speculative.py): a chain of num_speculative_tokens drafts
// proposed after every step and verified by the next (the V1 scheduler
// schedules a decode's token and its drafts together,
// vllm/v1/core/sched/scheduler.py; docs/moe.md, "Speculative decoding").
type VLLMSpeculativeConfig struct {
	// Method is method: VLLMSpecMTP (the checkpoint's own multi-token-
	// prediction layer as the draft), VLLMSpecEagle or VLLMSpecEagle3 (an
	// EAGLE head, model). All three run vLLM's EAGLE proposer
	// (vllm/v1/spec_decode/eagle.py; SpeculativeConfig.use_eagle).
	Method string `json:"method"`
	// Model is model: the EAGLE head's checkpoint. Not read: a draft pass
	// is priced as one decoder layer of the target's shape and its LM head
	// (perf.DraftNs), the MTP layer's and an EAGLE head's shape.
	Model string `json:"model,omitempty"`
	// NumSpeculativeTokens is num_speculative_tokens: the drafts each step
	// proposes (the draft run that many times) and the next verifies.
	NumSpeculativeTokens int `json:"num_speculative_tokens"`
	// AcceptanceRates and AcceptanceRate are the simulation's, not vLLM's
	// (at most one given), with TensorRT-LLM's MTP rule (speculative.go):
	// AcceptanceRates[i] the probability that draft i + 1 is accepted when
	// every draft before it was, at most NumSpeculativeTokens of them;
	// neither given, DefaultMTPAcceptanceRates.
	AcceptanceRates []float64 `json:"acceptance_rates,omitempty"`
	AcceptanceRate  *float64  `json:"acceptance_rate,omitempty"`
}

// engine.scheduler.speculative_config.method values modelled
// (vllm/config/speculative.py, SpeculativeMethod).
const (
	VLLMSpecMTP    = "mtp"
	VLLMSpecEagle  = "eagle"
	VLLMSpecEagle3 = "eagle3"
)

var vllmSpecMethods = []string{VLLMSpecMTP, VLLMSpecEagle, VLLMSpecEagle3}

// Rates is the acceptance of each of the NumSpeculativeTokens drafts (a
// validated, normalized block).
func (sp *VLLMSpeculativeConfig) Rates() []float64 {
	return acceptanceRates(sp.NumSpeculativeTokens, sp.AcceptanceRates, sp.AcceptanceRate)
}

// vllmSpecDefaults fills speculative_config's acceptance when left out.
func vllmSpecDefaults(sc *Scheduler) {
	if sp := sc.SpeculativeConfig; sp != nil {
		sp.AcceptanceRates = defaultAcceptance(sp.NumSpeculativeTokens, sp.AcceptanceRates, sp.AcceptanceRate)
	}
}

// validateVLLMSpec checks engine.scheduler.speculative_config.
func validateVLLMSpec(sc *Scheduler) error {
	sp := sc.SpeculativeConfig
	if sp == nil {
		return nil
	}
	const q = "engine.scheduler.speculative_config."
	switch m := sp.Method; {
	case m == "":
		return errorf(q+"method", "is required: %s (vLLM's choice of a method from model alone is not modelled)", strings.Join(vllmSpecMethods, ", "))
	case m == "ngram" || m == "suffix":
		return errorf(q+"method", "%s is not modelled: its drafts are matched on the CPU from the prompt and output so far, "+
			"at a rate the workload decides (modelled: %s)", quote(m), strings.Join(vllmSpecMethods, ", "))
	case !slices.Contains(vllmSpecMethods, m):
		return errorf(q+"method", "%s is not modelled (modelled: %s, the EAGLE proposer's methods)", quote(m), strings.Join(vllmSpecMethods, ", "))
	}
	if sp.NumSpeculativeTokens == 0 {
		return errorf(q+"num_speculative_tokens", "is required (vLLM's default from the draft's config is not modelled)")
	}
	if err := checkInt(q+"num_speculative_tokens", "VLLMSpeculativeConfig.num_speculative_tokens", sp.NumSpeculativeTokens); err != nil {
		return err
	}
	return validateAcceptance(q, "VLLMSpeculativeConfig.acceptance_rate", "num_speculative_tokens", sp.NumSpeculativeTokens,
		sp.AcceptanceRates, sp.AcceptanceRate)
}

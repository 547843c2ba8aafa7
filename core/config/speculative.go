package config

import (
	"fmt"
	"slices"
)

// The simulation's acceptance of speculative drafts, shared by the engines'
// speculative blocks (engine.trtllm.speculative_config,
// engine.scheduler.speculative_config): acceptance_rates, the probability
// that draft i is accepted when every draft before it was, at most one per
// draft (a draft beyond the list is never accepted), or acceptance_rate, one
// rate for every draft; neither given, DefaultMTPAcceptanceRates.

// acceptanceRates is the acceptance of each of n drafts of a validated,
// normalized block: rates, 0 beyond the list, or rate for each.
func acceptanceRates(n int, rates []float64, rate *float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		switch {
		case rate != nil:
			out[i] = *rate
		case i < len(rates):
			out[i] = rates[i]
		}
	}
	return out
}

// defaultAcceptance is a block's acceptance_rates once normalized: as given,
// or, when neither it nor acceptance_rate is, the first n (at most) of
// DefaultMTPAcceptanceRates.
func defaultAcceptance(n int, rates []float64, rate *float64) []float64 {
	if rate != nil || rates != nil {
		return rates
	}
	return slices.Clone(DefaultMTPAcceptanceRates[:min(max(n, 0), len(DefaultMTPAcceptanceRates))])
}

// validateAcceptance checks the acceptance fields of a speculative block at
// prefix q with n drafts (the block's field drafts names them): not both
// given, a list neither empty nor longer than n, every rate in key's range.
func validateAcceptance(q, key, drafts string, n int, rates []float64, rate *float64) error {
	if rate != nil {
		if rates != nil {
			return errorf(q+"acceptance_rates", "give acceptance_rates (one rate per draft) or acceptance_rate (one for every draft), not both")
		}
		return checkFloat(q+"acceptance_rate", key, *rate)
	}
	if rates != nil && len(rates) == 0 {
		return errorf(q+"acceptance_rates", "is empty: give the rate of each draft (at most %s), or leave it out for the default", drafts)
	}
	if len(rates) > n {
		return errorf(q+"acceptance_rates", "has %d rates, more than the %d drafts of %s (one rate per draft)", len(rates), n, drafts)
	}
	for i, a := range rates {
		if err := checkFloat(fmt.Sprintf("%sacceptance_rates[%d]", q, i), key, a); err != nil {
			return err
		}
	}
	return nil
}

// A bias budget: one number per sampler for how far its profile is from the oracle's, the
// total variation distance (TVD) of the two self-time distributions, over source lines and
// over functions: TVD(p, q) = 1/2 sum |p(k) - q(k)|, the share of samples that would have
// to move for the two profiles to agree (0: the same, 1: nothing in common). Counted with
// each sample's weight (Event::count), the top frame's line and function as the key.
//
// With an interval from sampling alone: a bootstrap that redraws each profile's samples
// (a multinomial with its own shares and size) and recomputes the distance, the 2.5th and
// 97.5th percentiles of `rounds` redraws. Each profile is redrawn on its own although the
// two share their interruptions, so the interval is wider than the pairing would allow:
// a distance whose interval reaches 0 cannot be told from sampling error.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampler/profile/profile.h"

namespace sampler {

struct Distance {
  double tvd = 0;
  double low = 0, high = 0;  // the bootstrap interval
};

struct BiasBudget {
  SamplerId sampler = SamplerId::cooperative;
  uint64_t samples = 0;  // the sampler's, weighted
  Distance lines, functions;
};

// Per sampler of the profile but the oracle, in report order; empty when the oracle did
// not run or has no samples. A sampler with no samples has no budget.
std::vector<BiasBudget> bias_budgets(const Profile& profile, int rounds = 200);

// The budget of one sampler, if it has one.
std::optional<BiasBudget> budget_of(const std::vector<BiasBudget>& budgets, SamplerId s);

// The budgets as the text report and `compare` print them: a heading line, then a line per
// sampler ("  safepoint    0.612 [0.590, 0.640]   0.203 [0.180, 0.230]"); "" for none.
std::string bias_budget_text(const std::vector<BiasBudget>& budgets);

}  // namespace sampler

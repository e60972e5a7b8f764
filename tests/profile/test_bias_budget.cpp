// Unit tests of the bias budget (sampler/profile/bias_budget.h): the total variation
// distance of each sampler's self-time profile from the oracle's, over lines and over
// functions, on profiles built by hand whose distances are worked out here; samples'
// weights; no budget without the oracle; the bootstrap interval around sampling error.
#include <catch2/catch.hpp>

#include "sampler/profile/bias_budget.h"

using namespace sampler;

namespace {

FrameRef at(const char* fn, uint32_t line) { return {fn, line, 0, FrameKind::jit}; }

void add(Profile& p, SamplerId s, StackTrace stack, uint64_t count) {
  Event e;
  e.sampler = s;
  e.stack = p.stacks.intern(stack);
  e.count = count;
  p.events.push_back(e);
}

// The oracle: 60 on work:12, 20 on work:11, 20 on helper:5. Safepoint: all 100 on work:18
// (lines: nothing in common with the oracle's, 1.0; functions: work 100 against 80, 0.2).
// Cooperative: the oracle's shares at half the samples, as weights (0 and 0).
Profile three_samplers() {
  Profile p;
  p.samplers = {SamplerId::cooperative, SamplerId::safepoint, SamplerId::oracle};
  add(p, SamplerId::oracle, {at("work", 12), at("main", 3)}, 60);
  add(p, SamplerId::oracle, {at("work", 11), at("main", 3)}, 20);
  add(p, SamplerId::oracle, {at("helper", 5), at("main", 4)}, 20);
  add(p, SamplerId::safepoint, {at("work", 18), at("main", 3)}, 100);
  add(p, SamplerId::cooperative, {at("work", 12), at("main", 3)}, 30);
  add(p, SamplerId::cooperative, {at("work", 11), at("main", 3)}, 10);
  add(p, SamplerId::cooperative, {at("helper", 5), at("main", 4)}, 10);
  return p;
}

}  // namespace

TEST_CASE("bias budget: the distances of profiles built by hand", "[budget]") {
  std::vector<BiasBudget> b = bias_budgets(three_samplers(), 0);
  REQUIRE(b.size() == 2);
  CHECK(b[0].sampler == SamplerId::cooperative);  // report order, the oracle left out
  CHECK(b[0].samples == 50);
  CHECK(b[0].lines.tvd == Approx(0.0).margin(1e-12));
  CHECK(b[0].functions.tvd == Approx(0.0).margin(1e-12));
  CHECK(b[1].sampler == SamplerId::safepoint);
  CHECK(b[1].lines.tvd == Approx(1.0));
  CHECK(b[1].functions.tvd == Approx(0.2));
  CHECK(b[1].lines.low == b[1].lines.tvd);  // no redraws: no interval
}

TEST_CASE("bias budget: none without the oracle, none for a sampler with no samples", "[budget]") {
  Profile p = three_samplers();
  p.samplers.push_back(SamplerId::async);
  CHECK(!budget_of(bias_budgets(p, 0), SamplerId::async));
  Profile q;
  q.samplers = {SamplerId::safepoint};
  add(q, SamplerId::safepoint, {at("work", 18)}, 5);
  CHECK(bias_budgets(q).empty());
  CHECK(bias_budget_text(bias_budgets(q)).empty());
}

TEST_CASE("bias budget: the bootstrap interval is what sampling moves the distance by", "[budget]") {
  std::vector<BiasBudget> b = bias_budgets(three_samplers(), 200);
  const BiasBudget& coop = b[0];
  const BiasBudget& sp = b[1];
  // Cooperative: the same shares, 50 against 100 samples: redraws give small distances,
  // none below 0 and most under 0.3 (three keys, sd of a share about 0.07 at 50).
  CHECK(coop.lines.low >= 0);
  CHECK(coop.lines.low <= coop.lines.high);
  CHECK(coop.lines.high > 0);
  CHECK(coop.lines.high < 0.3);
  // Safepoint on lines: disjoint whatever the redraw, so exactly 1 every time.
  CHECK(sp.lines.low == Approx(1.0));
  CHECK(sp.lines.high == Approx(1.0));
  // On functions 0.2, with redraws around it.
  CHECK(sp.functions.low < 0.2);
  CHECK(sp.functions.high > 0.2);
  // The same profile, the same interval.
  CHECK(bias_budgets(three_samplers(), 200)[1].functions.high == sp.functions.high);
  std::string text = bias_budget_text(b);
  CHECK(text.find("safepoint    1.000 [1.000, 1.000]") != std::string::npos);
}

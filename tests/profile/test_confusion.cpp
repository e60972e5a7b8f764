// Unit tests of the pairing behind compare's "where the samples really came from"
// (sampler/profile/confusion.h): events written by the .jsonl writer itself, read back,
// and each sampler's interruptions set against the oracle's line for the same ones: the
// cells of the matrix, a sampler's failures by reason, what the reference could not tell,
// a function of an imported file, and names the writer escapes.
#include <catch2/catch.hpp>

#include "sampler/profile/confusion.h"
#include "sampler/profile/report.h"

using namespace sampler;

namespace {

struct Run {
  Profile profile;
  std::string jsonl;

  void sample(SamplerId s, uint64_t id, StackTrace stack, bool biased = false) {
    Event e;
    e.sampler = s;
    e.sample = id;
    e.stack = profile.stacks.intern(stack);
    e.biased = biased;
    if (biased) e.reason = Reason::taken_at_poll;
    std::string sj;
    append_stack_json(sj, stack);
    append_event_line(jsonl, e, sj, false);
  }
  void failure(SamplerId s, uint64_t id, Reason why, EventType type = EventType::FailedSample) {
    Event e;
    e.type = type;
    e.sampler = s;
    e.sample = id;
    e.reason = why;
    append_event_line(jsonl, e, "", false);
  }
};

FrameRef at(const char* fn, uint32_t line) { return {fn, line, 0, FrameKind::jit}; }
SourceLine line(uint32_t n, uint16_t file = 0) { return {file, n}; }

const Confusion& of(const std::vector<Confusion>& all, SamplerId s) {
  for (const Confusion& c : all)
    if (c.sampler == s) return c;
  FAIL("no matrix for " << sampler_name(s));
  return all.front();
}

// Ten interruptions: the oracle puts 8 on line 12 (the loop) and 2 on line 11; the
// safepoint sampler puts all ten on line 18 (the poll at the return), biased; the
// cooperative sampler agrees with the oracle but for interruption 10, which its thread's
// store dropped; classical fails on 3 of the line-12 ones; the oracle failed on an 11th.
Run ten_interruptions() {
  Run r;
  for (uint64_t id = 1; id <= 10; id++) {
    uint32_t truth = id <= 8 ? 12 : 11;
    r.sample(SamplerId::oracle, id, {at("work", truth), at("main", 30)});
    r.sample(SamplerId::safepoint, id, {at("work", 18), at("main", 30)}, /*biased=*/true);
    if (id == 10)
      r.failure(SamplerId::cooperative, id, Reason::ring_full, EventType::DroppedSample);
    else
      r.sample(SamplerId::cooperative, id, {at("work", truth), at("main", 30)});
    if (id <= 3)
      r.failure(SamplerId::classical, id, Reason::pc_in_stub);
    else
      r.sample(SamplerId::classical, id, {at("work", truth), at("main", 30)});
  }
  r.failure(SamplerId::oracle, 11, Reason::not_in_java);
  r.failure(SamplerId::safepoint, 11, Reason::not_in_java);
  // A latency names a stack but is no sample: never paired.
  Event l;
  l.type = EventType::SafepointLatency;
  l.sampler = SamplerId::cooperative;
  l.sample = 5;
  std::string sj;
  append_stack_json(sj, {at("work", 18)});
  append_event_line(r.jsonl, l, sj, false);
  return r;
}

}  // namespace

TEST_CASE("confusion: the .jsonl events read back as each sampler's outcome", "[confusion]") {
  Run r = ten_interruptions();
  std::vector<Outcome> all = read_outcomes(r.jsonl, r.profile);
  REQUIRE(all.size() == 42);  // 4 samplers x 10, and two failures of the 11th; no latency
  CHECK(all[0].sampler == SamplerId::oracle);
  CHECK(all[0].interruption == 1);
  CHECK(all[0].line == line(12));
  CHECK(!all[0].failed);
  auto dropped = std::find_if(all.begin(), all.end(), [](const Outcome& o) {
    return o.sampler == SamplerId::cooperative && o.interruption == 10;
  });
  REQUIRE(dropped != all.end());
  CHECK(dropped->failed == Reason::ring_full);
}

TEST_CASE("confusion: a biased sampler's line is set against the oracle's for the same interruptions", "[confusion]") {
  Run r = ten_interruptions();
  std::vector<Confusion> m = confusion_matrices(read_outcomes(r.jsonl, r.profile),
                                                {SamplerId::oracle, SamplerId::cooperative, SamplerId::classical,
                                                 SamplerId::safepoint});
  REQUIRE(m.size() == 3);
  const Confusion& safepoint = of(m, SamplerId::safepoint);
  // "These 10 safepoint samples on line 18 were really line 12 x8, line 11 x2."
  auto really = safepoint.really(line(18));
  REQUIRE(really.size() == 2);
  CHECK(really[0] == std::pair{line(12), uint64_t(8)});
  CHECK(really[1] == std::pair{line(11), uint64_t(2)});
  CHECK(safepoint.agreed() == 0);
  CHECK(safepoint.paired == 10);
  CHECK(safepoint.reference_failed == 1);  // the 11th: the oracle failed, nothing to tell
  CHECK(safepoint.moved(line(12)) == std::vector<std::pair<SourceLine, uint64_t>>{{line(18), 8}});
  CHECK(safepoint.really(line(12)).empty());
}

TEST_CASE("confusion: failures by reason against the oracle's line, and the diagonal", "[confusion]") {
  Run r = ten_interruptions();
  std::vector<Confusion> m = confusion_matrices(read_outcomes(r.jsonl, r.profile),
                                                {SamplerId::oracle, SamplerId::cooperative, SamplerId::classical});
  const Confusion& classical = of(m, SamplerId::classical);
  CHECK(classical.failed.size() == 1);
  CHECK(classical.failed.at({Reason::pc_in_stub, line(12)}) == 3);
  CHECK(classical.agreed() == 7);
  CHECK(classical.paired == 10);
  CHECK(classical.really(line(12)) == std::vector<std::pair<SourceLine, uint64_t>>{{line(12), 5}});
  const Confusion& cooperative = of(m, SamplerId::cooperative);
  CHECK(cooperative.agreed() == 9);
  CHECK(cooperative.failed.at({Reason::ring_full, line(11)}) == 1);
  // Every cell off the diagonal is zero: the matrix is its diagonal and the failures.
  for (const auto& [cell, n] : cooperative.lines) CHECK(cell.first == cell.second);
}

TEST_CASE("confusion: an interruption the reference never ended is counted apart", "[confusion]") {
  Run r;
  r.sample(SamplerId::safepoint, 7, {at("work", 18)});
  std::vector<Confusion> m =
      confusion_matrices(read_outcomes(r.jsonl, r.profile), {SamplerId::oracle, SamplerId::safepoint});
  CHECK(m[0].paired == 0);
  CHECK(m[0].reference_missing == 1);
  CHECK(m[0].lines.empty());
}

TEST_CASE("confusion: lines of an imported file, names the writer escapes, frames without a line", "[confusion]") {
  Run r;
  r.profile.files = {"main.mini", "lib.mini"};
  r.profile.function_files["Vec<\"T\">.dot"] = 1;
  r.sample(SamplerId::oracle, 1, {at("Vec<\"T\">.dot", 4), at("main", 3)});
  r.sample(SamplerId::safepoint, 1, {at("main", 4)});
  r.sample(SamplerId::oracle, 2, {FrameRef{"arraycopy", 0, -1, FrameKind::stub}, at("main", 5)});
  r.sample(SamplerId::safepoint, 2, {at("main", 5)});
  REQUIRE(r.jsonl.find("Vec<\\\"T\\\">.dot") != std::string::npos);  // the writer escapes '"'
  std::vector<Confusion> m =
      confusion_matrices(read_outcomes(r.jsonl, r.profile), {SamplerId::oracle, SamplerId::safepoint});
  CHECK(m[0].really(line(4)) == std::vector<std::pair<SourceLine, uint64_t>>{{line(4, 1), 1}});
  CHECK(m[0].really(line(5)) == std::vector<std::pair<SourceLine, uint64_t>>{{line(0), 1}});
}

TEST_CASE("confusion: lines that are not the writer's events are skipped, whatever they hold", "[confusion]") {
  Run r;
  r.sample(SamplerId::oracle, 1, {at("main", 4)});
  r.jsonl += "not json\n{\"event\":\"FailedSample\",\"sampler\":\"safepoint\",\"sample\":\"1\",\"reason\":\"pc_in_stub\"}\n";
  r.jsonl += "{\"event\":\"ExecutionSample\",\"sampler\":\"safepoint\",\"sample\":1,\"stack\":[{\"line\":\"4\"}]}\n";
  r.jsonl += "[1,2]\n{\"event\":7}\n{\"event\":\"FailedSample\",\"sampler\":\"nobody\",\"sample\":1,\"reason\":\"pc_in_stub\"}\n";
  std::vector<Outcome> all = read_outcomes(r.jsonl, r.profile);
  REQUIRE(all.size() == 1);
  CHECK(all[0].sampler == SamplerId::oracle);
  CHECK(all[0].line == line(4));
}

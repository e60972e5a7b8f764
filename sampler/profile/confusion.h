// Where each sampler's samples really came from: every interruption of a run paired
// across samplers by its id (the `sample` field every sampler's event shares under
// --sampler=all), so that a sampler's sample on one line is set against the reference's
// (the oracle's) line for the same interruption. For each sampler but the reference, a
// confusion matrix: how many interruptions it put on line A that the reference put on
// line B (the diagonal is where they agree), and how many it failed on, by reason, that
// the reference put on line B. `minivm compare` prints it and draws it under its heat
// table and in its side panel ("these 90 safepoint samples were really line 12 x86").
//
// A Profile keeps samples aggregated by stack, without their interruptions, so the
// pairing reads the run's .jsonl stream, which has every event with its id.
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sampler/profile/profile.h"

namespace sampler {

// A source line of the program's files (Profile::files); line 0: a top frame with no line
// (a stub or native frame), as compare's row 0.
struct SourceLine {
  uint16_t file = 0;
  uint32_t line = 0;
  auto operator<=>(const SourceLine&) const = default;
};

// How one sampler ended one interruption: a sample whose top frame is on `line`, or a
// failure (a FailedSample, or a DroppedSample its thread's store left out) with its reason.
struct Outcome {
  SamplerId sampler = SamplerId::cooperative;
  uint64_t interruption = 0;
  SourceLine line;
  std::optional<Reason> failed;
};

// The outcomes of the .jsonl events (report_jsonl.cpp's lines): samples, failures and
// drops that carry an interruption id; a function's file is the profile's (file_of).
// Latencies, events without an id and lines that are not such events are skipped.
std::vector<Outcome> read_outcomes(std::string_view jsonl, const Profile& profile);

// One sampler against the reference, interruption by interruption.
struct Confusion {
  SamplerId sampler = SamplerId::cooperative;
  // (this sampler's line, the reference's line) -> interruptions
  std::map<std::pair<SourceLine, SourceLine>, uint64_t> lines;
  // (why this sampler failed, the reference's line) -> interruptions
  std::map<std::pair<Reason, SourceLine>, uint64_t> failed;
  uint64_t paired = 0;             // interruptions in `lines` and `failed`
  uint64_t reference_failed = 0;   // this sampler's interruptions the reference has no line for
  uint64_t reference_missing = 0;  // this sampler's interruptions the reference never ended
  // Of this sampler's samples on `line`, the reference's lines, most first.
  std::vector<std::pair<SourceLine, uint64_t>> really(SourceLine line) const;
  // Of the interruptions the reference put on `line`, where this sampler put them.
  std::vector<std::pair<SourceLine, uint64_t>> moved(SourceLine line) const;
  uint64_t agreed() const;  // the diagonal
};

// A matrix per sampler of `columns` after the first, which is the reference.
std::vector<Confusion> confusion_matrices(const std::vector<Outcome>& outcomes, const std::vector<SamplerId>& columns);

}  // namespace sampler

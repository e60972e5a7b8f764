// The per-line comparison of samplers behind `minivm compare`: for each source line, the
// share of each sampler's samples whose top frame is on it (the oracle's column first,
// the reference the others are measured against), how far each other sampler is from the
// reference in percentage points, and which polls the line holds. The terminal and page
// renderings (vm/cli/compare_command.cpp, report_compare_html.cpp) only lay it out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/poll_kind.h"
#include "sampler/profile/profile.h"

namespace sampler {

using base::PollKind;

// A poll on a source line (runtime::poll_lines, reduced to what the table shows).
struct LinePoll {
  uint32_t line = 0;
  PollKind kind = PollKind::method_return;
  std::string function;
  uint16_t file = 0;  // of the program's files (Profile::files)
};

struct CompareRow {
  uint32_t line = 0;              // 0: a top frame with no line (a stub or native frame)
  uint16_t file = 0;              // the line's file (Profile::files): the program, or a file it imports
  std::vector<uint64_t> counts;   // per column: samples whose top frame is on the line
  std::vector<double> percent;    // per column: of that column's samples (0 when it has none)
  // The largest |percent - reference's percent| over the other columns, and whose.
  double worst_pp = 0;
  std::optional<SamplerId> worst;
  std::vector<PollKind> polls;           // the kinds of poll the line holds, each once
  std::vector<std::string> functions;    // the functions whose frames are on the line
  bool sampled() const;
};

struct CompareTable {
  std::vector<SamplerId> columns;  // the oracle first (the reference), then report order
  std::vector<uint64_t> samples;   // per column: how many samples its shares rest on
  std::vector<CompareRow> rows;    // every line with samples or polls, by file then line; line 0 last
  bool has_oracle = false;         // else the first column is the reference
};

// The table for `profile`'s samples (ExecutionSample and NativeMethodSample, biased ones
// included) and the given polls.
CompareTable compare_lines(const Profile& profile, const std::vector<LinePoll>& polls);

// Indices of the rows where a sampler disagrees most with the reference: at most `k`,
// each at least `min_pp` percentage points off, largest first.
std::vector<size_t> most_disagreeing(const CompareTable& table, size_t k, double min_pp);

}  // namespace sampler

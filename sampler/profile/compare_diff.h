// `minivm compare --diff BEFORE.json AFTER.json`: what changes if. Two runs of compare,
// each saved with `--save FILE` (the document its page embeds: report_compare_html.cpp's
// data), set side by side line by line: every sampler's share of each line before and
// after, and how far it moved, with both runs' configurations stamped on the listing and
// the page, so that a student sees what one flag (--strip-mining, --debug-info,
// --stub-metadata, the interval) did to each sampler.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sampler {

// What a diff reads of one saved compare document.
struct SavedCompare {
  std::string path;        // the file it was read from, as given
  std::string program, mode;
  uint64_t interval_ns = 0;
  double interval_jitter = 0;
  uint64_t duration_ns = 0;
  std::vector<std::string> config;  // configuration_lines: samplers, suspension, code shape, slowdowns
  std::string reference;            // the reference column's label
  std::string banner;               // why the oracle is not exact, or ""
  std::vector<std::string> columns;  // sampler names, the reference first
  std::vector<uint64_t> samples;     // per column: the samples its shares rest on
  std::vector<std::string> source;   // the program's lines
  // The files it imports (path, lines), in key order: file k is imported[k - 1].
  std::vector<std::pair<std::string, std::vector<std::string>>> imported;
  struct Row {
    uint64_t key = 0;  // the line (report_compare_html.cpp's key: file * 2^24 + line; 0 no line)
    std::vector<uint64_t> counts;
    std::vector<double> percent;
    std::string polls;  // the line's poll marks, joined
    std::vector<std::string> functions;
  };
  std::vector<Row> rows;
};

// Reads a document `compare --save` wrote. False with `why` for a file that is not one.
bool read_saved_compare(std::string_view json, SavedCompare& out, std::string& why);

struct DiffRow {
  uint64_t key = 0;
  std::string source;                     // the line's text (the after run's)
  std::string polls_before, polls_after;  // poll marks
  // Per column of the diff: the share before and after (nullopt: the run had no such
  // sampler), and the samples on the line.
  std::vector<std::optional<double>> before, after;
  std::vector<uint64_t> count_before, count_after;
  // The largest move of a share, in points, and whose.
  double most_pp = 0;
  std::string most;
};

struct CompareDiff {
  SavedCompare before, after;
  std::vector<std::string> columns;  // every sampler either run had, the reference first
  std::vector<DiffRow> rows;         // every line either run has, in order
  bool same_program = true;          // the same program path in both
  bool same_source = true;           // the same text in both: lines compared by number otherwise
};

CompareDiff diff_compares(SavedCompare before, SavedCompare after);

// The lines that moved at least this many points under some sampler are marked.
constexpr double kDiffMarkPoints = 5.0;

// Both configurations, then the source lines with a column per sampler, "before -> after"
// and the change in points, the lines that moved most marked.
void write_diff_text(const CompareDiff& diff, std::ostream& out);

// One self-contained page (pages/diff.html): both configurations stamped side by side,
// the source with each sampler's before and after heat and the change, a click on a line
// for its samples before and after under every sampler.
void write_diff_html(const CompareDiff& diff, std::ostream& out);

}  // namespace sampler

#include "sampler/profile/compare_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sampler/profile/json.h"
#include "sampler/profile/pages.h"
#include "sampler/profile/report.h"
#include "sampler/profile/report_text.h"

namespace sampler {

namespace {

constexpr uint64_t kFileStride = uint64_t(1) << 24;  // report_compare_html.cpp's key

template <typename T>
T field(const Json& doc, const char* key) {
  return doc.at(key).get<T>();
}

std::string joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

const std::string& line_text(const SavedCompare& c, uint64_t key) {
  static const std::string none;
  if (key == 0) return none;
  uint64_t file = key / kFileStride, line = key % kFileStride;
  const std::vector<std::string>* lines = &c.source;
  if (file > 0) {
    if (file > c.imported.size()) return none;
    lines = &c.imported[file - 1].second;
  }
  return line >= 1 && line <= lines->size() ? (*lines)[line - 1] : none;
}

// The share of `column` on `row` of `c`, or nullopt when `c` has no such sampler.
std::optional<double> share_of(const SavedCompare& c, const SavedCompare::Row* row, const std::string& column,
                               uint64_t& count) {
  auto it = std::find(c.columns.begin(), c.columns.end(), column);
  count = 0;
  if (it == c.columns.end()) return std::nullopt;
  size_t i = size_t(it - c.columns.begin());
  if (!row || i >= row->percent.size()) return 0.0;
  count = i < row->counts.size() ? row->counts[i] : 0;
  return row->percent[i];
}

// "path: " for a line of a file the program imports (either run's), "" for its own.
std::string file_label(const CompareDiff& d, uint64_t key) {
  uint64_t f = key / kFileStride;
  for (const SavedCompare* c : {&d.after, &d.before})
    if (f > 0 && f <= c->imported.size()) return c->imported[f - 1].first + ": ";
  return "";
}

std::string cell(const std::optional<double>& v) {
  if (!v) return "-";
  return *v == 0 ? "." : fmt::format("{:.1f}", *v);
}

std::string run_line(const SavedCompare& c) {
  std::string jitter = c.interval_jitter > 0 ? fmt::format(" ± {:.0f}%", c.interval_jitter * 100) : "";
  return fmt::format("{}: {}, every {}{} for {:.2f} s; code {}", c.path, c.program, format_duration(c.interval_ns),
                     jitter, double(c.duration_ns) / 1e9, c.mode);
}

}  // namespace

bool read_saved_compare(std::string_view text, SavedCompare& out, std::string& why) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    why = "not a JSON document (a file minivm compare --save wrote)";
    return false;
  }
  try {
    out.program = field<std::string>(doc, "program");
    out.mode = field<std::string>(doc, "mode");
    out.interval_ns = field<uint64_t>(doc, "interval_ns");
    out.interval_jitter = field<double>(doc, "interval_jitter");
    out.duration_ns = field<uint64_t>(doc, "duration_ns");
    out.config = field<std::vector<std::string>>(doc, "config");
    out.reference = field<std::string>(doc, "reference");
    out.banner = field<std::string>(doc, "banner");
    out.columns = field<std::vector<std::string>>(doc, "columns");
    out.samples = field<std::vector<uint64_t>>(doc, "samples");
    out.source = field<std::vector<std::string>>(doc, "source");
    for (const Json& f : doc.at("imported"))
      out.imported.emplace_back(field<std::string>(f, "path"), field<std::vector<std::string>>(f, "source"));
    for (const Json& r : doc.at("rows")) {
      SavedCompare::Row row;
      row.key = field<uint64_t>(r, "line");
      row.counts = field<std::vector<uint64_t>>(r, "c");
      row.percent = field<std::vector<double>>(r, "p");
      row.polls = joined(field<std::vector<std::string>>(r, "polls"), "");
      row.functions = field<std::vector<std::string>>(r, "f");
      if (row.counts.size() != out.columns.size() || row.percent.size() != out.columns.size())
        throw std::runtime_error("a row's shares do not match its columns");
      out.rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    why = std::string("not a document minivm compare --save wrote: ") + e.what();
    return false;
  }
  if (out.columns.empty() || out.samples.size() != out.columns.size()) {
    why = "not a document minivm compare --save wrote: no sampler columns";
    return false;
  }
  return true;
}

CompareDiff diff_compares(SavedCompare before, SavedCompare after) {
  CompareDiff d;
  d.same_program = before.program == after.program;
  d.same_source = before.source == after.source && before.imported == after.imported;
  d.columns = before.columns;
  for (const std::string& c : after.columns)
    if (std::find(d.columns.begin(), d.columns.end(), c) == d.columns.end()) d.columns.push_back(c);
  std::map<uint64_t, std::pair<const SavedCompare::Row*, const SavedCompare::Row*>> lines;
  for (const auto& r : before.rows) lines[r.key].first = &r;
  for (const auto& r : after.rows) lines[r.key].second = &r;
  // Line 0 (stubs, natives: no line) last, as compare's own table has it.
  std::vector<uint64_t> keys;
  for (const auto& [key, rows] : lines)
    if (key != 0) keys.push_back(key);
  if (lines.count(0)) keys.push_back(0);
  for (uint64_t key : keys) {
    auto [b, a] = lines[key];
    DiffRow row;
    row.key = key;
    row.source = a ? line_text(after, key) : line_text(before, key);
    row.polls_before = b ? b->polls : "";
    row.polls_after = a ? a->polls : "";
    for (const std::string& c : d.columns) {
      uint64_t nb = 0, na = 0;
      row.before.push_back(share_of(before, b, c, nb));
      row.after.push_back(share_of(after, a, c, na));
      row.count_before.push_back(nb);
      row.count_after.push_back(na);
      if (row.before.back() && row.after.back()) {
        double moved = *row.after.back() - *row.before.back();
        if (std::fabs(moved) > std::fabs(row.most_pp)) {
          row.most_pp = moved;
          row.most = c;
        }
      }
    }
    d.rows.push_back(std::move(row));
  }
  d.before = std::move(before);
  d.after = std::move(after);
  return d;
}

void write_diff_text(const CompareDiff& d, std::ostream& out) {
  out << "minivm compare --diff: what changed from the first run to the second\n";
  for (const auto& [label, c] : {std::pair{"before:", &d.before}, std::pair{"after:", &d.after}}) {
    out << fmt::format("{:<8}", label) << run_line(*c) << "\n";
    for (const std::string& line : c->config) out << "        " << line << "\n";
    out << "        reference: " << c->reference << "\n";
  }
  if (!d.same_program)
    out << "note: two different programs: their lines are set side by side by number\n";
  else if (!d.same_source)
    out << "note: the program's text changed between the runs: its lines are set side by side by number\n";
  out << "Each cell: % of that sampler's samples whose top frame is on the line, before -> after, and the change in "
         "points; - where a run had no such sampler.\n";
  out << fmt::format("<== marks a line some sampler moved {:.0f} points or more.\n", kDiffMarkPoints);
  size_t n = d.columns.size();
  std::vector<size_t> width(n);
  std::vector<std::string> head(n), counts(n);
  auto samples_of = [](const SavedCompare& c, const std::string& col) -> std::string {
    auto it = std::find(c.columns.begin(), c.columns.end(), col);
    return it == c.columns.end() ? "-" : std::to_string(c.samples[size_t(it - c.columns.begin())]);
  };
  for (size_t i = 0; i < n; i++) {
    counts[i] = "n=" + samples_of(d.before, d.columns[i]) + "->" + samples_of(d.after, d.columns[i]);
    width[i] = std::max({d.columns[i].size(), counts[i].size(), size_t(20)});
  }
  std::string header = fmt::format("{:>5} {:<5}", "line", "poll"), under = fmt::format("{:>5} {:<5}", "", "");
  for (size_t i = 0; i < n; i++) {
    header += fmt::format(" {:>{}}", d.columns[i], width[i]);
    under += fmt::format(" {:>{}}", counts[i], width[i]);
  }
  out << "\n" << header << "   source\n" << under << "\n";
  for (const DiffRow& r : d.rows) {
    std::string polls = r.polls_before == r.polls_after ? r.polls_before : r.polls_before + ">" + r.polls_after;
    std::string line = r.key == 0 ? fmt::format("{:>5} {:<5}", "-", polls)
                                  : fmt::format("{:>5} {:<5}", r.key % kFileStride, polls);
    for (size_t i = 0; i < n; i++) {
      // A sampler with no sample on the line in either run: one dot, as compare's own table.
      bool none = r.before[i] && r.after[i] && *r.before[i] == 0 && *r.after[i] == 0;
      std::string c = none ? "." : cell(r.before[i]) + " -> " + cell(r.after[i]);
      if (r.before[i] && r.after[i] && !none) c += fmt::format(" {:>+6.1f}", *r.after[i] - *r.before[i]);
      line += fmt::format(" {:>{}}", c, width[i]);
    }
    std::string file = file_label(d, r.key);
    line += "   " + (r.key == 0 ? std::string("(no line: stubs and native code)") : file + r.source);
    if (std::fabs(r.most_pp) >= kDiffMarkPoints)
      line += fmt::format("   <== {} {:+.1f} pt", r.most, r.most_pp);
    out << line << "\n";
  }
}

void write_diff_html(const CompareDiff& d, std::ostream& out) {
  auto run = [](const SavedCompare& c) -> Json {
    return {{"path", c.path},
            {"program", c.program},
            {"mode", c.mode},
            {"interval", format_duration(c.interval_ns) +
                             (c.interval_jitter > 0 ? fmt::format(" ± {:.0f}%", c.interval_jitter * 100) : "")},
            {"duration_ns", c.duration_ns},
            {"config", c.config},
            {"reference", c.reference},
            {"banner", c.banner}};
  };
  // Per column of the diff, the samples of the run's own column; null where it has none.
  auto samples = [&](const SavedCompare& c) {
    Json s = Json::array();
    for (const std::string& column : d.columns) {
      auto it = std::find(c.columns.begin(), c.columns.end(), column);
      s.push_back(it == c.columns.end() ? Json(nullptr) : Json(c.samples[size_t(it - c.columns.begin())]));
    }
    return s;
  };
  auto shares = [](const std::vector<std::optional<double>>& v) {
    Json s = Json::array();
    for (const std::optional<double>& share : v) s.push_back(share ? Json(rounded(*share, 2)) : Json(nullptr));
    return s;
  };
  Json rows = Json::array();
  for (const DiffRow& r : d.rows)
    rows.push_back({{"line", r.key % kFileStride},
                    {"file", r.key / kFileStride},
                    {"src", file_label(d, r.key) + r.source},
                    {"pb", r.polls_before},
                    {"pa", r.polls_after},
                    {"b", shares(r.before)},
                    {"a", shares(r.after)},
                    {"cb", r.count_before},
                    {"ca", r.count_after}});
  Json data = {{"before", run(d.before)},
               {"after", run(d.after)},
               {"columns", d.columns},
               {"samplesBefore", samples(d.before)},
               {"samplesAfter", samples(d.after)},
               {"sameProgram", d.same_program},
               {"sameSource", d.same_source},
               {"markPoints", kDiffMarkPoints},
               {"rows", std::move(rows)}};
  pages::write_page(pages::kdiff_page, "minivm compare --diff: " + d.after.program, data, out);
}

}  // namespace sampler

#include "sampler/profile/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sampler/profile/report.h"

namespace sampler {

bool CompareRow::sampled() const {
  return std::any_of(counts.begin(), counts.end(), [](uint64_t n) { return n > 0; });
}

namespace {

// The program's files in order, each file's lines ascending; line 0 (no line) last.
uint64_t line_order(uint16_t file, uint32_t line) { return line == 0 ? UINT64_MAX : uint64_t(file) << 32 | line; }

}  // namespace

CompareTable compare_lines(const Profile& profile, const std::vector<LinePoll>& polls) {
  CompareTable t;
  std::vector<SamplerId> order = report_samplers(profile);
  auto oracle = std::find(order.begin(), order.end(), SamplerId::oracle);
  t.has_oracle = oracle != order.end();
  if (t.has_oracle) t.columns.push_back(SamplerId::oracle);
  for (SamplerId s : order)
    if (s != SamplerId::oracle) t.columns.push_back(s);
  size_t n = t.columns.size();
  t.samples.assign(n, 0);

  std::map<uint64_t, CompareRow> rows;  // by line_order
  auto row = [&](uint16_t file, uint32_t line) -> CompareRow& {
    CompareRow& r = rows[line_order(file, line)];
    r.line = line;
    r.file = line == 0 ? 0 : file;
    r.counts.resize(n, 0);
    return r;
  };
  for (const Event& e : profile.events) {
    if (!is_stack_sample(e)) continue;
    auto col = std::find(t.columns.begin(), t.columns.end(), e.sampler);
    if (col == t.columns.end()) continue;
    size_t c = size_t(col - t.columns.begin());
    const StackTrace& stack = event_stack(profile, e);
    uint32_t line = stack.empty() ? 0 : stack[0].line;
    CompareRow& r = row(stack.empty() ? 0 : profile.file_of(stack[0].function), line);
    r.counts[c] += e.count;
    t.samples[c] += e.count;
    std::string fn = stack.empty() ? std::string(kNoFramesLabel) : function_name(stack[0]);
    if (std::find(r.functions.begin(), r.functions.end(), fn) == r.functions.end()) r.functions.push_back(fn);
  }
  for (const LinePoll& p : polls) {
    CompareRow& r = row(p.file, p.line);
    if (std::find(r.polls.begin(), r.polls.end(), p.kind) == r.polls.end()) r.polls.push_back(p.kind);
    if (std::find(r.functions.begin(), r.functions.end(), p.function) == r.functions.end())
      r.functions.push_back(p.function);
  }
  for (auto& [key, r] : rows) {
    r.percent.resize(n, 0);
    for (size_t c = 0; c < n; c++) r.percent[c] = t.samples[c] ? 100.0 * double(r.counts[c]) / double(t.samples[c]) : 0;
    std::sort(r.polls.begin(), r.polls.end());
    for (size_t c = 1; c < n; c++) {
      if (t.samples[c] == 0 || t.samples[0] == 0) continue;  // nothing to compare with
      double d = std::fabs(r.percent[c] - r.percent[0]);
      if (d > r.worst_pp) {
        r.worst_pp = d;
        r.worst = t.columns[c];
      }
    }
    t.rows.push_back(std::move(r));
  }
  return t;
}

std::vector<size_t> most_disagreeing(const CompareTable& table, size_t k, double min_pp) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < table.rows.size(); i++)
    if (table.rows[i].worst && table.rows[i].worst_pp >= min_pp) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return table.rows[a].worst_pp > table.rows[b].worst_pp; });
  if (idx.size() > k) idx.resize(k);
  return idx;
}

}  // namespace sampler

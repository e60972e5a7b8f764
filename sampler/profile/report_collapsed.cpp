// FlameGraph folded stacks (`--profile-out FILE.collapsed`), and the stack folding the
// other writers share: which samplers a report covers, frame labels, folded counts.
//
// Format: one line per distinct stack, `root;caller;...;top COUNT`, lines sorted by the
// stack text (as stackcollapse-*.pl produce them). Frames are `function`, or
// `function:line` with --profile-lines. When the profile holds MORE THAN ONE sampler
// (--sampler=all), every stack gets the sampler's name as an extra root frame, e.g.
// `cooperative;main;compute 40` and `classical;main;compute 38`, so that one file (and one
// flamegraph.pl run) shows each method side by side under its own root. With a single
// sampler there is no such prefix. async-profiler's options shape the stacks
// (ReportOptions): -I/-X keep some, -t puts each thread's under a root frame of its own,
// --total counts nanoseconds, -a suffixes frames with their type.
#include <algorithm>
#include <ostream>
#include <set>

#include "sampler/profile/report.h"

namespace sampler {

std::vector<SamplerId> report_samplers(const Profile& p) {
  std::vector<SamplerId> out;
  std::set<SamplerId> seen;
  auto add = [&](SamplerId s) {
    if (seen.insert(s).second) out.push_back(s);
  };
  for (const auto& s : p.samplers) add(s);
  for (const auto& e : p.events) add(e.sampler);
  for (const auto& [name, stats] : p.stats) add(name);
  return out;
}

const SamplerStats& stats_of(const Profile& p, SamplerId sampler) {
  static const SamplerStats none;
  auto it = p.stats.find(sampler);
  return it == p.stats.end() ? none : it->second;
}

const StackTrace& stack_of_id(const Profile& p, uint32_t id) {
  static const StackTrace empty;
  return id < p.stacks.size() ? p.stacks.get(id) : empty;
}

const StackTrace& event_stack(const Profile& p, const Event& e) {
  static const StackTrace empty;
  return !has_stack(e.type) ? empty : stack_of_id(p, e.stack);
}

std::vector<std::pair<uint32_t, uint64_t>> count_stacks(const Profile& p,
                                                        SamplerId sampler) {
  std::map<uint32_t, uint64_t> counts;
  for (const Event& e : p.events)
    if (is_stack_sample(e) && e.sampler == sampler) counts[e.stack] += e.count;
  return {counts.begin(), counts.end()};
}

std::string frame_label(const FrameRef& f, bool lines) {
  FrameRef own = f;
  own.kind = FrameKind::jit;  // the name alone: sanitized before the kind is added
  std::string s = function_name(own);
  for (char& c : s) {
    if (c == ';' || static_cast<unsigned char>(c) <= ' ' || c == '\x7f') c = '_';
  }
  if (!has_source_line(f)) return s + " (" + frame_kind_name(f.kind) + ")";
  if (lines) {
    s += ':';
    s += f.line == 0 ? std::string("?") : std::to_string(f.line);
  }
  return s;
}

static std::string sanitize_root(const std::string& name) {
  FrameRef f;
  f.function = name;
  return frame_label(f, false);
}

bool pattern_matches(std::string_view pattern, std::string_view name) {
  bool any_before = !pattern.empty() && pattern.front() == '*';
  if (any_before) pattern.remove_prefix(1);
  bool any_after = !pattern.empty() && pattern.back() == '*';
  if (any_after) pattern.remove_suffix(1);
  if (any_before && any_after) return name.find(pattern) != std::string_view::npos;
  if (any_before) return name.ends_with(pattern);
  if (any_after) return name.starts_with(pattern);
  return name == pattern;
}

std::string thread_label(int thread) { return thread == 0 ? "[main]" : "[thread_" + std::to_string(thread) + "]"; }

std::vector<ShownStack> shown_stacks(const Profile& p, SamplerId sampler, const ReportOptions& opt) {
  // async-profiler's rule: kept when some frame matches an include pattern (if any are
  // given) and no frame matches an exclude pattern.
  auto kept = [&](uint32_t id) {
    if (opt.include.empty() && opt.exclude.empty()) return true;
    bool included = opt.include.empty();
    for (const FrameRef& f : stack_of_id(p, id)) {
      std::string name = function_name(f);
      for (const std::string& x : opt.exclude)
        if (pattern_matches(x, name)) return false;
      for (const std::string& i : opt.include) included = included || pattern_matches(i, name);
    }
    return included;
  };
  std::map<std::pair<int, uint32_t>, uint64_t> counts;
  std::map<uint32_t, bool> keep;
  for (const Event& e : p.events) {
    if (!is_stack_sample(e) || e.sampler != sampler) continue;
    auto [it, fresh] = keep.try_emplace(e.stack, false);
    if (fresh) it->second = kept(e.stack);
    if (it->second) counts[{opt.threads ? e.thread : -1, e.stack}] += e.count;
  }
  std::vector<ShownStack> out;
  for (const auto& [key, count] : counts) out.push_back({key.first, key.second, count});
  return out;
}

namespace {
// -a's suffix: the frame's type as async-profiler annotates it (one compiled tier: _[j]).
const char* annotation(FrameKind kind) {
  switch (kind) {
    case FrameKind::interp: return "_[0]";
    case FrameKind::jit: return "_[j]";
    case FrameKind::inlined: return "_[i]";
    default: return "";  // native, stub and C/C++ frames already say what they are
  }
}
}  // namespace

std::map<std::string, uint64_t> fold_stacks(const Profile& p, SamplerId sampler, const ReportOptions& opt) {
  std::map<std::string, uint64_t> folded;
  std::string key;
  // --total: each sample stands for the mean interval's time.
  uint64_t weight = opt.total ? std::max<uint64_t>(p.interval_ns, 1) : 1;
  for (const ShownStack& s : shown_stacks(p, sampler, opt)) {
    const StackTrace& st = stack_of_id(p, s.stack);
    key.clear();
    if (s.thread >= 0) key = thread_label(s.thread) + ";";
    if (p.stacks.truncated(s.stack)) key += std::string(kTruncatedLabel) + (st.empty() ? "" : ";");
    if (st.empty()) key += kNoFramesLabel;
    for (size_t i = st.size(); i-- > 0;) {  // stacks are top first; folded lines root first
      key += frame_label(st[i], opt.lines);
      if (opt.annotate) key += annotation(st[i].kind);
      if (i != 0) key += ';';
    }
    folded[key] += s.count * weight;
  }
  return folded;
}

std::map<std::string, uint64_t> fold_stacks(const Profile& p, SamplerId sampler, bool lines) {
  ReportOptions opt;
  opt.lines = lines;
  return fold_stacks(p, sampler, opt);
}

void write_collapsed(const Profile& p, std::ostream& out, const ReportOptions& opt) {
  std::vector<SamplerId> samplers = report_samplers(p);
  // Several samplers: prefix each stack with the sampler's name as a root frame.
  bool prefix = samplers.size() > 1;
  std::string buf;
  for (SamplerId s : samplers) {
    std::string root = prefix ? sanitize_root(sampler_name(s)) + ";" : std::string();
    for (const auto& [stack, count] : fold_stacks(p, s, opt)) {
      buf += root;
      buf += stack;
      buf += ' ';
      buf += std::to_string(count);
      buf += '\n';
      if (buf.size() > (1 << 16)) {
        out << buf;
        buf.clear();
      }
    }
  }
  out << buf;
}

}  // namespace sampler

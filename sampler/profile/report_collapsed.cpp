// FlameGraph folded stacks (`--profile-out FILE.collapsed`), and the stack folding the
// other writers share: which samplers a report covers, frame labels, folded counts.
//
// Format: one line per distinct stack, `root;caller;...;top COUNT`, lines sorted by the
// stack text (as stackcollapse-*.pl produce them). Frames are `function`, or
// `function:line` with --profile-lines. When the profile holds MORE THAN ONE sampler
// (--sampler=all), every stack gets the sampler's name as an extra root frame, e.g.
// `cooperative;main;compute 40` and `classical;main;compute 38`, so that one file (and one
// flamegraph.pl run) shows each method side by side under its own root. With a single
// sampler there is no such prefix.
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

std::map<std::string, uint64_t> fold_stacks(const Profile& p, SamplerId sampler,
                                            bool lines) {
  std::map<std::string, uint64_t> folded;
  std::string key;
  for (const auto& [id, count] : count_stacks(p, sampler)) {
    const StackTrace& st = stack_of_id(p, id);
    key.clear();
    if (p.stacks.truncated(id)) key = std::string(kTruncatedLabel) + (st.empty() ? "" : ";");
    if (st.empty()) key += kNoFramesLabel;
    for (size_t i = st.size(); i-- > 0;) {  // stacks are top first; folded lines root first
      key += frame_label(st[i], lines);
      if (i != 0) key += ';';
    }
    folded[key] += count;
  }
  return folded;
}

void write_collapsed(const Profile& p, std::ostream& out, const ReportOptions& opt) {
  std::vector<SamplerId> samplers = report_samplers(p);
  // Several samplers: prefix each stack with the sampler's name as a root frame.
  bool prefix = samplers.size() > 1;
  std::string buf;
  for (SamplerId s : samplers) {
    std::string root = prefix ? sanitize_root(sampler_name(s)) + ";" : std::string();
    for (const auto& [stack, count] : fold_stacks(p, s, opt.lines)) {
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

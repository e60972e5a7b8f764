// A self-contained interactive flame graph (`--profile-out FILE.html`): the page
// pages/flame.html (its CSS and JS inlined at build time) with the profile embedded as
// JSON; no network needed to view it.
// Icicle layout (the root at the top, callees below) or, toggled, flame layout (the root
// at the bottom); width = samples. Click a frame to zoom into it (its callers stay,
// dimmed; click one, the root or "reset" to zoom out); the search box (text, or /regex/)
// highlights matching frames and shows the share of samples containing one, and next /
// previous (the buttons, Enter / Shift+Enter) step through the matches, zooming to one
// that is out of view; the reverse view turns the tree upside down (the page builds it
// from the embedded one): its first row is the frames samples were taken in (self time),
// below each its callers. Hovering shows function, line(s), samples, self and percent.
// Under several samplers a selector switches between them.
//
// async-profiler's options shape it (ReportOptions): --title names the page, --minwidth
// leaves out frames under that share of the samples, --reverse opens the reverse view,
// -t puts each thread's stacks under a root frame of its own, -I/-X keep some stacks.
//
// Embedded data (id="profile-data"): {"program","title","reverse": open in the reverse
// view,"lines","interval_ns","duration_ns",
// "rate": the interruption rate against the one asked for (format_rate, report.h; "" when
// nothing was asked), "rate_short": [why it fell short, each cause with its numbers],
// "kinds":[{"name","hue"}, per frame kind in FrameKind order: base/frame_kinds.def],
// "names":[function names], "samplers":[{"name","interruptions","samples","biased",
// "failed","dropped","root":NODE}]}, NODE = {"f": index into names (-1 for the root),
// "v": samples through it, "s": samples with it on top, "k": samples per frame kind
// (in "kinds" order), "l": its line (--profile-lines only), "L": [[line,
// samples],...] (without --profile-lines: which lines of the function, most first),
// "c": [children, sorted by label]}.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <unordered_map>

#include "sampler/profile/pages.h"
#include "sampler/profile/report.h"

namespace sampler {

namespace {

struct Node {
  std::string function;
  uint32_t line = 0;
  uint64_t total = 0, self = 0;
  uint64_t kinds[kFrameKindCount] = {};
  std::map<uint32_t, uint64_t> lines;
  std::map<std::string, std::unique_ptr<Node>> children;  // by label: sorted output
};

Node build_tree(const Profile& p, SamplerId sampler, const ReportOptions& opt) {
  Node root;
  bool with_lines = opt.lines;
  for (const ShownStack& s : shown_stacks(p, sampler, opt)) {  // each distinct stack once
    uint32_t id = s.stack;
    const StackTrace& st = stack_of_id(p, id);
    const uint64_t c = s.count;
    Node* n = &root;
    n->total += c;
    auto step = [&](const std::string& label, const std::string& fn, uint32_t line,
                    FrameKind kind) {
      auto& slot = n->children[label];
      if (!slot) {
        slot = std::make_unique<Node>();
        slot->function = fn;
        slot->line = with_lines ? line : 0;
      }
      n = slot.get();
      n->total += c;
      n->kinds[static_cast<size_t>(kind)] += c;
      if (!with_lines) n->lines[line] += c;
    };
    if (s.thread >= 0) step(thread_label(s.thread), thread_label(s.thread), 0, FrameKind::stub);
    if (p.stacks.truncated(id)) step(kTruncatedLabel, kTruncatedLabel, 0, FrameKind::stub);
    if (st.empty()) step(kNoFramesLabel, kNoFramesLabel, 0, FrameKind::stub);
    for (size_t i = st.size(); i-- > 0;) {
      const FrameRef& f = st[i];
      step(frame_label(f, with_lines), function_name(f), f.line, f.kind);
    }
    n->self += c;
  }
  return root;
}

class TreeWriter {
 public:
  TreeWriter(std::string& out, bool lines) : out_(out), lines_(lines) {}

  // `least`: a child with fewer samples is left out (--minwidth).
  void node(const Node& n, bool is_root, uint64_t least = 0) {
    out_ += "{\"f\":";
    out_ += is_root ? "-1" : std::to_string(name_id(n.function));
    out_ += ",\"v\":" + std::to_string(n.total) + ",\"s\":" + std::to_string(n.self);
    if (!is_root) {
      out_ += ",\"k\":[";
      for (size_t i = 0; i < kFrameKindCount; ++i) out_ += (i ? "," : "") + std::to_string(n.kinds[i]);
      out_ += ']';
      if (lines_) {
        out_ += ",\"l\":" + std::to_string(n.line);
      } else {
        std::vector<std::pair<uint32_t, uint64_t>> ls(n.lines.begin(), n.lines.end());
        std::stable_sort(ls.begin(), ls.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        out_ += ",\"L\":[";
        for (size_t i = 0; i < ls.size(); ++i)
          out_ += fmt_pair(i, ls[i].first, ls[i].second);
        out_ += ']';
      }
    }
    bool first = true;
    for (const auto& [label, child] : n.children) {
      if (child->total < least) continue;
      out_ += first ? ",\"c\":[" : ",";
      first = false;
      node(*child, false, least);
    }
    if (!first) out_ += ']';
    out_ += '}';
  }

  std::string names_json() const {
    std::string s = "[";
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i) s += ',';
      append_json_string(s, names_[i]);
    }
    return s + "]";
  }

 private:
  static std::string fmt_pair(size_t i, uint32_t a, uint64_t b) {
    return (i ? ",[" : "[") + std::to_string(a) + "," + std::to_string(b) + "]";
  }
  size_t name_id(const std::string& name) {
    auto [it, inserted] = ids_.emplace(name, names_.size());
    if (inserted) names_.push_back(name);
    return it->second;
  }
  std::string& out_;
  bool lines_;
  std::unordered_map<std::string, size_t> ids_;
  std::vector<std::string> names_;
};



}  // namespace

void write_html(const Profile& p, std::ostream& out, const ReportOptions& opt) {
  std::vector<SamplerId> samplers = report_samplers(p);
  std::string program = p.program.empty() ? std::string("(unnamed program)") : p.program;

  std::string samplers_json, names;
  {
    std::string body;
    TreeWriter tw(body, opt.lines);
    for (size_t i = 0; i < samplers.size(); ++i) {
      SamplerId s = samplers[i];
      const SamplerStats& st = stats_of(p, s);
      Node root = build_tree(p, s, opt);
      if (i) body += ",\n";
      body += "{\"name\":";
      append_json_string(body, sampler_name(s));
      body += ",\"interruptions\":" + std::to_string(st.interruptions);
      body += ",\"samples\":" + std::to_string(root.total);
      body += ",\"biased\":" + std::to_string(total(st.biased));
      body += ",\"failed\":" + std::to_string(total(st.failed));
      body += ",\"dropped\":" + std::to_string(total(st.dropped));
      body += ",\"root\":";
      // --minwidth: a frame under that share of the samples is not drawn, nor its callees.
      tw.node(root, true, uint64_t(std::ceil(double(root.total) * opt.min_width / 100)));
      body += '}';
    }
    samplers_json = std::move(body);
    names = tw.names_json();
  }

  std::string doc = "{\"program\":";
  append_json_string(doc, program);
  std::string title = opt.title.empty() ? "minivm profile: " + program : opt.title;
  doc += ",\"title\":";
  append_json_string(doc, title);
  doc += ",\"reverse\":";
  doc += opt.reverse ? "true" : "false";
  doc += ",\"lines\":";
  doc += opt.lines ? "true" : "false";
  doc += ",\"interval_ns\":" + std::to_string(p.interval_ns);
  doc += ",\"duration_ns\":" + std::to_string(p.duration_ns);
  SamplingRate rate = sampling_rate(p);
  doc += ",\"rate\":";
  append_json_string(doc, rate.asked ? format_rate(rate) : "");
  doc += ",\"rate_short\":[";
  std::vector<std::string> causes = rate_shortfall(p, rate);
  for (size_t i = 0; i < causes.size(); i++) {
    if (i) doc += ',';
    append_json_string(doc, causes[i]);
  }
  doc += ']';
  doc += ",\n\"kinds\":[";
  for (size_t k = 0; k < kFrameKindCount; k++)
    doc += fmt::format("{}{{\"name\":\"{}\",\"hue\":{}}}", k ? "," : "", frame_kind_name(FrameKind(k)),
                       frame_kind_hue(FrameKind(k)));
  doc += ']';
  doc += ",\n\"names\":" + names;
  doc += ",\n\"samplers\":[\n" + samplers_json + "]}";
  pages::write_page(pages::kflame_page, title, doc, out);
}

}  // namespace sampler

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
#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <unordered_map>

#include "sampler/profile/json.h"
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
  explicit TreeWriter(bool lines) : lines_(lines) {}

  // `least`: a child with fewer samples is left out (--minwidth).
  Json node(const Node& n, bool is_root, uint64_t least = 0) {
    Json out = {{"f", is_root ? -1 : int64_t(name_id(n.function))}, {"v", n.total}, {"s", n.self}};
    if (!is_root) {
      out["k"] = n.kinds;
      if (lines_) {
        out["l"] = n.line;
      } else {
        std::vector<std::pair<uint32_t, uint64_t>> ls(n.lines.begin(), n.lines.end());
        std::stable_sort(ls.begin(), ls.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        out["L"] = ls;  // [[line, samples], ...]
      }
    }
    Json children = Json::array();
    for (const auto& [label, child] : n.children)
      if (child->total >= least) children.push_back(node(*child, false, least));
    if (!children.empty()) out["c"] = std::move(children);
    return out;
  }

  const std::vector<std::string>& names() const { return names_; }

 private:
  size_t name_id(const std::string& name) {
    auto [it, inserted] = ids_.emplace(name, names_.size());
    if (inserted) names_.push_back(name);
    return it->second;
  }
  bool lines_;
  std::unordered_map<std::string, size_t> ids_;
  std::vector<std::string> names_;
};

}  // namespace

void write_html(const Profile& p, std::ostream& out, const ReportOptions& opt) {
  std::string program = p.program.empty() ? std::string("(unnamed program)") : p.program;
  TreeWriter tw(opt.lines);
  Json samplers = Json::array();
  for (SamplerId s : report_samplers(p)) {
    const SamplerStats& st = stats_of(p, s);
    Node root = build_tree(p, s, opt);
    samplers.push_back({{"name", sampler_name(s)},
                        {"interruptions", st.interruptions},
                        {"samples", root.total},
                        {"biased", total(st.biased)},
                        {"failed", total(st.failed)},
                        {"dropped", total(st.dropped)},
                        // --minwidth: a frame under that share of the samples is not drawn, nor its callees.
                        {"root", tw.node(root, true, uint64_t(std::ceil(double(root.total) * opt.min_width / 100)))}});
  }
  Json kinds = Json::array();
  for (size_t k = 0; k < kFrameKindCount; k++)
    kinds.push_back({{"name", frame_kind_name(FrameKind(k))}, {"hue", frame_kind_hue(FrameKind(k))}});
  std::string title = opt.title.empty() ? "minivm profile: " + program : opt.title;
  SamplingRate rate = sampling_rate(p);
  Json doc = {{"program", program},
              {"title", title},
              {"reverse", opt.reverse},
              {"lines", opt.lines},
              {"interval_ns", p.interval_ns},
              {"duration_ns", p.duration_ns},
              {"rate", rate.asked ? format_rate(rate) : ""},
              {"rate_short", rate_shortfall(p, rate)},
              {"kinds", std::move(kinds)},
              {"names", tw.names()},
              {"samplers", std::move(samplers)}};
  pages::write_page(pages::kflame_page, title, doc, out);
}

}  // namespace sampler

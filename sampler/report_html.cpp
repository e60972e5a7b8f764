// A self-contained interactive flame graph (`--profile-out FILE.html`): one HTML file with
// inline CSS and JS and the profile embedded as JSON; no network needed to view it.
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
// Embedded data (id="profile-data"): {"program","lines","interval_ns","duration_ns",
// "rate": the interruption rate against the one asked for (format_rate, report.h; "" when
// nothing was asked), "rate_short": [why it fell short, each cause with its numbers],
// "kinds":[{"name","hue"}, per frame kind in FrameKind order: runtime/frame_kinds.def],
// "names":[function names], "samplers":[{"name","interruptions","samples","biased",
// "failed","dropped","root":NODE}]}, NODE = {"f": index into names (-1 for the root),
// "v": samples through it, "s": samples with it on top, "k": samples per frame kind
// (in "kinds" order), "l": its line (--profile-lines only), "L": [[line,
// samples],...] (without --profile-lines: which lines of the function, most first),
// "c": [children, sorted by label]}.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <unordered_map>

#include "sampler/report.h"

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

Node build_tree(const Profile& p, SamplerId sampler, bool with_lines) {
  Node root;
  for (const auto& [id, count] : count_stacks(p, sampler)) {  // each distinct stack once
    const StackTrace& st = stack_of_id(p, id);
    const uint64_t c = count;
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

  void node(const Node& n, bool is_root) {
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
    if (!n.children.empty()) {
      out_ += ",\"c\":[";
      bool first = true;
      for (const auto& [label, child] : n.children) {
        if (!first) out_ += ',';
        first = false;
        node(*child, false);
      }
      out_ += ']';
    }
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


std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

const char* kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>)HTML";

const char* kStyleAndBody = R"HTML(</title>
<style>
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;background:#fbfbfb}
header{padding:10px 14px 8px;background:#fff;border-bottom:1px solid #ddd}
h1{font-size:16px;margin:0 0 6px;font-weight:600}
.bar{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center}
input,select,button{font:inherit;padding:2px 6px}
#search{width:17em}
#stats{color:#444}
#info{color:#a11aa1;font-weight:600}
#help{color:#666;font-size:12px;margin-top:5px}
#graph{position:relative;margin:10px 14px;min-height:30px}
.f{position:absolute;height:17px;line-height:17px;padding:0 4px;overflow:hidden;white-space:nowrap;
 text-overflow:ellipsis;font:11.5px ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;color:#111;
 border-radius:2px;cursor:pointer}
.f:hover{outline:1px solid #222;z-index:1}
.f.dim{opacity:.45}
.f.match{background:#d726d7!important;color:#fff}
.f.cur{outline:3px solid #111;z-index:2}
button.on{background:#333;color:#fff;border-color:#333}
.empty{color:#666;font-style:italic;margin:0}
#legend{margin:0 14px 14px;color:#555;font-size:12px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin:0 4px 0 12px;vertical-align:-1px}
#tip{position:fixed;display:none;pointer-events:none;z-index:10;max-width:70vw;white-space:pre;
 background:rgba(25,25,25,.93);color:#f3f3f3;padding:6px 9px;border-radius:4px;font:12px/1.45 ui-monospace,"DejaVu Sans Mono",monospace}
</style>
</head>
<body>
<header>
<h1 id="title"></h1>
<div class="bar">
<label id="pick">sampler <select id="sampler"></select></label>
<input id="search" type="search" placeholder="search: text or /regex/" autocomplete="off">
<button id="prev" type="button" title="previous match (Shift+Enter)">&#9664;</button>
<button id="next" type="button" title="next match (Enter)">&#9654;</button>
<button id="reset" type="button">reset</button>
<button id="flame" type="button" title="flame: the root at the bottom; icicle: at the top">flame</button>
<button id="reverse" type="button" title="callers view: the frames samples were taken in first, their callers below">reverse</button>
<span id="info"></span>
</div>
<div class="bar"><span id="stats"></span></div>
<div class="bar"><span id="rate"></span></div>
<div id="help"><span id="layout"></span>; width = samples.
Click a bar to zoom in, click the outermost bar or <b>reset</b> (Esc) to zoom out. Search, then Enter / Shift+Enter
(or &#9664; &#9654;) for the next / previous match. <b>flame</b> turns the graph upside down; <b>reverse</b> shows callers. Hover for counts.</div>
</header>
<div id="graph"></div>
<div id="legend"></div>
<div id="tip"></div>
<script type="application/json" id="profile-data">)HTML";

const char* kScript = R"HTML(</script>
<script>
(function () {
'use strict';
const D = JSON.parse(document.getElementById('profile-data').textContent);
const KINDS = D.kinds.map((k) => k.name);  // runtime/frame_kinds.def, in FrameKind order
const HUE = D.kinds.map((k) => k.hue);      // -1: grey
const ROW = 18;
const $ = (id) => document.getElementById(id);
const graph = $('graph'), tip = $('tip'), sel = $('sampler'), search = $('search');
const info = $('info'), stats = $('stats');
let cur = null, zoom = null, boxes = [], lastW = 0;
let flame = false, reversed = false, matches = [], at = -1;

// Parent links, without recursion (stacks can be deep).
for (const s of D.samplers) {
  s.root.p = null;
  const todo = [s.root];
  while (todo.length) {
    const n = todo.pop();
    for (const c of n.c || []) { c.p = n; todo.push(c); }
  }
}

const fname = (n) => (n.f < 0 ? 'all' : D.names[n.f]);
const label = (n) => (n.f < 0 ? 'all ' + n.v + ' samples (' + cur.name + (reversed ? ', callers' : '') + ')'
                              : D.lines && n.l ? fname(n) + ':' + n.l : fname(n));  // natives and stubs have no line
const pct = (a, b) => (b ? (100 * a / b).toFixed(1) + '%' : 'n/a');
function mainKind(n) {
  let best = -1, bi = 0;
  (n.k || []).forEach((v, i) => { if (v > best) { best = v; bi = i; } });
  return bi;
}
function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}
function color(n) {
  if (n.f < 0) return '#cfcfcf';
  const k = mainKind(n), h = hash(fname(n));
  if (HUE[k] < 0) return 'hsl(0,0%,' + (66 + h % 10) + '%)';
  return 'hsl(' + (HUE[k] + h % 15 - 7) + ',' + (58 + h % 22) + '%,' + (60 + (h >>> 8) % 13) + '%)';
}

// The callers view of a sampler's tree, built once: one path per node with self samples,
// from that frame out to the outermost caller; s = samples whose stack ends there.
function reverseOf(s) {
  if (s.rev) return s.rev;
  const r = {f: -1, v: 0, s: 0, p: null, m: new Map()};
  const todo = [s.root];
  while (todo.length) {
    const n = todo.pop();
    for (const c of n.c || []) todo.push(c);
    if (!n.s || n.f < 0) continue;
    let inv = r;
    r.v += n.s;
    for (let a = n; a && a.f >= 0; a = a.p) {
      const key = D.lines ? a.f + ':' + a.l : '' + a.f;
      let c = inv.m.get(key);
      if (!c) {
        c = {f: a.f, l: a.l, v: 0, s: 0, k: KINDS.map(() => 0), p: inv, m: new Map()};
        inv.m.set(key, c);
      }
      c.v += n.s;
      c.k[mainKind(a)] += n.s;
      inv = c;
    }
    inv.s += n.s;
  }
  const all = [r];
  while (all.length) {
    const n = all.pop();
    n.c = [...n.m.values()].sort((a, b) => (label(a) < label(b) ? -1 : label(a) > label(b) ? 1 : 0));
    delete n.m;
    all.push(...n.c);
  }
  return (s.rev = r);
}
const top = () => (reversed ? reverseOf(cur) : cur.root);

function add(frag, n, x, w, row, dim) {
  const d = document.createElement('div');
  d.className = dim ? 'f dim' : 'f';
  d.style.cssText = 'left:' + x + 'px;width:' + Math.max(w - 1, 0.5) + 'px;background:' + color(n);
  if (w > 30) d.textContent = label(n);
  d.node = n;
  d.row = row;
  boxes.push(d);
  frag.appendChild(d);
}

function render() {
  hideTip();
  graph.textContent = '';
  boxes = [];
  if (!cur || !cur.root.v) {
    graph.style.height = '';
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = cur ? 'No samples for sampler "' + cur.name + '".' : 'No samples: no sampler ran.';
    graph.appendChild(p);
    updateSearch();
    return;
  }
  const W = lastW = graph.clientWidth, z = zoom || top(), frag = document.createDocumentFragment();
  const anc = [];
  for (let a = z.p; a; a = a.p) anc.unshift(a);
  anc.forEach((a, i) => add(frag, a, 0, W, i, true));
  const scale = W / z.v;
  let maxRow = anc.length;
  const todo = [[z, 0, anc.length]];
  while (todo.length) {
    const [n, x, row] = todo.pop();
    const w = n.v * scale;
    if (w < 0.5) continue;  // too thin to see (still counted in its parent's width)
    add(frag, n, x, w, row, false);
    maxRow = Math.max(maxRow, row);
    let cx = x;
    for (const c of n.c || []) { todo.push([c, cx, row + 1]); cx += c.v * scale; }
  }
  for (const d of boxes) d.style.top = (flame ? maxRow - d.row : d.row) * ROW + 'px';
  graph.style.height = (maxRow + 1) * ROW + 'px';
  graph.appendChild(frag);
  $('layout').textContent = reversed
      ? 'Callers view: the ' + (flame ? 'bottom' : 'first') + ' row is the frames samples were taken in (self time); ' +
        (flame ? 'above' : 'below') + ' each bar, its callers'
      : (flame ? 'Flame graph: each bar is a function, its callees above it, its callers below'
               : 'Icicle graph: each bar is a function, its callers above it, its callees below');
  updateSearch();
}

function matcher() {
  const t = search.value.trim();
  if (!t) return null;
  if (t.length > 2 && t[0] === '/' && t.endsWith('/')) {
    try { const re = new RegExp(t.slice(1, -1)); return (s) => re.test(s); }
    catch (e) { return 'bad'; }
  }
  const lt = t.toLowerCase();
  return (s) => s.toLowerCase().includes(lt);
}

function updateSearch() {
  const m = matcher();
  if (m === 'bad') { info.textContent = 'invalid regular expression'; return; }
  for (const d of boxes) {
    d.classList.toggle('match', !!m && d.node.f >= 0 && m(label(d.node)));
    d.classList.toggle('cur', at >= 0 && d.node === matches[at]);
  }
  if (!m || !cur) { info.textContent = ''; matches = []; at = -1; return; }
  // Every matching frame, depth first and left to right (for next / previous); samples
  // with a matching frame: the matching frames without a matching frame before them.
  let hit = 0;
  const found = [], todo = [[top(), false]];
  while (todo.length) {
    const [n, under] = todo.pop();
    const is = n.f >= 0 && m(label(n));
    if (is) found.push(n);
    if (is && !under && !reversed) hit += n.v;
    for (const c of (n.c || []).slice().reverse()) todo.push([c, under || is]);
  }
  if (reversed) {  // a stack is a path from the top to where it ends (s): it matches if any frame on it does
    hit = 0;
    const t2 = [[top(), false]];
    while (t2.length) {
      const [n, seen] = t2.pop();
      const now = seen || (n.f >= 0 && m(label(n)));
      if (now) hit += n.s;
      for (const c of n.c || []) t2.push([c, now]);
    }
  }
  if (found.length !== matches.length || found.some((n, i) => n !== matches[i])) { matches = found; at = -1; }
  const all = top().v;
  info.textContent = (at >= 0 ? 'match ' + (at + 1) + ' of ' + matches.length + ' \u00b7 ' : '') +
                     'matched: ' + hit + ' of ' + all + ' samples (' + pct(hit, all) + ')';
}

// The next (step 1) or previous (-1) match becomes the current one: zoomed to if it is
// not on screen, outlined and scrolled into view.
function step(dir) {
  updateSearch();
  if (!matches.length) return;
  at = at < 0 ? (dir > 0 ? 0 : matches.length - 1) : (at + dir + matches.length) % matches.length;
  const n = matches[at];
  if (!boxes.some((d) => d.node === n && !d.classList.contains('dim'))) zoom = n;
  render();
  const d = boxes.find((b) => b.node === n);
  if (d) d.scrollIntoView({block: 'center', inline: 'nearest'});
}

function hideTip() { tip.style.display = 'none'; }
function showTip(n, ev) {
  const all = top().v, z = zoom || top(), out = [];
  if (n.f < 0) {
    out.push('all samples of ' + cur.name, 'samples: ' + n.v + ' (100%)');
  } else {
    out.push(fname(n));
    if (D.lines && n.l) out.push('line: ' + n.l);
    else if (n.L && n.L.length && !(n.L.length === 1 && !n.L[0][0])) {
      const ls = n.L.slice(0, 6).map((p) => (p[0] || '?') + ' (' + p[1] + ')');
      out.push('lines: ' + ls.join(', ') + (n.L.length > 6 ? ', ...' : ''));
    }
    let s = 'samples: ' + n.v + ' (' + pct(n.v, all) + ' of all';
    if (z !== top()) s += ', ' + pct(n.v, z.v) + ' of the zoomed frame';
    out.push(s + ')');
    if (reversed) out.push('stacks ending in this caller: ' + n.s);
    else out.push('self: ' + n.s + ' (' + pct(n.s, all) + ')');
    const ks = [];
    (n.k || []).forEach((v, i) => { if (v) ks.push(KINDS[i] + ' ' + v); });
    if (ks.length) out.push('frames: ' + ks.join(', '));
  }
  out.push(n === z ? (z === top() ? '' : 'click to zoom out one level') : 'click to zoom');
  tip.textContent = out.join('\n').trim();
  tip.style.display = 'block';
  const tw = tip.offsetWidth, th = tip.offsetHeight;
  let x = ev.clientX + 14, y = ev.clientY + 16;
  if (x + tw > innerWidth - 4) x = Math.max(4, ev.clientX - tw - 10);
  if (y + th > innerHeight - 4) y = Math.max(4, ev.clientY - th - 12);
  tip.style.left = x + 'px';
  tip.style.top = y + 'px';
}

graph.addEventListener('mousemove', (ev) => {
  const n = ev.target.node;
  if (n) showTip(n, ev); else hideTip();
});
graph.addEventListener('mouseleave', hideTip);
graph.addEventListener('click', (ev) => {
  const n = ev.target.node;
  if (!n) return;
  const z = zoom || top();
  zoom = n === z ? (n.p && n.p.p ? n.p : null) : (n.p ? n : null);
  render();
});
function reset() { zoom = null; search.value = ''; matches = []; at = -1; render(); }
$('reset').addEventListener('click', reset);
document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') reset(); });
search.addEventListener('input', updateSearch);
search.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter') { ev.preventDefault(); step(ev.shiftKey ? -1 : 1); }
});
$('next').addEventListener('click', () => step(1));
$('prev').addEventListener('click', () => step(-1));
function toggle(id, on) { $(id).classList.toggle('on', on); $(id).setAttribute('aria-pressed', on); }
$('flame').addEventListener('click', () => { flame = !flame; toggle('flame', flame); render(); });
$('reverse').addEventListener('click', () => {
  reversed = !reversed;
  toggle('reverse', reversed);
  zoom = null;
  at = -1;
  render();
});
addEventListener('resize', () => { if (graph.clientWidth !== lastW) render(); });

function choose(i) {
  cur = D.samplers[i] || null;
  zoom = null;
  at = -1;
  if (cur) {
    stats.textContent = cur.name + ': ' + cur.samples + ' samples of ' + cur.interruptions +
      ' interruptions \u00b7 ' + cur.biased + ' biased \u00b7 ' + cur.failed + ' failed \u00b7 ' +
      cur.dropped + ' dropped' + (D.lines ? ' \u00b7 frames are function:line' : '');
  } else {
    stats.textContent = '';
  }
  render();
}

document.title = 'minivm profile: ' + D.program;
$('rate').textContent = D.rate ? 'rate: ' + D.rate + (D.rate_short.length ? ' \u00b7 short by: ' + D.rate_short.join('; ') : '') : '';
$('title').textContent = 'minivm profile: ' + D.program;
D.samplers.forEach((s, i) => {
  const o = document.createElement('option');
  o.value = i;
  o.textContent = s.name + ' (' + s.samples + ' samples)';
  sel.appendChild(o);
});
$('pick').style.display = D.samplers.length > 1 ? '' : 'none';
sel.addEventListener('change', () => choose(+sel.value));
const legend = $('legend');
legend.appendChild(document.createTextNode('Colour = where most samples of the frame ran:'));
KINDS.forEach((k, i) => {
  const sw = document.createElement('span');
  sw.className = 'sw';
  sw.style.background = HUE[i] < 0 ? 'hsl(0,0%,70%)' : 'hsl(' + HUE[i] + ',68%,66%)';
  legend.appendChild(sw);
  legend.appendChild(document.createTextNode(k));
});
choose(0);
})();
</script>
</body>
</html>
)HTML";

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
      Node root = build_tree(p, s, opt.lines);
      if (i) body += ",\n";
      body += "{\"name\":";
      append_json_string(body, sampler_name(s));
      body += ",\"interruptions\":" + std::to_string(st.interruptions);
      body += ",\"samples\":" + std::to_string(root.total);
      body += ",\"biased\":" + std::to_string(total(st.biased));
      body += ",\"failed\":" + std::to_string(total(st.failed));
      body += ",\"dropped\":" + std::to_string(total(st.dropped));
      body += ",\"root\":";
      tw.node(root, true);
      body += '}';
    }
    samplers_json = std::move(body);
    names = tw.names_json();
  }

  std::string doc;
  doc += kHead;
  doc += html_escape("minivm profile: " + program);
  doc += kStyleAndBody;
  doc += "{\"program\":";
  append_json_string(doc, program);  // json_string escapes '<', so no "</script>" inside
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
                       runtime::frame_kind_hue(FrameKind(k)));
  doc += ']';
  doc += ",\n\"names\":" + names;
  doc += ",\n\"samplers\":[\n" + samplers_json + "]}";
  doc += kScript;
  out << doc;
}

}  // namespace sampler

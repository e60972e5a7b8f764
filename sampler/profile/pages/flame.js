// The flame graph page's script (flame.html): draws the profile in #profile-data, whose
// format report_html.cpp documents where it writes it.
(function () {
'use strict';
const D = JSON.parse(document.getElementById('profile-data').textContent);
const KINDS = D.kinds.map((k) => k.name);  // base/frame_kinds.def, in FrameKind order
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

document.title = D.title;
$('rate').textContent = D.rate ? 'rate: ' + D.rate + (D.rate_short.length ? ' \u00b7 short by: ' + D.rate_short.join('; ') : '') : '';
$('title').textContent = D.title;
if (D.reverse) { reversed = true; toggle('reverse', true); }  // --reverse
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

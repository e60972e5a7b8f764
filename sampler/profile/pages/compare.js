// `minivm compare --html`'s script (compare.html): draws the comparison in #compare-data,
// whose format report_compare_html.cpp documents where it writes it.
'use strict';
const D = JSON.parse(document.getElementById('compare-data').textContent);
const $ = id => document.getElementById(id);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k === 'style') e.style.cssText = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};
const SVG = 'http://www.w3.org/2000/svg';
const svg = (tag, attrs, text) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
const fmtUs = ns => ns >= 1e6 ? (ns / 1e6).toFixed(2) + ' ms' : ns >= 1e3 ? (ns / 1e3).toFixed(1) + ' µs' : ns + ' ns';
const cols = D.columns, ncol = cols.length;
// A line's key: its number in the program's own file; in the k-th file the program
// imports, k * FILE_STRIDE + its number (report_compare_html.cpp's kFileStride). The
// .jsonl events name a frame's function and line number: keyOf makes the key.
const FILE_STRIDE = 16777216;
const keyOf = (fn, line) => line ? (D.fnFile[fn] || 0) * FILE_STRIDE + line : 0;
const fileOf = key => Math.floor(key / FILE_STRIDE), lineNo = key => key % FILE_STRIDE;
const sourceOf = file => file ? (D.imported[file - 1] || {source: []}).source : D.source;
const textOf = key => key ? (sourceOf(fileOf(key))[lineNo(key) - 1] || '') : '';
const labelOf = key => key ? (fileOf(key) ? D.imported[fileOf(key) - 1].path + ':' : '') + lineNo(key) : '–';
const rowByLine = new Map(D.rows.map(r => [r.line, r]));
const pollMeaning = Object.fromEntries(D.pollKinds.map(k => [k.mark, k.meaning]));

// One colour per line that holds samples, the reference's busiest first; the rest grey.
const PALETTE = ['#e4572e', '#2e86ab', '#76b041', '#f3a712', '#8e44ad', '#17becf', '#d62728', '#8c564b', '#e377c2', '#7f7f7f'];
const lineColor = new Map();
[...D.rows].filter(r => r.c.some(x => x > 0))
  .sort((a, b) => Math.max(...b.p) - Math.max(...a.p) || b.p[0] - a.p[0])
  .forEach((r, i) => lineColor.set(r.line, i < PALETTE.length ? PALETTE[i] : '#b8bec6'));
const colorOf = line => lineColor.get(line) || '#b8bec6';

$('title').textContent = 'minivm compare: ' + D.program;
const inter = Math.max(...D.stats.map(s => s.interruptions));
$('summary').textContent = `${ncol} samplers on the same ${inter} interruptions, every ${fmtUs(D.interval_ns)}` +
  `${D.interval_jitter > 0 ? ` ± ${+(100 * D.interval_jitter).toPrecision(3)}%` : ''} for ` +
  `${(D.duration_ns / 1e9).toFixed(2)} s; code ${D.mode}. Reference: ${D.reference}.`;
D.config.forEach(line => $('config').append(el('div', {}, line)));
$('oracleHow').textContent = D.oracleHow;
if (D.banner) { $('banner').textContent = D.banner; $('banner').hidden = false; }
// The bias budget: each sampler's distance from the oracle's profile, with the range
// sampling alone gives it (bias_budget.h).
if (D.budget.length) {
  const fmt = d => `${d[0].toFixed(3)} [${d[1].toFixed(3)}\u2013${d[2].toFixed(3)}]`;
  $('budget').append(el('span', {title: 'Total variation distance from the oracle\'s profile: the share of samples ' +
    'that would have to move for the two to agree (0: the same profile, 1: nothing in common). In brackets, where 95% ' +
    'of 200 bootstrap redraws of both profiles put it: how much sampling alone moves it.'},
    'bias budget (distance from the oracle, lines / functions): ' +
    D.budget.map(b => `${b.sampler} ${fmt(b.lines)} / ${fmt(b.functions)}`).join(' \u00b7 ')));
}
$('rate').textContent = (D.rate ? 'rate: ' + D.rate : '') +
  (D.rateShort.length ? ' \u00b7 short by: ' + D.rateShort.join('; ') : '') + (D.apart ? ' \u00b7 ' + D.apart : '');

// ---- the source table ----
let selected = 0;
function heat(p, c) {
  const a = Math.min(1, p / 60);
  return c === 0 ? `rgba(22,163,74,${0.08 + 0.6 * a})` : `rgba(234,88,12,${0.08 + 0.6 * a})`;
}
function buildSource() {
  const t = $('src');
  const head = el('tr', {}, el('th', {}, 'line'), el('th', {}, 'poll'));
  cols.forEach((c, i) => head.append(el('th', {class: i === 0 ? 'ref' : ''}, c, el('br'), `n=${D.samples[i]}`)));
  head.append(el('th', {}, 'max Δ'), el('th', {class: 'code'}, 'source'));
  t.append(el('thead', {}, head));
  const body = el('tbody');
  // Lines near samples or polls, and short gaps; longer runs of other lines folded.
  const keep = new Set();
  for (const r of D.rows) for (let d = -2; d <= 2; d++) keep.add(r.line + d);
  let folded = 0;
  const flush = () => {
    if (folded) body.append(el('tr', {class: 'gap'}, el('td', {colspan: ncol + 4}, `… ${folded} line${folded > 1 ? 's' : ''} without samples or polls …`)));
    folded = 0;
  };
  // The program's own file, then each imported file that has samples or polls, under its name.
  const files = [0, ...D.imported.map((f, k) => k + 1).filter(k => D.rows.some(r => r.line && fileOf(r.line) === k))];
  for (const file of files) {
    if (files.length > 1) {
      flush();
      body.append(el('tr', {class: 'gap'}, el('td', {colspan: ncol + 4}, file ? D.imported[file - 1].path : D.program)));
    }
    sourceOf(file).forEach((text, i) => {
      const line = file * FILE_STRIDE + i + 1;
      if (!keep.has(line)) { folded++; return; }
      flush();
      body.append(sourceRow(line, text));
    });
    flush();
  }
  if (rowByLine.has(0)) body.append(sourceRow(0, '(no source line: ' + rowByLine.get(0).f.join(', ') + ')'));
  t.append(body);
  const used = new Set(D.rows.flatMap(r => r.polls));
  for (const k of D.pollKinds) if (used.has(k.mark)) $('pollLegend').append(el('span', {}, el('b', {}, k.mark), ' ' + k.meaning));
}
function sourceRow(line, text) {
  const r = rowByLine.get(line);
  const tr = el('tr', {class: 'line', 'data-line': line, onclick: () => select(line)});
  tr.append(el('td', {class: 'num'}, line ? String(lineNo(line)) : '–'));
  const polls = r ? r.polls.join('') : '';
  tr.append(el('td', {class: 'poll', title: r ? r.polls.map(m => pollMeaning[m]).join('; ') : ''}, polls));
  for (let c = 0; c < ncol; c++) {
    const has = r && r.c[c] > 0;
    tr.append(el('td', {class: 'heat', style: has ? 'background:' + heat(r.p[c], c) : '',
                        title: has ? `${cols[c]}: ${r.c[c]} of ${D.samples[c]} samples` : ''},
                 has ? r.p[c].toFixed(1) + '%' : ''));
  }
  const bad = r && r.ws && r.w >= 5;
  tr.append(el('td', {class: 'diff', title: bad ? `${r.ws} is ${r.w.toFixed(1)} points from ${cols[0]}` : ''},
               bad ? r.w.toFixed(0) + ' pt' : ''));
  const code = el('td', {class: 'code'}, el('span', {class: 'swatch', style: 'background:' + (lineColor.has(line) ? colorOf(line) : 'transparent')}), text);
  tr.append(code);
  return tr;
}

// ---- the stacks of one line ----
function frameText(f) { return D.names[f[0]] + ':' + (f[1] ? lineNo(f[1]) : '?'); }
function select(line) {
  selected = line;
  for (const tr of document.querySelectorAll('#src tr.line')) tr.classList.toggle('sel', +tr.dataset.line === line);
  for (const fr of document.querySelectorAll('.flame .fr')) fr.classList.toggle('hit', +fr.dataset.line === line);
  const text = line ? textOf(line).trim() : '(no source line)';
  $('detailTitle').textContent = `Line ${labelOf(line)}: ${text}`;
  const body = $('detailBody');
  body.className = '';
  body.replaceChildren();
  const r = rowByLine.get(line);
  if (r && r.polls.length) body.append(el('div', {class: 'note'}, 'Polls here: ' + r.polls.map(m => pollMeaning[m]).join('; ') + '.'));
  for (let c = 0; c < ncol; c++) {
    const stacks = new Map();  // by what the reader sees: function:line frames, top first
    for (const [col, sid, n, biased] of D.agg) {
      if (col !== c) continue;
      const st = D.stacks[sid];
      if ((st.length ? st[0][1] : 0) !== line) continue;
      const key = st.map(frameText).join(' ');
      const e = stacks.get(key) || {st, n: 0, biased: 0};
      e.n += n; e.biased += biased ? n : 0;
      stacks.set(key, e);
    }
    const total = [...stacks.values()].reduce((a, e) => a + e.n, 0);
    const really = c > 0 ? reallyFrom(line, cols[c]) : null, moved = c > 0 ? movedTo(line, cols[c]) : null;
    const box = el('div', {class: 'samp'}, el('h3', {}, cols[c],
      el('span', {}, `${total} of ${D.samples[c]} samples` + (D.samples[c] ? ` (${(100 * total / D.samples[c]).toFixed(1)}%)` : ''))));
    if (really) box.append(really);
    if (moved) box.append(moved);
    if (!total) box.append(el('div', {class: 'empty'}, 'no sample on this line'));
    [...stacks.values()].sort((a, b) => b.n - a.n).slice(0, 6).forEach(e => {
      const st = e.st;
      const div = el('div', {class: 'stack'}, el('span', {class: 'n'}, String(e.n)));
      st.forEach((f, i) => {
        if (i) div.append(' ← ');
        div.append(i === 0 ? el('b', {}, frameText(f)) : frameText(f));
      });
      if (e.biased) div.append(el('div', {class: 'biased'}, `${e.biased} biased (taken at the poll)`));
      box.append(div);
    });
    if (stacks.size > 6) box.append(el('div', {class: 'note'}, `and ${stacks.size - 6} more stacks`));
    body.append(box);
  }
}

// ---- where the samples really were: each sampler's line against the reference's for the
// same interruption (D.confusion, paired in C++ over every event of the run) ----
const matrixOf = new Map(D.confusion.map(m => [m.sampler, m]));
const refName = D.oracle ? 'the oracle' : cols[0];
const byCount = map => [...map.entries()].sort((a, b) => b[1] - a[1]);
const lineWords = to => to ? `line ${labelOf(to)}` : 'no line';
function listInto(div, entries, word) {
  entries.slice(0, 4).forEach(([to, k], i) => {
    if (i) div.append(', ');
    div.append(word(to), ' \u00d7', el('b', {}, String(k)));
  });
  if (entries.length > 4) div.append(`, ${entries.length - 4} more`);
  div.append('.');
  return div;
}
// Of the samples `sampler` put on `line`, the reference's lines for the same interruptions.
function reallyFrom(line, sampler) {
  const m = matrixOf.get(sampler);
  if (!m) return null;
  const by = new Map();
  let n = 0;
  for (const [mine, ref, k] of m.cells) if (mine === line) { n += k; by.set(ref, (by.get(ref) || 0) + k); }
  if (!n) return null;
  const agree = by.get(line) || 0;
  if (agree === n) return el('div', {class: 'really'}, `All ${n} on ${refName}'s line for the same interruptions.`);
  return listInto(el('div', {class: 'really'}, `These ${n} ${sampler} samples were really: `), byCount(by), lineWords);
}
// Of the interruptions the reference put on `line`, where `sampler` put them: other lines,
// or failures by reason.
function movedTo(line, sampler) {
  const m = matrixOf.get(sampler);
  if (!m) return null;
  const where = new Map();
  let n = 0;
  for (const [mine, ref, k] of m.cells) if (ref === line) { n += k; where.set(lineWords(mine), (where.get(lineWords(mine)) || 0) + k); }
  for (const [reason, ref, k] of m.failed) if (ref === line) { n += k; where.set(`failed (${reason})`, (where.get(`failed (${reason})`) || 0) + k); }
  where.delete(lineWords(line));
  if (!n || !where.size) return null;
  return listInto(el('div', {class: 'moved'}, `Of the ${n} interruptions ${refName} puts here, ${sampler} puts elsewhere: `),
    byCount(where), w => w);
}
// The confusion matrix of one sampler under the heat table: its lines (the busiest, the
// rest as one row) and its failures by reason, against the reference's busiest lines.
const MATRIX_LINES = 10;
function drawMatrix(m) {
  for (const b of document.querySelectorAll('#cmPick button')) b.classList.toggle('on', b.dataset.sampler === m.sampler);
  $('cmNote').textContent = `${m.sampler}: on ${refName}'s line for ${m.agreed} of ${m.paired} interruptions` +
    (m.refFailed ? `; ${m.refFailed} that ${refName} failed on have no line to compare with and are left out.` : '.');
  const total = (pairs, pick) => { const t = new Map(); for (const c of pairs) t.set(pick(c), (t.get(pick(c)) || 0) + c[2]); return t; };
  const busiest = t => new Set(byCount(t).slice(0, MATRIX_LINES).map(([l]) => l));
  const order = (a, b) => (a === 0) - (b === 0) || a - b;  // by file and line, no line last
  const refCols = [...busiest(total([...m.cells, ...m.failed], c => c[1]))].sort(order);
  const mineRows = [...busiest(total(m.cells, c => c[0]))].sort(order);
  const OTHER = -1, colOf = ref => refCols.includes(ref) ? ref : OTHER, rowOf = mine => mineRows.includes(mine) ? mine : OTHER;
  const cols2 = [...refCols, ...(m.cells.concat(m.failed).some(c => colOf(c[1]) === OTHER) ? [OTHER] : [])];
  const rows = [];  // [label key, is failure, counts by column]
  const add = (key, fail, c) => {
    let r = rows.find(r => r.key === key && r.fail === fail);
    if (!r) { r = {key, fail, by: new Map(), n: 0}; rows.push(r); }
    r.by.set(colOf(c[1]), (r.by.get(colOf(c[1])) || 0) + c[2]);
    r.n += c[2];
  };
  for (const mine of mineRows) rows.push({key: mine, fail: false, by: new Map(), n: 0});
  for (const c of m.cells) add(rowOf(c[0]), false, c);
  for (const c of m.failed) add(c[0], true, c);
  const t = $('cm');
  t.replaceChildren();
  const head = el('tr', {}, el('th', {}, `${m.sampler} \u2193 / ${cols[0]} \u2192`));
  for (const c of cols2) head.append(el('th', {}, c === OTHER ? 'other lines' : lineWords(c)));
  head.append(el('th', {}, 'total'));
  t.append(el('thead', {}, head));
  const body = el('tbody');
  for (const r of rows) {
    if (!r.n) continue;
    const label = r.fail ? `failed: ${r.key}` : r.key === OTHER ? 'other lines' : lineWords(r.key);
    const th = el('th', {class: 'row' + (r.fail ? ' fail' : ''), title: r.fail ? (D.reasons[r.key] || '') : ''}, label);
    if (!r.fail && r.key !== OTHER) th.addEventListener('click', () => select(r.key));
    const tr = el('tr', {}, th);
    for (const c of cols2) {
      const n = r.by.get(c) || 0, diag = !r.fail && c !== OTHER && c === r.key;
      tr.append(el('td', {class: diag ? 'diag' : '', style: n ? `background:${heat(100 * n / r.n, diag ? 0 : 1)}` : '',
        title: n ? `${n} interruptions: ${m.sampler} ${r.fail ? 'failed (' + r.key + ')' : 'put them on ' + label}, ` +
          `${refName} on ${c === OTHER ? 'other lines' : lineWords(c)}` : ''}, n ? String(n) : ''));
    }
    tr.append(el('td', {class: 'tot'}, String(r.n)));
    body.append(tr);
  }
  t.append(body);
}
function buildConfusion() {
  if (!D.confusion.length) {
    $('confusion').replaceChildren(el('div', {class: 'empty'}, 'No oracle in this run: nothing to pair the samples with.'));
    return;
  }
  for (const m of D.confusion)
    $('cmPick').append(el('button', {'data-sampler': m.sampler, onclick: () => drawMatrix(m)}, m.sampler));
  // The sampler that agrees least with the reference first: the lesson is there.
  drawMatrix([...D.confusion].sort((a, b) => a.agreed / (a.paired || 1) - b.agreed / (b.paired || 1))[0]);
}

// ---- icicle graphs ----
function tree(c) {
  const root = {n: 0, kids: new Map()};
  for (const [col, sid, n] of D.agg) {
    if (col !== c) continue;
    const st = D.stacks[sid];
    let node = root;
    root.n += n;
    for (let i = st.length - 1; i >= 0; i--) {
      const key = st[i][0] + ':' + st[i][1];
      if (!node.kids.has(key)) node.kids.set(key, {f: st[i], n: 0, kids: new Map()});
      node = node.kids.get(key);
      node.n += n;
    }
  }
  return root;
}
function buildFlames() {
  cols.forEach((name, c) => {
    const root = tree(c);
    const box = el('div', {class: 'flame'});
    let depth = 0;
    const place = (node, x, w, d) => {
      depth = Math.max(depth, d + 1);
      let cx = x;
      for (const k of [...node.kids.values()].sort((a, b) => frameText(a.f) < frameText(b.f) ? -1 : 1)) {
        const kw = root.n ? w * k.n / node.n : 0;
        if (kw >= 0.15) {
          const line = k.f[1];
          box.append(el('div', {class: 'fr', 'data-line': line,
            style: `left:${cx}%;width:${kw}%;top:${d * 18}px;background:${colorOf(line)}${lineColor.has(line) ? 'cc' : ''}`,
            title: `${frameText(k.f)} (${D.kinds[k.f[2]]}): ${k.n} samples, ${(100 * k.n / root.n).toFixed(1)}%`,
            onclick: () => select(line)}, frameText(k.f)));
          place(k, cx, kw, d + 1);
        }
        cx += kw;
      }
    };
    place(root, 0, 100, 0);
    box.style.height = Math.max(1, depth) * 18 + 4 + 'px';
    if (!root.n) box.append(el('div', {class: 'empty', style: 'padding:4px'}, 'no samples'));
    $('flames').append(el('div', {}, el('div', {class: 'fh'}, `${name} (${root.n} samples)`), box));
  });
}

// ---- the timeline, the latencies and the per-poll-site times, from the .jsonl events ----
const events = D.events;
function buildTimeline() {
  const samples = events.filter(e => e.event === 'ExecutionSample' || e.event === 'NativeMethodSample' || e.event === 'FailedSample');
  const withTime = samples.filter(e => e.time_ns !== undefined);
  const kept = D.eventsTotal > events.length ? ` The first ${events.length} of ${D.eventsTotal} events are shown.` : '';
  $('timelineNote').textContent = 'One tick per sample, coloured by the line of its top frame (as in the source table); ' +
    'a dark tick below the row is a failed sample.' + kept;
  if (!withTime.length) { $('timeline').append(el('div', {class: 'empty'}, 'no samples')); return; }
  const t0 = Math.min(...withTime.map(e => e.time_ns)), t1 = Math.max(...withTime.map(e => e.time_ns));
  const W = 1000, L = 92, rowH = 26, H = ncol * rowH + 22;
  const s = svg('svg', {viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img'});
  const failedAt = new Map();
  for (const e of samples) if (e.event === 'FailedSample') failedAt.set(e.sample, e);
  const timeOf = new Map(withTime.map(e => [e.sample, e.time_ns]));
  const x = t => L + (W - L - 8) * (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5);
  const bands = gcBands(x, t0, t1, ncol * rowH - 4);
  cols.forEach((name, c) => {
    const y = 4 + c * rowH;
    s.append(svg('text', {x: 0, y: y + 14}, name));
    s.append(svg('rect', {x: L, y, width: W - L - 8, height: rowH - 8, fill: '#f3f4f6'}));
    for (const e of samples) {
      if (e.sampler !== name) continue;
      const t = e.time_ns !== undefined ? e.time_ns : timeOf.get(e.sample);
      if (t === undefined) continue;
      if (e.event === 'FailedSample') {
        s.append(svg('rect', {x: x(t), y: y + rowH - 10, width: 1.6, height: 5, fill: '#111827'}));
      } else {
        const line = e.stack && e.stack.length ? keyOf(e.stack[0].function, e.stack[0].line) : 0;
        s.append(svg('rect', {x: x(t), y, width: 1.6, height: rowH - 11, fill: colorOf(line)}));
      }
    }
  });
  const yAxis = 4 + ncol * rowH;
  for (let i = 0; i <= 4; i++) {
    const t = t0 + (t1 - t0) * i / 4;
    s.append(svg('text', {x: x(t) - (i === 4 ? 40 : i ? 15 : 0), y: yAxis + 8}, ((t - t0) / 1e6).toFixed(0) + ' ms'));
  }
  s.append(bands);  // on top of the rows, translucent: the ticks show through
  $('timeline').append(s);
  if (bands.childNodes.length)
    $('timelineLegend').append(el('span', {}, el('span', {class: 'swatch', style: 'background:' + GC_BAND}),
      'garbage collection (its time to safepoint darker)'));
  pickableTimeline(s, withTime, t => x(t), sx => t0 + (t1 - t0) * (sx - L) / (W - L - 8));
  for (const [line, color] of lineColor) {
    if (color === '#b8bec6') continue;
    $('timelineLegend').append(el('span', {}, el('span', {class: 'swatch', style: 'background:' + color}),
      line ? `line ${labelOf(line)}` : 'no line'));
  }
}
// Each collection as a band across every row, from its request to the threads' resumption,
// its time to safepoint darker; hover for its numbers. Only those in the samples' span.
const GC_BAND = 'rgba(234, 88, 12, 0.28)';
function gcBands(x, t0, t1, height) {
  const g = svg('g', {class: 'gc-bands'});
  for (const e of events) {
    if (e.event !== 'GarbageCollection' || e.time_ns > t1 || e.time_ns + e.pause_ns < t0) continue;
    const a = Math.max(t0, e.time_ns), b = Math.min(t1, e.time_ns + e.pause_ns);
    const band = svg('g', {class: 'gc-band'});
    const ttsp = Math.min(b, e.time_ns + e.time_to_safepoint_ns);
    const last = e.slowest_thread < 0 ? 'no thread waited for' : `last to stop: ${e.slowest_thread ? 'thread ' + e.slowest_thread : 'main'}`;
    band.append(svg('title', {}, `collection ${e.gc} (${e.young ? 'young' : 'full'}, ${e.cause}): pause ` +
      `${fmtUs(e.pause_ns)}, time to safepoint ${fmtUs(e.time_to_safepoint_ns)}, ${last}`));
    band.append(svg('rect', {x: x(a), y: 2, width: Math.max(1, x(b) - x(a)), height, fill: GC_BAND}));
    if (ttsp > a) band.append(svg('rect', {x: x(a), y: 2, width: Math.max(1, x(ttsp) - x(a)), height, fill: GC_BAND}));
    g.append(band);
  }
  return g;
}

// ---- one interruption, every sampler beside the oracle: a click on the timeline picks
// the interruption nearest in time and the side panel shows each sampler's outcome ----
function pickableTimeline(s, withTime, xOf, timeAt) {
  $('timelineNote').append(' Click the timeline for one interruption under every sampler, side by side.');
  s.classList.add('pickable');
  const mark = svg('rect', {id: 'tlPick', x: -10, y: 0, width: 2, height: ncol * 26, fill: '#2563eb', opacity: 0.8});
  s.append(mark);
  s.addEventListener('click', ev => {
    const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(s.getScreenCTM().inverse());
    const t = timeAt(p.x);
    let best = null;
    for (const e of withTime) if (!best || Math.abs(e.time_ns - t) < Math.abs(best.time_ns - t)) best = e;
    if (!best) return;
    mark.setAttribute('x', xOf(best.time_ns) - 0.2);
    showInterruption(best.sample, withTime[0].time_ns);
  });
}
function showInterruption(id, t0) {
  const mine = events.filter(e => e.sample === id);
  const first = mine.find(e => e.time_ns !== undefined);
  const title = el('h3', {}, `Interruption ${id}` + (first ? `, thread ${first.thread}, at ` +
    `${((first.time_ns - t0) / 1e6).toFixed(2)} ms` : ''));
  const table = el('table', {class: 'one'});
  const head = el('tr'), row = el('tr');
  cols.forEach(name => {
    head.append(el('th', {}, name));
    const e = mine.find(x => x.sampler === name && x.event !== 'SafepointLatency');
    const cell = el('td', {'data-sampler': name});
    if (!e) cell.append(el('span', {class: 'empty'}, 'no event (beyond the events kept)'));
    else if (e.event === 'FailedSample' || e.event === 'DroppedSample')
      cell.append(el('span', {class: 'biased'}, `${e.event === 'FailedSample' ? 'failed' : 'dropped'}: ${e.reason}`));
    else {
      e.stack.forEach((f, i) => cell.append(el('div', {class: 'fr' + (i ? '' : ' topf')},
        `${f.function}:${f.line || '?'}` + (f.kind === 'jit' || f.kind === 'interp' ? '' : ` (${f.kind})`))));
      if (e.biased) cell.append(el('div', {class: 'biased'}, 'biased' + (e.reason ? ': ' + e.reason : '')));
      if (e.count > 1) cell.append(el('div', {class: 'note'}, `stands for ${e.count}`));
    }
    const lat = mine.find(x => x.sampler === name && x.event === 'SafepointLatency');
    if (lat) cell.append(el('div', {class: 'note'}, `served at its poll after ${fmtUs(lat.latency_ns)}`));
    row.append(cell);
  });
  table.append(head, row);
  $('interruption').replaceChildren(title, el('div', {class: 'note'}, `What each sampler recorded for this one ` +
    `interruption; ${refName} first. Top frame first, in bold.`), el('div', {class: 'scroll'}, table));
}
function percentile(sorted, p) { return sorted[Math.max(0, Math.ceil(p / 100 * sorted.length) - 1)]; }
function buildLatency() {
  const lat = events.filter(e => e.event === 'SafepointLatency').map(e => e.latency_ns).sort((a, b) => a - b);
  if (!lat.length) { $('latency').append(el('div', {class: 'empty'}, 'no latency recorded')); return; }
  // Bins by powers of two of nanoseconds, from the smallest value's to the largest's.
  const lo = Math.floor(Math.log2(Math.max(1, lat[0]))), hi = Math.floor(Math.log2(Math.max(1, lat[lat.length - 1])));
  const bins = new Array(hi - lo + 1).fill(0);
  for (const v of lat) bins[Math.floor(Math.log2(Math.max(1, v))) - lo]++;
  const W = 480, H = 190, B = 30, most = Math.max(...bins), bw = (W - 40) / bins.length;
  const s = svg('svg', {viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img'});
  bins.forEach((n, i) => {
    const h = most ? (H - B - 18) * n / most : 0;
    s.append(svg('rect', {x: 30 + i * bw + 1, y: H - B - h, width: bw - 2, height: h, fill: '#2e86ab'}));
    if (n) s.append(svg('text', {x: 30 + i * bw + bw / 2 - 6, y: H - B - h - 3}, String(n)));
    if (i % Math.ceil(bins.length / 6) === 0) s.append(svg('text', {x: 30 + i * bw, y: H - B + 14}, fmtUs(2 ** (lo + i))));
  });
  s.append(svg('text', {x: 30, y: H - 2}, 'latency (log scale: each bar doubles)'));
  // Of each latency, the thread's time on a CPU; the rest it waited for one (descheduled).
  const cpu = events.filter(e => e.event === 'SafepointLatency').map(e => e.cpu_ns || 0).sort((a, b) => a - b);
  $('latency').append(s, el('div', {class: 'note'},
    `${lat.length} requests: p50 ${fmtUs(percentile(lat, 50))}, p99 ${fmtUs(percentile(lat, 99))}, max ${fmtUs(lat[lat.length - 1])}`),
    el('div', {class: 'note', id: 'latencyCpu'},
      `of which on a CPU: p50 ${fmtUs(percentile(cpu, 50))}, p99 ${fmtUs(percentile(cpu, 99))}, max ${fmtUs(cpu[cpu.length - 1])}; ` +
      'the rest of each latency the thread waited for a CPU'));
}
function buildSites() {
  const site = new Map();  // interruption id -> the safepoint sampler's top frame
  for (const e of events)
    if (e.sampler === 'safepoint' && e.stack && e.stack.length) site.set(e.sample, e.stack[0]);
  const by = new Map();
  for (const e of events) {
    if (e.event !== 'SafepointLatency' || !site.has(e.sample)) continue;
    const f = site.get(e.sample), key = f.function + ':' + f.line;
    if (!by.has(key)) by.set(key, {f, v: [], c: []});
    by.get(key).v.push(e.latency_ns);
    by.get(key).c.push(e.cpu_ns || 0);
  }
  if (!by.size) { $('sites').append(el('div', {class: 'empty'}, 'no poll site recorded')); return; }
  const t = el('table', {class: 'acc'}, el('tr', {}, el('th', {}, 'poll site'), el('th', {}, 'poll'), el('th', {}, 'requests'),
    el('th', {}, 'p50'), el('th', {}, 'p99'), el('th', {}, 'max'),
    el('th', {title: "of each time to safepoint, the thread's time on a CPU"}, 'p50 on CPU'),
    el('th', {title: "of each time to safepoint, the thread's time on a CPU"}, 'p99 on CPU')));
  [...by.values()].sort((a, b) => b.v.length - a.v.length).forEach(({f, v, c}) => {
    v.sort((a, b) => a - b);
    c.sort((a, b) => a - b);
    const line = keyOf(f.function, f.line), r = rowByLine.get(line);
    t.append(el('tr', {class: 'line', style: 'cursor:pointer', onclick: () => select(line)},
      el('td', {}, el('span', {class: 'swatch', style: 'background:' + colorOf(line)}), `${f.function}:${f.line}`),
      el('td', {title: r ? r.polls.map(m => pollMeaning[m]).join('; ') : ''}, r ? r.polls.join('') : ''),
      el('td', {}, String(v.length)), el('td', {}, fmtUs(percentile(v, 50))), el('td', {}, fmtUs(percentile(v, 99))),
      el('td', {}, fmtUs(v[v.length - 1])), el('td', {}, fmtUs(percentile(c, 50))), el('td', {}, fmtUs(percentile(c, 99)))));
  });
  $('sites').append(t);
}
function buildAccounting() {
  const t = $('acc');
  t.append(el('tr', {}, ...['sampler', 'interruptions', 'samples', 'failed', 'biased', 'dropped', 'reasons'].map(h => el('th', {}, h))));
  const sum = m => Object.values(m).reduce((a, b) => a + b, 0);
  for (const s of D.stats) {
    const why = el('td', {class: 'why'});
    for (const [kind, m] of [['failed', s.failed], ['biased', s.biased], ['dropped', s.dropped]])
      for (const [r, n] of Object.entries(m)) why.append(el('span', {title: D.reasons[r] || ''}, `${kind} ${r} ${n}`), '  ');
    if (!why.childNodes.length) why.append('–');
    t.append(el('tr', {}, el('td', {}, s.name), el('td', {}, String(s.interruptions)), el('td', {}, String(s.samples)),
      el('td', {}, String(sum(s.failed))), el('td', {}, String(sum(s.biased))), el('td', {}, String(sum(s.dropped))), why));
  }
}

buildSource();
buildConfusion();
buildFlames();
buildTimeline();
buildLatency();
buildSites();
buildAccounting();
// Start on the line where the samplers disagree most, so the page opens on its lesson.
const first = [...D.rows].filter(r => r.ws).sort((a, b) => b.w - a.w)[0] || D.rows[0];
if (first) select(first.line);

// `minivm compare --diff ... --html`'s script (diff.html): draws the diff in #diff-data,
// whose format compare_diff.cpp's write_diff_html writes.
'use strict';
const D = JSON.parse(document.getElementById('diff-data').textContent);
const $ = id => document.getElementById(id);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};
const share = v => v === null ? '-' : v === 0 ? '.' : v.toFixed(1);
const change = (b, a) => b === null || a === null ? '' : (a - b >= 0 ? '+' : '') + (a - b).toFixed(1);

// Both configurations, stamped side by side.
for (const [id, label] of [['before', 'Before'], ['after', 'After']]) {
  const r = D[id];
  $(id).append(el('h3', {}, `${label}: `, el('span', {class: 'path'}, r.path)),
    el('div', {}, `${r.program}, every ${r.interval} for ${(r.duration_ns / 1e9).toFixed(2)} s; code ${r.mode}`),
    ...r.config.map(line => el('div', {class: 'config'}, line)),
    el('div', {}, 'reference: ' + r.reference));
  if (r.banner) $(id).append(el('div', {class: 'banner'}, r.banner));
}
if (!D.sameProgram || !D.sameSource) {
  $('note').textContent = (D.sameProgram ? "The program's text changed between the runs" : 'Two different programs') +
    ': their lines are set side by side by number.';
  $('note').hidden = false;
}
$('legend').textContent = `Each sampler's cells: before, after, change in points (red: more samples, blue: fewer). ` +
  `n = the samples each run's column rests on. Lines a sampler moved ${D.markPoints} points or more are bold.`;

// ---- the table ----
const heat = p => p === null || p === 0 ? '' : `background:rgba(234,88,12,${0.08 + 0.6 * Math.min(1, p / 60)})`;
const head = el('tr', {}, el('th', {}, 'line'), el('th', {}, 'poll'));
const counts = el('tr', {}, el('th'), el('th'));
D.columns.forEach((c, i) => {
  head.append(el('th', {colspan: 3, class: 'first'}, c));
  counts.append(el('th', {colspan: 3, class: 'first'},
    `n=${D.samplesBefore[i] === null ? '-' : D.samplesBefore[i]} → ${D.samplesAfter[i] === null ? '-' : D.samplesAfter[i]}`));
});
head.append(el('th', {class: 'code'}, 'source'));
$('src').append(head, counts);
let selected = null;
D.rows.forEach((r, k) => {
  const polls = r.pb === r.pa ? r.pb : `${r.pb}→${r.pa}`;
  const tr = el('tr', {class: 'line', 'data-row': k}, el('td', {class: 'num'}, r.line ? String(r.line) : '–'),
    el('td', {class: 'poll'}, polls));
  let moved = false;
  D.columns.forEach((c, i) => {
    const b = r.b[i], a = r.a[i], d = change(b, a);
    if (d && Math.abs(a - b) >= D.markPoints) moved = true;
    const bc = el('td', {class: 'first before'}, share(b)), ac = el('td', {class: 'after'}, share(a));
    bc.style.cssText = heat(b);
    ac.style.cssText = heat(a);
    tr.append(bc, ac, el('td', {class: 'change ' + (d.startsWith('+') && d !== '+0.0' ? 'up' : d.startsWith('-') ? 'down' : '')}, d));
  });
  tr.append(el('td', {class: 'code'}, r.line ? r.src : '(no line: stubs and native code)'));
  if (moved) tr.classList.add('moved'), tr.style.fontWeight = '600';
  tr.addEventListener('click', () => select(k));
  $('src').append(tr);
});

// ---- a line's samples before and after ----
function select(k) {
  const r = D.rows[k];
  if (selected !== null) $('src').querySelector(`tr[data-row="${selected}"]`).classList.remove('sel');
  selected = k;
  $('src').querySelector(`tr[data-row="${k}"]`).classList.add('sel');
  $('detailTitle').textContent = r.line ? `Line ${r.line}: ${r.src.trim()}` : 'No line: stubs and native code';
  const body = $('detailBody');
  body.className = '';
  body.replaceChildren(...D.columns.map((c, i) => {
    const side = (v, n, total) => v === null ? 'not in this run' : `${v.toFixed(1)}% (${n} of ${total})`;
    const d = change(r.b[i], r.a[i]);
    return el('div', {class: 'samp', 'data-sampler': c}, el('b', {}, c),
      `before ${side(r.b[i], r.cb[i], D.samplesBefore[i])}, after ${side(r.a[i], r.ca[i], D.samplesAfter[i])}` +
      (d ? `: ${d} points` : ''));
  }));
}

// scopeprof: the HTML report's script, second part (format/html.hpp): the icicle of host total beside
// device span, the duration histograms, the root scopes over time, the per-rank hook, and the start. It
// uses the helpers of the first part (html_script.hpp); SVG is drawn with our own code, text through
// textContent only. ASCII, in pieces of under 16 KB (see html_script.hpp).
#pragma once

#include <scopeprof/config.hpp>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline constexpr const char* html_chart_parts[] = {
R"sp(
/* Text of a tree row for tooltips. */
function treeRowText(r) {
  let t = shown(r.name) + '\ncalls ' + fmtInt(r.calls) + '\nhost total ' + fmtDur(r.host.total) + ', self ' + fmtDur(r.host.self);
  t += r.device ? '\ndevice span ' + fmtDur(r.device.total) + ', self ' + fmtDur(r.device.self) + ' (' + fmtInt(r.device.calls) + ' timed)'
                : '\ndevice span n/a';
  const q = ratio(r.host.total, r.device);
  if (q != null) t += '\nhost/device ' + q.toFixed(2);
  if (r.cupti) t += '\ndevice busy ' + fmtDur(r.cupti.busy) + ', ' + fmtInt(r.cupti.kernels) + ' kernels';
  return t;
}
/* A label cut to fit `px` pixels (about 6.4 px a character at 11 px). */
function fitText(text, px) {
  const n = Math.floor((px - 8) / 6.4);
  if (n < 2) return null;
  return text.length <= n ? text : text.slice(0, n - 1) + '\u2026';
}

/* The icicle: the call tree as nested bars, once by host total and once by device span, both against one
   time scale (or each filling the width). Children sit inside their parent from its left edge; where the
   children of a scope add up to more than the scope itself (device spans on other streams can), they are
   scaled down to fit and the tooltip keeps the true values. Bars under half a pixel are left out. */
function renderIcicle() {
  const body = byId('icicle-body'), rows = REP.tree;
  if (!rows.length) { body.append(h('p', {class: 'empty'}, '(no finished scopes)')); return; }
  const kids = rows.map(function () { return []; }), roots = [];
  rows.forEach(function (r, i) { (r.parent >= 0 && r.parent < i ? kids[r.parent] : roots).push(i); });
  const hostQ = function (r) { return r.host.total; }, devQ = function (r) { return r.device ? r.device.total : 0; };
  const sumOf = function (list, q) { let s = 0; for (const i of list) s += Math.max(0, q(rows[i])); return s; };
  const hostSum = sumOf(roots, hostQ), devSum = sumOf(roots, devQ), hasDev = devSum > 0;
  const W = 1200, ROW = 20;
  let shared = true;
  const panel = h('div');
  const toggle = h('input', {type: 'checkbox', checked: true, onchange: function (e) { shared = e.target.checked; draw(); }});
  body.append(h('div', {class: 'tools'}, h('label', null, toggle, ' one time scale for both (unticked: each fills the width)')), panel);

  function layout(q, full) {
    const pos = new Array(rows.length).fill(null), k = full > 0 ? W / full : 0;
    const stack = [[roots, 0, W]];
    while (stack.length) {
      const [list, x0, room] = stack.pop();
      const total = sumOf(list, q) * k, f = total > room ? room / total : 1;
      let x = x0;
      for (const i of list) {
        const w = Math.max(0, q(rows[i])) * k * f;
        if (w >= 0.5) { pos[i] = [x, w]; if (kids[i].length) stack.push([kids[i], x, w]); }
        x += w;
      }
    }
    return pos;
  }
  function icicle(q, full, label) {
    const pos = layout(q, full);
    let depth = 0;
    pos.forEach(function (p, i) { if (p && rows[i].depth > depth) depth = rows[i].depth; });
    const H = (depth + 1) * ROW;
    const svg = svgEl('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': label, class: 'icicle'});
    pos.forEach(function (p, i) {
      if (!p) return;
      const r = rows[i];
      const g = svgEl('g', {class: 'node', 'data-row': i, transform: 'translate(' + p[0].toFixed(2) + ',' + r.depth * ROW + ')'});
      g.append(svgEl('rect', {width: Math.max(p[1] - 0.6, 0.4).toFixed(2), height: ROW - 2, rx: 2, fill: colour(r.name)}));
      const text = fitText(shown(r.name), p[1]);
      if (text) g.append(svgEl('text', {x: 4, y: ROW - 7}, text));
      svg.append(g);
    });
    return svg;
  }
  function highlight(i, on) {
    panel.querySelectorAll('g.node[data-row="' + i + '"]').forEach(function (g) { g.classList.toggle('hl', on); });
  }
  panel.addEventListener('mouseover', function (e) {
    const g = e.target.closest && e.target.closest('g.node');
    if (!g) return;
    const i = +g.getAttribute('data-row');
    highlight(i, true);
    showTip(e, treeRowText(rows[i]));
  });
  panel.addEventListener('mousemove', function (e) { if (!tip.hidden) moveTip(e); });
  panel.addEventListener('mouseout', function (e) {
    const g = e.target.closest && e.target.closest('g.node');
    if (g) highlight(+g.getAttribute('data-row'), false);
    hideTip();
  });
  function draw() {
    const full = Math.max(hostSum, devSum);
    const hostFull = shared ? full : hostSum, devFull = shared ? full : devSum;
    panel.replaceChildren(
      h('div', {class: 'chart-title'}, h('h3', null, 'Host total'),
        h('span', null, 'roots add up to ' + fmtDur(hostSum) + '; full width = ' + fmtDur(hostFull))),
      icicle(hostQ, hostFull, 'icicle of host total'));
    panel.append(h('div', {class: 'chart-title'}, h('h3', null, 'Device span'),
                   h('span', null, hasDev ? 'roots add up to ' + fmtDur(devSum) + '; full width = ' + fmtDur(devFull)
                                          : 'no scope has a device span')));
    if (hasDev) panel.append(icicle(devQ, devFull, 'icicle of device span'));
    else panel.append(h('p', {class: 'empty'}, 'Device time: ' + shown(REP.evidence.device)));
  }
  draw();
}
)sp",
R"sp(
/* Ticks of a log axis from a to b (a > 0): powers of ten, with 2 and 5 between when there are few. */
function logTicks(a, b) {
  const out = [];
  for (let e = Math.floor(Math.log10(a)); e <= Math.ceil(Math.log10(b)); ++e) {
    for (const m of [1, 2, 5]) {
      const v = m * Math.pow(10, e);
      if (v >= a && v <= b) out.push({v: v, major: m === 1});
    }
  }
  const majors = out.filter(function (t) { return t.major; });
  return majors.length >= 3 ? majors : out;
}
/* Ticks of a linear axis from 0 to the first step at or above max: steps of 1, 2 or 5 times a power of ten. */
function linTicks(max, n) {
  if (!(max > 0)) return [0, 1];
  const raw = max / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(function (m) { return m * p; }).find(function (s) { return s >= raw; });
  const out = [];
  for (let k = 0; k === 0 || out[k - 1] < max * 0.9999; ++k) out.push(k * step);
  return out;
}
/* An axis label's anchor: kept inside [a, b] near the ends. */
function anchorAt(x, a, b) { return x - a < 18 ? 'start' : b - x < 18 ? 'end' : 'middle'; }

/* Duration histograms: the input is a list of {name, quantity ("host" | "device"), count, bins: [[lo, hi,
   n]]} with contiguous nanosecond bins; each name gets one chart, host and device overlaid on one log axis. */
function renderHistograms() {
  const list = DATA.histograms, body = byId('hist-body');
  const names = [], byName = new Map();
  for (const e of list) {
    if (!byName.has(e.name)) { byName.set(e.name, {}); names.push(e.name); }
    byName.get(e.name)[e.quantity] = e;
  }
  byId('hist-sub').textContent = 'Duration of every instance in log-spaced bins (8 per octave): host total in blue, device span in orange ' +
    'where the name has device spans. Up to ' + DATA.limits.histogram_names + ' names, those with the largest host totals' +
    (REP.flat.length > names.length ? ' (' + names.length + ' of ' + REP.flat.length + ' names shown).' : '.');
  if (!names.length) { body.append(h('p', {class: 'empty'}, '(no finished scopes)')); return; }
  for (const name of names) body.append(histogramCard(name, byName.get(name)));
}

function histogramCard(name, series) {
  const W = 300, H = 130, L = 8, R = 8, T = 14, B = 22;
  const parts = [['host', 'var(--host)'], ['device', 'var(--device)']].filter(function (p) { return series[p[0]]; });
  let lo = Infinity, hi = 0, top = 0;
  for (const [q] of parts) for (const b of series[q].bins) {
    lo = Math.min(lo, Math.max(b[0], 1)); hi = Math.max(hi, b[1] + 1); top = Math.max(top, b[2]);
  }
  lo = lo / 1.25; hi = hi * 1.25;
  const X = function (v) { return L + (Math.log(Math.max(v, lo)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)) * (W - L - R); };
  const Y = function (n) { return T + (1 - n / top) * (H - T - B); };
  const svg = svgEl('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'histogram', class: 'hist'});
  const axis = svgEl('g', {class: 'axis'});
  axis.append(svgEl('line', {x1: L, x2: W - R, y1: H - B + 0.5, y2: H - B + 0.5}));
  let ticks = logTicks(lo, hi);
  if (ticks.length < 2) {  /* a narrow range: label the data's ends instead, if they are apart */
    ticks = [{v: lo * 1.25}];
    if (X(hi / 1.25) - X(lo * 1.25) > 40) ticks.push({v: hi / 1.25});
  }
  let lastLabel = -Infinity;
  for (const t of ticks) {
    const x = X(t.v);
    axis.append(svgEl('line', {x1: x, x2: x, y1: H - B, y2: H - B + 4}));
    if (x - lastLabel < 48) continue;  /* no overlapping labels */
    axis.append(svgEl('text', {x: x, y: H - 6, 'text-anchor': anchorAt(x, L, W - R)}, fmtTick(t.v)));
    lastLabel = x;
  }
  svg.append(axis, svgEl('text', {x: L, y: 10, class: 'muted'}, 'most in one bin: ' + fmtInt(top)));
  for (const [q, fill] of parts) {
    const g = svgEl('g', {fill: fill, 'fill-opacity': parts.length > 1 ? 0.7 : 0.85});
    for (const b of series[q].bins) {
      const x0 = X(Math.max(b[0], 1)), x1 = X(b[1] + 1), y = Y(b[2]);
      const bar = svgEl('rect', {x: x0.toFixed(2), y: y.toFixed(2), width: Math.max(x1 - x0 - 0.4, 0.8).toFixed(2),
                                 height: Math.max(H - B - y, 0.5).toFixed(2)});
      bar.addEventListener('mouseenter', function (e) {
        showTip(e, (q === 'host' ? 'host total ' : 'device span ') + fmtDur(b[0]) + ' .. ' + fmtDur(b[1]) + ': ' + fmtInt(b[2]) +
                   (b[2] === 1 ? ' instance' : ' instances'));
      });
      bar.addEventListener('mousemove', moveTip);
      bar.addEventListener('mouseleave', hideTip);
      g.append(bar);
    }
    svg.append(g);
  }
  const flat = REP.flat.find(function (f) { return f.name === name; });
  let sub = fmtInt(series.host ? series.host.count : 0) + ' calls';
  if (flat) sub += '; median ' + (flat.device ? 'host ' + fmtDur(flat.host.median) + ', device ' + fmtDur(flat.device.median) : fmtDur(flat.host.median));
  return h('div', {class: 'card'}, h('h3', {title: shown(name)}, shown(name)), h('p', {class: 'sub'}, sub), svg);
}
)sp",
R"sp(
/* Root scopes over time: each top-level instance's host duration against its start, one series per thread.
   Hovering finds the nearest point. */
function renderRoots() {
  const data = DATA.roots, body = byId('roots-body'), cap = DATA.limits.root_points_per_thread;
  const threads = data.threads.filter(function (t) { return t.points.length; });
  const sampled = threads.filter(function (t) { return t.shown < t.roots; });
  byId('roots-sub').textContent = 'Each root (top-level) scope instance: its host duration (y) against its start (x), one colour per ' +
    'thread: a step-time plot when the roots are steps. At most ' + fmtInt(cap) + ' roots per thread are drawn; past that, the ' +
    'shortest and the longest of each group of consecutive roots' +
    (sampled.length ? ' (' + sampled.map(function (t) { return threadName(t) + ': ' + fmtInt(t.shown) + ' of ' + fmtInt(t.roots); }).join(', ') + ').' : '.');
  if (!threads.length) { body.append(h('p', {class: 'empty'}, '(no finished scopes)')); return; }
  let t0 = Infinity, t1 = -Infinity, top = 0, total = 0;
  for (const t of threads) for (const p of t.points) {
    t0 = Math.min(t0, p[0]); t1 = Math.max(t1, p[0]); top = Math.max(top, p[1]); ++total;
  }
  const W = 1200, H = 320, L = 72, R = 16, T = 12, B = 36, span = Math.max(t1 - t0, 1);
  const yTicks = linTicks(top * 1.04, 5), yMax = yTicks[yTicks.length - 1];
  const X = function (v) { return L + (v - t0) / span * (W - L - R); };
  const Y = function (v) { return T + (1 - v / yMax) * (H - T - B); };
  const svg = svgEl('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'root scopes over time', class: 'roots'});
  const grid = svgEl('g', {class: 'grid'}), axis = svgEl('g', {class: 'axis'});
  for (const v of yTicks) {
    grid.append(svgEl('line', {x1: L, x2: W - R, y1: Y(v), y2: Y(v)}));
    axis.append(svgEl('text', {x: L - 6, y: Y(v) + 4, 'text-anchor': 'end'}, fmtTick(v)));
  }
  for (const v of linTicks(span, 8)) {
    if (v > span) break;
    grid.append(svgEl('line', {x1: X(t0 + v), x2: X(t0 + v), y1: T, y2: H - B}));
    axis.append(svgEl('text', {x: X(t0 + v), y: H - B + 16, 'text-anchor': anchorAt(X(t0 + v), L, W - R)}, '+' + fmtTick(v)));
  }
  axis.append(svgEl('line', {x1: L, x2: W - R, y1: H - B + 0.5, y2: H - B + 0.5}),
              svgEl('line', {x1: L - 0.5, x2: L - 0.5, y1: T, y2: H - B}),
              svgEl('text', {x: L, y: H - 4, class: 'muted'}, 'start, from the first root scope shown'),
              svgEl('text', {x: 12, y: T + (H - T - B) / 2, transform: 'rotate(-90 12 ' + (T + (H - T - B) / 2) + ')',
                             'text-anchor': 'middle', class: 'muted'}, 'host duration'));
  svg.append(grid, axis);
  const dots = total <= 4000;
  threads.forEach(function (t, k) {
    const c = SERIES[k % SERIES.length];
    const d = t.points.map(function (p, j) { return (j ? 'L' : 'M') + X(p[0]).toFixed(1) + ' ' + Y(p[1]).toFixed(1); }).join('');
    svg.append(svgEl('path', {d: d, fill: 'none', stroke: c, 'stroke-width': 1.2, 'stroke-opacity': dots ? 0.45 : 0.8, class: 'series'}));
    if (dots) {
      const g = svgEl('g', {fill: c});
      for (const p of t.points) g.append(svgEl('circle', {cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: total > 1000 ? 1.7 : 2.6}));
      svg.append(g);
    }
  });
  const mark = svgEl('circle', {r: 5, fill: 'none', stroke: '#1d2330', 'stroke-width': 1.5, visibility: 'hidden'});
  svg.append(mark);
  svg.addEventListener('mousemove', function (e) {
    const box = svg.getBoundingClientRect(), sx = W / box.width;
    const mx = (e.clientX - box.left) * sx, my = (e.clientY - box.top) * sx;
    let best = null, bestD = 144 * sx * sx;
    threads.forEach(function (t) {
      for (const p of t.points) {
        const dx = X(p[0]) - mx, dy = Y(p[1]) - my, dd = dx * dx + dy * dy;
        if (dd < bestD) { bestD = dd; best = [t, p]; }
      }
    });
    if (!best) { mark.setAttribute('visibility', 'hidden'); hideTip(); return; }
    const [t, p] = best;
    mark.setAttribute('cx', X(p[0]));
    mark.setAttribute('cy', Y(p[1]));
    mark.setAttribute('visibility', 'visible');
    showTip(e, shown(data.names[p[2]] == null ? '?' : data.names[p[2]]) + '\n' + threadName(t) + '\nhost duration ' + fmtDur(p[1]) +
               '\nstarts +' + fmtDur(p[0] - t0));
  });
  svg.addEventListener('mouseleave', function () { mark.setAttribute('visibility', 'hidden'); hideTip(); });
  const legend = h('div', {class: 'legend'});
  threads.forEach(function (t, k) {
    legend.append(h('span', null, h('i', {style: 'background:' + SERIES[k % SERIES.length]}),
                    threadName(t) + ': ' + fmtInt(t.roots) + (t.roots === 1 ? ' root' : ' roots')));
  });
  body.append(legend, svg);
}
function threadName(t) { return t.name ? shown(t.name) + ' (thread ' + t.thread + ')' : 'thread ' + t.thread; }

/* The per-rank hook: DATA.ranks is null for one process; a report merged from several ranks puts an array
   of {rank, ...numbers} there, and this draws a sortable table of it and a bar per rank of its first
   quantity besides the rank. Fields ending in _ns are durations. */
function renderRanks(ranks) {
  if (!Array.isArray(ranks) || !ranks.length) return;
  byId('ranks').hidden = false;
  byId('nav-ranks').hidden = false;
  const keys = [];
  for (const r of ranks) for (const k in r) if (keys.indexOf(k) < 0) keys.push(k);
  keys.sort(function (a, b) { return (b === 'rank') - (a === 'rank'); });
  const columns = keys.map(function (k) {
    const isDur = /_ns$/.test(k), isText = ranks.some(function (r) { return typeof r[k] === 'string'; });
    return {label: shown(k), text: isText, value: function (r) { return r[k] == null ? null : r[k]; },
            fmt: isText ? shown : isDur ? fmtDur : fmtInt};
  });
  const body = byId('ranks-body'), table = h('table', {class: 'data', id: 'rank-table'});
  body.append(h('div', {class: 'scroll'}, table));
  makeTable(table, null, columns, ranks, {sort: 0});
  const k = keys.find(function (x) { return x !== 'rank' && ranks.every(function (r) { return typeof r[x] === 'number'; }); });
  if (!k) return;
  const max = Math.max.apply(null, ranks.map(function (r) { return r[k]; }).concat([1e-9])), W = 1200, ROW = 18;
  const svg = svgEl('svg', {viewBox: '0 0 ' + W + ' ' + (ranks.length * ROW + 4), role: 'img', 'aria-label': 'per rank', class: 'rank-chart'});
  const fmt = /_ns$/.test(k) ? fmtDur : fmtInt;
  ranks.forEach(function (r, i) {
    const w = Math.max(0, r[k]) / max * (W - 260);
    svg.append(svgEl('text', {x: 0, y: i * ROW + 13}, 'rank ' + shown(r.rank)),
               svgEl('rect', {x: 90, y: i * ROW + 3, width: w.toFixed(1), height: ROW - 5, fill: 'var(--host)'}),
               svgEl('text', {x: 96 + w, y: i * ROW + 13, class: 'muted'}, shown(k) + ' ' + fmt(r[k])));
  });
  body.append(svg);
}

function main() {
  renderTree();
  renderFlat();
  renderWork();
  renderKernels();
  renderIcicle();
  renderHistograms();
  renderRoots();
  renderRanks(DATA.ranks);
}
try {
  main();
} catch (e) {
  console.error(e);
  document.querySelector('main').prepend(h('p', {class: 'alarm'}, 'This page could not draw its tables and charts: ' + e));
}
)sp",
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END

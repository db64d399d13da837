// scopeprof: the HTML report's script, first part (format/html.hpp): reading the data, formatting, the
// tooltip, and the sortable tree, flat and kernel tables. The charts and the start are in html_charts.hpp;
// the two parts form one script. Text from the report only ever reaches the page through textContent
// (Node.append of a string, or a text node), never as markup. The source is ASCII and kept in pieces
// of under 16 KB, the longest string literal every C++ compiler takes.
#pragma once

#include <scopeprof/config.hpp>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline constexpr const char* html_script_parts[] = {
R"sp('use strict';
/* The report's data: one JSON document (format/html_data.hpp). */
const DATA = JSON.parse(document.getElementById('scopeprof-data').textContent);
const REP = DATA.report;
const CUPTI = !!REP.evidence.cupti_valid;
/* The SVG namespace, taken from the HTML parser rather than written out. */
const SVG_NS = (function () {
  const t = document.createElement('template');
  t.innerHTML = '<svg></svg>';
  return t.content.firstChild.namespaceURI;
})();

/* An HTML element; strings among the children become text nodes. */
function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const k in props || {}) {
    const v = props[k];
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of kids) if (c != null) e.append(c);
  return e;
}
/* An SVG element with attributes and optional text. */
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const k in attrs || {}) if (attrs[k] != null) e.setAttribute(k, String(attrs[k]));
  if (text != null) e.textContent = text;
  return e;
}
function byId(id) { return document.getElementById(id); }

/* A name as the text tables show it: control characters escaped, so one scope is one line. */
function shown(name) {
  return String(name).replace(/[\u0000-\u001f\u007f-\u009f]/g, function (c) {
    const n = c.charCodeAt(0);
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return (n >= 0x80 ? '\\u00' : '\\x') + n.toString(16).padStart(2, '0');
  });
}
/* Nanoseconds as the text report writes them: 850 ns, 12.35 us, 1.234 ms, 2.500 s. */
function fmtDur(ns) {
  if (ns == null || !isFinite(ns)) return 'n/a';
  const a = Math.abs(ns);
  if (a < 1e3) return ns.toFixed(0) + ' ns';
  if (a < 1e6) return (ns / 1e3).toFixed(2) + ' us';
  if (a < 1e9) return (ns / 1e6).toFixed(3) + ' ms';
  return (ns / 1e9).toFixed(3) + ' s';
}
/* Axis labels: as short as the value allows (1 us, 2.5 ms). */
function fmtTick(ns) {
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];
  for (const [f, u] of units) if (Math.abs(ns) >= f || f === 1) return +(ns / f).toPrecision(3) + ' ' + u;
  return String(ns);
}
function fmtInt(v) { return v == null ? 'n/a' : Number(v).toLocaleString('en-US'); }
function fmtFixed(digits) { return function (v) { return v == null || !isFinite(v) ? 'n/a' : Number(v).toFixed(digits); }; }
/* Host total over device span, or null without a device span. */
function ratio(host, dev) { return dev && dev.total > 0 ? host / dev.total : null; }

/* A stable pastel colour per name (FNV-1a over the UTF-16 units). */
function colour(name) {
  let x = 0x811c9dc5;
  for (let i = 0; i < name.length; ++i) x = Math.imul(x ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return 'hsl(' + (x % 360) + ',58%,' + (66 + (x >>> 9) % 12) + '%)';
}
const SERIES = ['#3b7dd8', '#e08a2c', '#2e8b57', '#9b59b6', '#c0392b', '#16a0a0', '#8e6d3b', '#d35ea0', '#5d6d7e', '#7cb342'];

/* The tooltip: one element, text only. */
const tip = byId('tip');
function moveTip(ev) {
  const pad = 14, r = tip.getBoundingClientRect();
  let x = ev.clientX + pad, y = ev.clientY + pad;
  if (x + r.width > window.innerWidth) x = Math.max(0, ev.clientX - r.width - pad);
  if (y + r.height > window.innerHeight) y = Math.max(0, ev.clientY - r.height - pad);
  tip.style.left = x + 'px';
  tip.style.top = y + 'px';
}
function showTip(ev, text) { tip.textContent = text; tip.hidden = false; moveTip(ev); }
function hideTip() { tip.hidden = true; }
)sp",
R"sp(
/* Sortable tables. A column: {label, title, text (left-aligned, sorts as text), value(row) -> number,
   string or null (null: n/a, always sorted last), cell(row) -> shown text (default: fmt(value)), tip(row)
   -> a cell's title}. opts: sort (the first sort column), nameCol (the column of names, default 0), tree.
   A tree table's rows have depth and parent (an index, -1 for a root) in depth-first order; sorting orders
   the siblings under each parent, and a row with children folds. Past ROW_LIMIT rows a button shows the
   rest. */
const ROW_LIMIT = 1500;
function col(label, value, fmt, title) { return {label: label, value: value, fmt: fmt, title: title}; }
function durCol(label, value, title) { return col(label, value, fmtDur, title); }

function makeTable(tableEl, toolsEl, columns, rows, opts) {
  const tree = !!opts.tree, nameCol = opts.nameCol || 0;
  const state = {col: opts.sort, dir: columns[opts.sort].text ? 1 : -1, limit: ROW_LIMIT};
  const kids = rows.map(function () { return []; }), roots = [];
  if (tree) rows.forEach(function (r, i) { (r.parent >= 0 && r.parent < i ? kids[r.parent] : roots).push(i); });
  const open = rows.map(function (r) { return !tree || r.depth < (rows.length > 400 ? 2 : 1e9); });
  const thead = h('thead'), tbody = h('tbody'), headRow = h('tr');
  thead.append(headRow);
  tableEl.replaceChildren(thead, tbody);
  const heads = columns.map(function (c, i) {
    const th = h('th', {scope: 'col', class: c.text ? 'text' : null, title: c.title, tabindex: 0,
                        onclick: function () { sortBy(i); },
                        onkeydown: function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(i); } }},
                 c.label);
    headRow.append(th);
    return th;
  });
  const count = h('span');
  if (toolsEl) {
    toolsEl.replaceChildren(count);
    if (tree && rows.some(function (r) { return r.depth > 0; })) {
      toolsEl.append(h('button', {type: 'button', onclick: function () { open.fill(true); render(); }}, 'expand all'),
                     h('button', {type: 'button', onclick: function () { open.fill(false); render(); }}, 'collapse all'));
    }
  }

  function cmp(a, b) {
    const c = columns[state.col], va = c.value(rows[a]), vb = c.value(rows[b]);
    if (va == null || vb == null) return va == null ? (vb == null ? a - b : 1) : -1;
    const d = c.text ? String(va).localeCompare(String(vb)) : va - vb;
    return d ? d * state.dir : a - b;
  }
  /* The rows shown, in order: depth first through the open rows of a tree, sorted siblings. */
  function order() {
    if (!tree) return rows.map(function (_, i) { return i; }).sort(cmp);
    const out = [], stack = roots.slice().sort(cmp).reverse();
    while (stack.length) {
      const i = stack.pop();
      out.push(i);
      if (open[i] && kids[i].length) stack.push.apply(stack, kids[i].slice().sort(cmp).reverse());
    }
    return out;
  }
  function rowEl(i) {
    const r = rows[i], tr = h('tr', {'data-row': i});
    columns.forEach(function (c, ci) {
      const v = c.value(r);
      const text = c.cell ? c.cell(r) : (v == null ? 'n/a' : c.fmt(v));
      const cls = (c.text ? 'text' : '') + (ci === nameCol ? ' name' : '') + (v == null ? ' na' : '');
      const td = h('td', {class: cls.trim() || null});
      if (ci === 0 && tree) {
        td.style.paddingLeft = (4 + 16 * r.depth) + 'px';
        if (kids[i].length) {
          td.append(h('button', {type: 'button', class: 'toggle', 'aria-expanded': String(open[i]),
                                 'aria-label': open[i] ? 'fold' : 'unfold',
                                 onclick: function () { open[i] = !open[i]; render(); }},
                      open[i] ? '\u25BE' : '\u25B8'));
        } else {
          td.append(h('span', {class: 'toggle'}));
        }
      }
      td.append(ci === nameCol ? h('span', {class: 'label'}, text) : text);
      if (c.tip) td.title = c.tip(r);
      tr.append(td);
    });
    return tr;
  }
  function render() {
    const ids = order(), n = Math.min(ids.length, state.limit), frag = document.createDocumentFragment();
    for (let k = 0; k < n; ++k) frag.append(rowEl(ids[k]));
    if (ids.length > n) {
      frag.append(h('tr', null, h('td', {class: 'more', colspan: columns.length},
                                  n + ' of ' + ids.length + ' rows shown ',
                                  h('button', {type: 'button', onclick: function () { state.limit = Infinity; render(); }}, 'show all'))));
    }
    tbody.replaceChildren(frag);
    heads.forEach(function (th, i) {
      if (i === state.col) th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    });
    count.textContent = rows.length + (rows.length === 1 ? ' row' : ' rows') + (tree ? ' (call paths)' : '');
  }
  function sortBy(i) {
    if (state.col === i) state.dir = -state.dir;
    else { state.col = i; state.dir = columns[i].text ? 1 : -1; }
    render();
  }
  render();
  return {sortBy: sortBy, render: render};
}
)sp",
R"sp(
/* Device quantities of a row, null without a device span. */
function dev(r, key) { return r.device ? r.device[key] : null; }
function busy(r, key) { return r.cupti ? r.cupti[key] : null; }
const NAME_TITLE = 'the scope name (control characters shown escaped)';

function renderTree() {
  const columns = [
    {label: 'Scope', text: true, title: NAME_TITLE, value: function (r) { return r.name; }, cell: function (r) { return shown(r.name); }},
    col('Calls', function (r) { return r.calls; }, fmtInt, 'instances reached by this call path'),
    durCol('Host total', function (r) { return r.host.total; }, 'host time inside the scope, children included (host clock)'),
    durCol('Host self', function (r) { return r.host.self; }, 'host total minus the host totals of its children'),
    durCol('Dev span', function (r) { return dev(r, 'total'); }, 'device span: end event minus begin event on the scope\'s stream (CUDA events)'),
    durCol('Dev self', function (r) { return dev(r, 'self'); }, 'device span minus the union of its children\'s spans on that stream'),
    col('Host/Dev', function (r) { return ratio(r.host.total, r.device); }, fmtFixed(2), 'host total / device span'),
  ];
  if (CUPTI) {
    columns.push(durCol('Dev busy', function (r) { return busy(r, 'busy'); }, 'summed duration of the kernels, copies and memsets launched inside (CUPTI)'),
                 col('Kernels', function (r) { return busy(r, 'kernels'); }, fmtInt, 'kernels launched inside, children included (CUPTI)'));
  }
  if (!REP.tree.length) { byId('tree-table').replaceWith(h('p', {class: 'empty'}, '(no finished scopes)')); return; }
  makeTable(byId('tree-table'), byId('tree-tools'), columns, REP.tree, {tree: true, sort: 2});
}

function renderFlat() {
  const columns = [
    {label: 'Name', text: true, title: NAME_TITLE, value: function (r) { return r.name; }, cell: function (r) { return shown(r.name); }},
    col('Calls', function (r) { return r.calls; }, fmtInt, 'instances'),
    durCol('Host total', function (r) { return r.host.total; }, 'inclusive host time; an instance nested in another of the same name counted once'),
    durCol('Host self', function (r) { return r.host.self; }, 'host time minus the host totals of the children'),
    durCol('Avg', function (r) { return r.host.avg; }, 'mean host total per call'),
    durCol('p50~', function (r) { return r.host.median; }, 'median host total per call (within 1/129)'),
    durCol('p99~', function (r) { return r.host.p99; }, '99th percentile of the host total per call (within 1/129)'),
    durCol('Min', function (r) { return r.host.min; }, 'shortest call'),
    durCol('Max', function (r) { return r.host.max; }, 'longest call'),
    durCol('StdDev', function (r) { return r.host.stddev; }, 'population standard deviation of the host total per call'),
    col('Time %', function (r) { return r.host.time_pct; }, fmtFixed(1), 'share of all host self time (the column adds up to 100)'),
    {label: 'Dev span', title: 'summed device spans (CUDA events); n/a says why there are none',
     value: function (r) { return dev(r, 'total'); },
     cell: function (r) { return r.device ? fmtDur(r.device.total) : r.device_status; }},
    durCol('Dev self', function (r) { return dev(r, 'self'); }, 'device spans minus the spans of device-timed children on the same stream'),
    durCol('Dev avg', function (r) { return dev(r, 'avg'); }, 'mean device span per timed call'),
    durCol('Dev p50~', function (r) { return dev(r, 'median'); }, 'median device span per timed call (within 1/129)'),
    durCol('Dev p99~', function (r) { return dev(r, 'p99'); }, '99th percentile of the device span per timed call (within 1/129)'),
    col('Host/Dev', function (r) { return ratio(r.host.total, r.device); }, fmtFixed(2), 'host total / device span'),
  ];
  if (CUPTI) {
    columns.push(durCol('Dev busy', function (r) { return busy(r, 'busy'); }, 'summed duration of the work launched inside (CUPTI)'),
                 durCol('Busy self', function (r) { return busy(r, 'busy_self'); }, 'the same for the work launched directly by these scopes'),
                 col('Kernels', function (r) { return busy(r, 'kernels'); }, fmtInt, 'kernels launched inside (CUPTI)'));
  }
  if (!REP.flat.length) { byId('flat-table').replaceWith(h('p', {class: 'empty'}, '(no finished scopes)')); return; }
  makeTable(byId('flat-table'), byId('flat-tools'), columns, REP.flat, {sort: 3});
}

function renderKernels() {
  if (!CUPTI) return;
  byId('kernels').hidden = false;
  byId('nav-kernels').hidden = false;
  const rows = REP.kernel_summary;
  if (!rows.length) { byId('kernel-table').replaceWith(h('p', {class: 'empty'}, '(no kernels)')); return; }
  const columns = [
    col('Time %', function (r) { return r.time_pct; }, fmtFixed(1), 'share of all kernel time'),
    durCol('Total Time', function (r) { return r.total; }, 'summed kernel durations'),
    col('Instances', function (r) { return r.instances; }, fmtInt, 'kernel launches'),
    durCol('Avg', function (r) { return r.avg; }), durCol('Med~', function (r) { return r.median; }),
    durCol('Min', function (r) { return r.min; }), durCol('Max', function (r) { return r.max; }),
    durCol('StdDev', function (r) { return r.stddev; }),
    {label: 'Scope', text: true, title: 'innermost launching scope', value: function (r) { return r.scope; }, cell: function (r) { return shown(r.scope); }},
    {label: 'Name', text: true, title: 'kernel name, demangled (hover: the symbol)', value: function (r) { return r.name; },
     cell: function (r) { return shown(r.name); }},
  ];
  columns[9].tip = function (r) { return 'symbol: ' + shown(r.mangled); };
  makeTable(byId('kernel-table'), byId('kernel-tools'), columns, rows, {sort: 0, nameCol: 9});
}
)sp",
R"sp(
/* A quantity with an SI prefix, 3 significant digits: 36.9 GB, 4.19 GFLOP. */
function fmtSI(unit) {
  return function (v) {
    if (v == null || !isFinite(v)) return 'n/a';
    const steps = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [f, p] of steps) if (Math.abs(v) >= f) return (v / f).toPrecision(3) + ' ' + p + unit;
    return (+v.toPrecision(3)) + ' ' + unit;
  };
}
function work(r, key) { return r.work && r.work[key] != null ? r.work[key] : null; }
/* The time the rates divide by: the device spans of the instances with work, else their host totals. */
function workTime(r) { return !r.work ? null : r.work.basis === 'device' ? r.work.device_span : r.work.basis === 'host' ? r.work.host : null; }

/* Declared work (PROF_SCOPE_WORK, add_work): shown only when some scope declared any. */
function renderWork() {
  const rows = REP.flat.filter(function (r) { return !!r.work; });
  if (!rows.length) return;
  byId('work').hidden = false;
  byId('nav-work').hidden = false;
  const pct = fmtFixed(1);
  const columns = [
    {label: 'Name', text: true, title: NAME_TITLE, value: function (r) { return r.name; }, cell: function (r) { return shown(r.name); }},
    col('Calls', function (r) { return work(r, 'calls'); }, fmtInt, 'instances that declared work'),
    col('Declared bytes', function (r) { return work(r, 'bytes'); }, fmtSI('B'), 'bytes the program declared, summed'),
    col('Declared FLOPs', function (r) { return work(r, 'flops'); }, fmtSI('FLOP'), 'floating-point operations the program declared, summed'),
    {label: 'Over', text: true, title: 'what the rates divide by: device spans, or host totals where no instance was device-timed',
     value: function (r) { return work(r, 'basis'); }, cell: function (r) { return work(r, 'basis') || 'n/a'; }},
    durCol('Time', workTime, 'the summed spans (or host totals) of the instances that declared work'),
    col('GB/s', function (r) { const v = work(r, 'bytes_per_s'); return v == null ? null : v / 1e9; }, fmtFixed(1), 'declared bytes / time'),
    col('TFLOP/s', function (r) { const v = work(r, 'flops_per_s'); return v == null ? null : v / 1e12; }, fmtFixed(3), 'declared FLOPs / time'),
    col('FLOP/B', function (r) { return work(r, 'flop_per_byte'); }, fmtFixed(3), 'arithmetic intensity: declared FLOPs / declared bytes'),
    col('%BW spec', function (r) { return work(r, 'pct_bw_spec'); }, pct, 'GB/s as a percentage of the device\'s spec bandwidth (attributes)'),
    col('%BW meas', function (r) { return work(r, 'pct_bw_measured'); }, pct, 'GB/s as a percentage of the measured copy bandwidth (calibrate_device)'),
    col('%FLOP spec', function (r) { return work(r, 'pct_flops_spec'); }, pct, 'TFLOP/s as a percentage of the spec FP32 peak'),
    col('%FLOP meas', function (r) { return work(r, 'pct_flops_measured'); }, pct, 'TFLOP/s as a percentage of the measured FMA peak (calibrate_device)'),
    {label: 'Bound', text: true, title: 'memory or compute, from the roofline ridge point (spec peaks)',
     value: function (r) { return work(r, 'bound'); }, cell: function (r) { return work(r, 'bound') || 'n/a'; }},
  ];
  makeTable(byId('work-table'), byId('work-tools'), columns, rows, {sort: 5});
  const notes = byId('work-notes');
  for (const p of REP.device_peaks || []) {
    const meas = p.measured_bytes_per_s != null
      ? 'measured ' + fmtFixed(0)(p.measured_bytes_per_s / 1e9) + ' GB/s, ' + fmtFixed(1)(p.measured_flops_per_s / 1e12) + ' TFLOP/s (' + shown(p.measured_note) + ')'
      : 'measured: n/a (' + (p.measured_note ? shown(p.measured_note) : 'scopeprof::calibrate_device() or SCOPEPROF_CALIBRATE=1') + ')';
    notes.append(h('li', null, 'device ' + p.device + ' (' + shown(p.name) + ', L2 ' + fmtSI('B')(p.l2_bytes) + '): spec ' +
      fmtFixed(0)(p.spec_bytes_per_s / 1e9) + ' GB/s, ' + fmtFixed(1)(p.spec_flops_per_s / 1e12) + ' TFLOP/s FP32; ' + meas));
  }
  const inL2 = rows.filter(function (r) { return work(r, 'fits_l2') === true; });
  if (inL2.length) {
    notes.append(h('li', null, 'declared bytes per call fit in L2 for ' + inL2.map(function (r) { return shown(r.name); }).join(', ') +
      ': their bandwidth may exceed DRAM\'s.'));
  }
  const c = REP.work || {};
  if (c.no_scope || c.lost || c.rejected) {
    notes.append(h('li', {class: 'alarm'}, 'declarations on no row: ' + (c.no_scope || 0) + ' with no scope open, ' + (c.lost || 0) +
      ' on a scope not recorded, ' + (c.rejected || 0) + ' with a negative, NaN or infinite value'));
  }
}
)sp",
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END

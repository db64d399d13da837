// scopeprof: the static parts of the HTML report (format/html.hpp): the head with its Content-Security-Policy
// (nothing may be loaded: no network, no fonts, no images but data: ones), the style sheet, and the body's
// sections that the script (html_script.hpp, html_charts.hpp) fills. No text from the report is in here.
#pragma once

#include <scopeprof/config.hpp>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// From the doctype to the opening of the style element.
inline constexpr const char* html_page_head = R"sp(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>scopeprof report</title>
<style>
)sp";

/// The style sheet: system fonts only, light colours, tabular figures in the tables.
inline constexpr const char* html_page_style = R"sp(
:root { --fg: #1d2330; --muted: #5f6b7a; --line: #dde2ea; --bg: #f5f7fa; --card: #fff; --accent: #2f6fdf;
        --host: #3b7dd8; --device: #e08a2c; --bad: #c0392b; --ok: #2e8b57; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header, main > section, nav { max-width: 1400px; margin: 0 auto; }
header { padding: 20px 34px 8px; }
h1 { font-size: 22px; margin: 0 0 2px; font-weight: 600; }
h2 { font-size: 16px; margin: 0 0 2px; font-weight: 600; }
h3 { font-size: 13px; margin: 0; font-weight: 600; }
.gen, .sub { color: var(--muted); margin: 0 0 10px; }
dl.counts { display: flex; gap: 10px; margin: 8px 0 12px; flex-wrap: wrap; }
dl.counts .count { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 6px 14px;
                   min-width: 110px; }
dl.counts dt { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .04em; }
dl.counts dd { margin: 0; font-size: 18px; font-variant-numeric: tabular-nums; }
dl.counts .alarm { border-color: var(--bad); color: var(--bad); }
p.alarm, li.alarm { color: var(--bad); font-weight: 600; }
ul.notes { color: var(--muted); margin: 8px 0 0; padding-left: 20px; }
p.note { color: var(--muted); }
table.evidence { border-collapse: collapse; background: var(--card); border: 1px solid var(--line);
                 border-radius: 6px; width: 100%; }
table.evidence caption { text-align: left; font-weight: 600; padding: 0 0 4px; }
table.evidence th, table.evidence td { text-align: left; padding: 5px 10px; border-top: 1px solid var(--line);
                                       vertical-align: top; }
table.evidence thead th { color: var(--muted); font-weight: 500; font-size: 11px; border-top: 0; }
table.evidence td.cols { color: var(--muted); white-space: nowrap; }
table.evidence td.why { word-break: break-word; }
.badge { display: inline-block; border-radius: 9px; padding: 0 8px; font-size: 11px; font-weight: 600; }
.badge.ok { background: #e3f4ea; color: var(--ok); }
.badge.na { background: #f1f2f4; color: var(--muted); }
pre.warnings { background: #fff8e6; border: 1px solid #f0d48a; padding: 8px 10px; border-radius: 6px;
               white-space: pre-wrap; word-break: break-word; }
nav { position: sticky; top: 0; z-index: 5; background: rgba(245, 247, 250, .95); padding: 6px 34px;
      border-bottom: 1px solid var(--line); display: flex; gap: 16px; flex-wrap: wrap; }
nav a { color: var(--accent); text-decoration: none; font-weight: 500; }
main { padding: 0 16px; }
main > section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin: 14px auto;
                 padding: 14px 18px; }
main > p.notes { max-width: 1400px; margin: 8px auto 30px; color: var(--muted); padding: 0 24px; }
@media (max-width: 800px) { header, nav { padding-left: 16px; padding-right: 16px; } main { padding: 0 6px; } }
.tools { display: flex; gap: 8px; align-items: center; margin: 0 0 8px; flex-wrap: wrap; color: var(--muted); }
button { font: inherit; border: 1px solid var(--line); background: #f8f9fb; border-radius: 5px; padding: 2px 10px;
         cursor: pointer; color: var(--fg); }
button:hover { border-color: var(--accent); }
.scroll { overflow: auto; max-height: 560px; border: 1px solid var(--line); border-radius: 6px; }
table.data { border-collapse: separate; border-spacing: 0; width: 100%; font-size: 12px; font-variant-numeric: tabular-nums; }
table.data th { position: sticky; top: 0; background: #eef1f6; font-weight: 600; text-align: right;
                padding: 5px 7px; white-space: nowrap; cursor: pointer; user-select: none;
                border-bottom: 1px solid var(--line); }
table.data th.text, table.data td.text { text-align: left; }
table.data th[aria-sort="descending"]::after { content: " \25BC"; font-size: 9px; color: var(--accent); }
table.data th[aria-sort="ascending"]::after { content: " \25B2"; font-size: 9px; color: var(--accent); }
table.data td { padding: 3px 7px; text-align: right; white-space: nowrap; border-bottom: 1px solid #eef0f3; }
table.data tbody tr:hover td { background: #f3f7ff; }
table.data td.na { color: #9aa3ae; }
table.data td.name { max-width: 520px; overflow: hidden; text-overflow: ellipsis; }
table.data td.more { text-align: left; color: var(--muted); }
.toggle { display: inline-block; width: 16px; border: 0; background: none; padding: 0; color: var(--muted); }
.toggle:hover { color: var(--accent); }
.empty { color: var(--muted); font-style: italic; }
.chart-title { display: flex; justify-content: space-between; align-items: baseline; margin: 10px 0 4px; gap: 12px; }
.chart-title span { color: var(--muted); }
svg { display: block; width: 100%; height: auto; font: 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
svg text { fill: var(--fg); }
svg .axis line, svg .axis path { stroke: #b8c0cc; }
svg .grid line { stroke: #edf0f4; }
svg .axis text, svg text.muted { fill: var(--muted); }
svg g.node rect { stroke: #fff; stroke-width: .6; }
svg g.node.hl rect { stroke: var(--fg); stroke-width: 1.5; }
svg g.node text { pointer-events: none; fill: #1d2330; }
.grid-cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(290px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px 4px; min-width: 0; }
.card h3 { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.card .sub { margin: 0; font-size: 11px; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; color: var(--muted); margin: 4px 0; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px;
            vertical-align: -1px; }
#tip { position: fixed; z-index: 10; pointer-events: none; background: #1d2330; color: #fff; padding: 6px 9px;
       border-radius: 5px; font-size: 12px; max-width: 460px; white-space: pre-wrap; word-break: break-word;
       box-shadow: 0 2px 8px rgba(0, 0, 0, .25); }
)sp";

/// The body after the header: navigation, the sections the script fills, the notes, the tooltip.
inline constexpr const char* html_page_body = R"sp(<nav>
<a href="#tree">Call tree</a><a href="#flat">By name</a><a href="#work" id="nav-work" hidden>Declared work</a><a href="#kernels" id="nav-kernels" hidden>Kernels</a>
<a href="#icicle">Icicle</a><a href="#histograms">Histograms</a><a href="#roots">Root scopes over time</a>
<a href="#ranks" id="nav-ranks" hidden>Per rank</a>
</nav>
<noscript><p class="alarm">The tables and charts of this page need JavaScript; the header above is complete without it.</p></noscript>
<main>
<section id="tree"><h2>Call tree</h2>
<p class="sub">All threads merged, one row per call path; Host/Dev = host total / device span. Click a heading to sort (siblings stay under their parent), a triangle to fold.</p>
<div class="tools" id="tree-tools"></div><div class="scroll"><table id="tree-table" class="data"></table></div></section>
<section id="flat"><h2>By name</h2>
<p class="sub">One row per name; Avg/p50/p99/Min/Max/StdDev of host total per call; Time % = share of all host self time. Columns marked ~ are within 1% (1/129 relative); every other figure is exact.</p>
<div class="tools" id="flat-tools"></div><div class="scroll"><table id="flat-table" class="data"></table></div></section>
<section id="work" hidden><h2>Declared work</h2>
<p class="sub">Bytes and FLOPs as the program declares them (PROF_SCOPE_WORK, add_work), over the device span of the instances that declared work, or over their host time where none has a span; percentages of the device's spec peak (its attributes) and measured peak (calibrate_device). n/a: a quantity not declared, or no time to divide by.</p>
<div class="tools" id="work-tools"></div><div class="scroll"><table id="work-table" class="data"></table></div><ul class="notes" id="work-notes"></ul></section>
<section id="kernels" hidden><h2>Kernels by scope (CUPTI)</h2>
<p class="sub">One row per (innermost launching scope, kernel); Time % = share of all kernel time; Avg/Med/Min/Max/StdDev per instance (Med~ within 1/129).</p>
<div class="tools" id="kernel-tools"></div><div class="scroll"><table id="kernel-table" class="data"></table></div></section>
<section id="icicle"><h2>Icicle: host total and device span</h2>
<p class="sub">The call tree as nested bars, one icicle per quantity on the same time scale: a bar's width is the scope's host total (top) or device span (bottom). They are different quantities and are never added.</p>
<div id="icicle-body"></div></section>
<section id="histograms"><h2>Duration histograms</h2>
<p class="sub" id="hist-sub"></p><div id="hist-body" class="grid-cards"></div></section>
<section id="roots"><h2>Root scopes over time</h2>
<p class="sub" id="roots-sub"></p><div id="roots-body"></div></section>
<section id="ranks" hidden><h2>Per rank</h2><p class="sub">One row per rank of a merged report.</p><div id="ranks-body"></div></section>
<p class="notes">Totals are inclusive. Do not add up the totals of nested rows: a parent's total already contains its children. Self columns and Time % can be added. Host time is CPU time spent inside the scope (mostly launching asynchronous work); device span is GPU time between the scope's boundaries on its stream. They are different quantities and are never summed. Dev busy (CUPTI) is the summed duration of the kernels, copies and memsets launched inside the scope; it can exceed the span when work overlaps or runs on other streams.</p>
</main>
<div id="tip" role="tooltip" hidden></div>
)sp";

}  // namespace detail
SCOPEPROF_NAMESPACE_END

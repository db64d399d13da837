// The HTML report (report::write_html) in Chromium: every sample's <name>.html opened as a file:// page
// in a headless Chromium with a fresh profile. Fails on any console error, page error or dialog (a scope
// named "</script><script>alert(1)</script>" must stay text), and on any request besides the file itself.
// Checks that the tables show the report's names (the tree in the report's order), that a click on a
// heading sorts, that a row folds, that the icicle, the histograms and the root-scope plot have elements,
// that the declared-work section shows the report's rates (and hides without work), and that the per-rank
// hook draws a table once the data has ranks. Full-page screenshots go to
// SCOPEPROF_ARTIFACTS/<name>.png.
//
//   SCOPEPROF_SAMPLES=dir SCOPEPROF_CHROMIUM=/usr/bin/chromium SCOPEPROF_ARTIFACTS=dir node html_report.mjs
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const samples = process.env.SCOPEPROF_SAMPLES;
const executablePath = process.env.SCOPEPROF_CHROMIUM;
const artifacts = process.env.SCOPEPROF_ARTIFACTS;
if (!samples || !executablePath || !artifacts) {
  console.error('html_report.mjs: set SCOPEPROF_SAMPLES, SCOPEPROF_CHROMIUM and SCOPEPROF_ARTIFACTS');
  process.exit(2);
}
fs.mkdirSync(artifacts, { recursive: true });

const failures = [];
function check(ok, what) {
  if (!ok) failures.push(what);
  return ok;
}

// A name as the page shows it: control characters escaped (the text tables' display_name()).
function shown(name) {
  return name.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    const n = c.charCodeAt(0);
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return (n >= 0x80 ? '\\u00' : '\\x') + n.toString(16).padStart(2, '0');
  });
}
const number = (text) => Number(text.replace(/,/g, ''));
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// One page: what it logged, what it asked for, the dialogs it opened.
async function openPage(context, file) {
  const url = pathToFileURL(file).href;
  const page = await context.newPage();
  const log = { errors: [], requests: [], dialogs: [] };
  page.on('console', (msg) => { if (msg.type() === 'error') log.errors.push('console: ' + msg.text()); });
  page.on('pageerror', (err) => log.errors.push('page error: ' + err.message));
  page.on('dialog', (d) => { log.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('request', (req) => { if (req.url() !== url) log.requests.push(req.url()); });
  await page.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
  await page.goto(url, { waitUntil: 'load' });
  return { page, log };
}

function checkLog(name, log) {
  check(log.errors.length === 0, `${name}: ${log.errors.join('; ')}`);
  check(log.requests.length === 0, `${name}: requests other than the file: ${log.requests.join(', ')}`);
  check(log.dialogs.length === 0, `${name}: dialogs opened: ${log.dialogs.join(', ')}`);
}

const texts = (page, selector) => page.$$eval(selector, (els) => els.map((e) => e.textContent));

async function checkTables(name, page, rep) {
  const flat = await texts(page, '#flat-table tbody td.name .label');
  const want = rep.flat.map((f) => shown(f.name));
  check(sameList([...flat].sort(), [...want].sort()), `${name}: flat table names ${JSON.stringify(flat)} != ${JSON.stringify(want)}`);
  const tree = await texts(page, '#tree-table tbody td.name .label');
  check(sameList(tree, rep.tree.map((t) => shown(t.name))), `${name}: tree rows are not the report's tree in its order: ${JSON.stringify(tree)}`);

  // Sorting: Calls descending, then ascending; Name ascending.
  const headings = await texts(page, '#flat-table thead th');
  const calls = headings.indexOf('Calls') + 1, nameCol = headings.indexOf('Name') + 1;
  check(calls > 0 && nameCol > 0, `${name}: flat table headings ${headings}`);
  const before = await texts(page, '#flat-table tbody td.name .label');
  await page.click(`#flat-table thead th:nth-child(${calls})`);
  const down = (await texts(page, `#flat-table tbody td:nth-child(${calls})`)).map(number);
  check(down.every((v, i) => i === 0 || down[i - 1] >= v), `${name}: Calls descending: ${down}`);
  check(await page.getAttribute(`#flat-table thead th:nth-child(${calls})`, 'aria-sort') === 'descending', `${name}: aria-sort`);
  const afterSort = await texts(page, '#flat-table tbody td.name .label');
  const expected = rep.flat.map((f, i) => [f.calls, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, i]) => shown(rep.flat[i].name));
  check(sameList(afterSort, expected), `${name}: rows after sorting by Calls: ${afterSort}`);
  await page.click(`#flat-table thead th:nth-child(${calls})`);
  const up = (await texts(page, `#flat-table tbody td:nth-child(${calls})`)).map(number);
  check(up.every((v, i) => i === 0 || up[i - 1] <= v), `${name}: Calls ascending: ${up}`);
  await page.click(`#flat-table thead th:nth-child(${nameCol})`);
  const byName = await texts(page, '#flat-table tbody td.name .label');
  check(byName.every((v, i) => i === 0 || byName[i - 1].localeCompare(v) <= 0), `${name}: Name ascending: ${byName}`);
  return !sameList(before, afterSort);  // whether sorting by Calls moved a row
}

async function checkFold(name, page) {
  const rows = await page.$$eval('#tree-table tbody tr', (trs) => trs.length);
  const toggle = await page.$('#tree-table tbody button.toggle');
  if (!toggle) return;
  await toggle.click();
  const folded = await page.$$eval('#tree-table tbody tr', (trs) => trs.length);
  check(folded < rows, `${name}: folding a tree row left ${folded} of ${rows} rows`);
  await (await page.$('#tree-table tbody button.toggle')).click();
  const unfolded = await page.$$eval('#tree-table tbody tr', (trs) => trs.length);
  check(unfolded === rows, `${name}: unfolding gave ${unfolded} rows, not ${rows}`);
}

async function checkCharts(name, page, rep, data) {
  const icicles = await page.$$eval('#icicle-body svg.icicle', (s) => s.map((x) => x.querySelectorAll('g.node rect').length));
  const hasDevice = rep.tree.some((t) => t.device);
  check(icicles.length === (hasDevice ? 2 : 1) && icicles.every((n) => n > 0), `${name}: icicle bars per icicle ${icicles}`);
  const labels = await texts(page, '#icicle-body svg.icicle g.node text');
  check(labels.length > 0, `${name}: icicle has no labels`);
  const node = await page.$('#icicle-body svg.icicle g.node');
  await node.hover();
  const tip = await page.$eval('#tip', (t) => ({ hidden: t.hidden, text: t.textContent }));
  check(!tip.hidden && tip.text.includes('host total'), `${name}: icicle tooltip ${JSON.stringify(tip)}`);

  const names = new Set(data.histograms.map((x) => x.name));
  const cards = await page.$$eval('#hist-body .card', (cs) => cs.map((c) => c.querySelectorAll('svg rect').length));
  check(cards.length === names.size && names.size === Math.min(rep.flat.length, data.limits.histogram_names),
        `${name}: ${cards.length} histogram cards for ${names.size} names`);
  check(cards.every((n) => n > 0), `${name}: a histogram without bars: ${cards}`);

  const threads = data.roots.threads.filter((t) => t.points.length).length;
  const series = await page.$$eval('#roots-body svg path.series', (p) => p.length);
  const dots = await page.$$eval('#roots-body svg circle', (c) => c.length);
  check(series === threads && threads > 0, `${name}: ${series} time-plot series for ${threads} threads`);
  check(dots > 1, `${name}: time plot has ${dots} points`);
  check(await page.$eval('#ranks', (s) => s.hidden), `${name}: the per-rank section shows without ranks`);
}

// Declared work: the section shows exactly the rows with work, with the report's rates, and one line per
// device peak; a report without work keeps it hidden.
async function checkWork(name, page, rep) {
  const rows = rep.flat.filter((f) => f.work);
  const hidden = await page.$eval('#work', (s) => s.hidden);
  if (!rows.length) {
    check(hidden, `${name}: the declared-work section shows without work`);
    return;
  }
  check(!hidden, `${name}: the declared-work section is hidden`);
  const names = await texts(page, '#work-table tbody td.name .label');
  check(sameList([...names].sort(), rows.map((f) => shown(f.name)).sort()), `${name}: work rows ${JSON.stringify(names)}`);
  const headings = await texts(page, '#work-table thead th');
  const gbs = headings.indexOf('GB/s') + 1, spec = headings.indexOf('%BW spec') + 1;
  check(gbs > 0 && spec > 0, `${name}: work headings ${headings}`);
  const cells = await texts(page, `#work-table tbody td:nth-child(${gbs})`);
  const specs = await texts(page, `#work-table tbody td:nth-child(${spec})`);
  names.forEach((n, i) => {
    const w = rows.find((f) => shown(f.name) === n).work;
    const want = w.bytes_per_s == null ? 'n/a' : (w.bytes_per_s / 1e9).toFixed(1);
    check(cells[i] === want, `${name}: ${n} GB/s shows ${cells[i]}, the report says ${want}`);
    const wantPct = w.pct_bw_spec == null ? 'n/a' : w.pct_bw_spec.toFixed(1);
    check(specs[i] === wantPct, `${name}: ${n} %BW spec shows ${specs[i]}, the report says ${wantPct}`);
  });
  const notes = await texts(page, '#work-notes li');
  check(notes.filter((t) => t.startsWith('device ')).length === (rep.device_peaks || []).length, `${name}: device peak lines ${notes}`);
}

// The per-rank hook: the same page with ranks in its data shows a table row and a bar per rank.
async function checkRanks(context, file) {
  const html = fs.readFileSync(file, 'utf8');
  const at = html.lastIndexOf('"ranks":null}');
  if (!check(at > 0, 'host.html: no "ranks":null in the data')) return;
  const ranks = '"ranks":[{"rank":0,"host_total_ns":2500000,"recorded":10},{"rank":1,"host_total_ns":4000000,"recorded":12}]}';
  const ranked = path.join(artifacts, 'host-ranks.html');
  fs.writeFileSync(ranked, html.slice(0, at) + ranks + html.slice(at + '"ranks":null}'.length));
  const { page, log } = await openPage(context, ranked);
  checkLog('host-ranks.html', log);
  check(!(await page.$eval('#ranks', (s) => s.hidden)), 'host-ranks.html: the per-rank section is hidden');
  const rows = await page.$$eval('#rank-table tbody tr', (r) => r.length);
  const bars = await page.$$eval('#ranks-body svg rect', (r) => r.length);
  check(rows === 2 && bars === 2, `host-ranks.html: ${rows} rank rows, ${bars} bars`);
  await page.close();
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'scopeprof-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  viewport: { width: 1360, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
try {
  const pages = fs.readdirSync(samples).filter((f) => f.endsWith('.html')).sort();
  check(pages.includes('host.html') && pages.includes('gpu.html'), `samples: ${pages}`);
  let sorted = false;
  for (const file of pages) {
    const name = path.basename(file, '.html');
    const rep = JSON.parse(fs.readFileSync(path.join(samples, name + '.json'), 'utf8'));
    const { page, log } = await openPage(context, path.join(samples, file));
    const data = await page.evaluate(() => JSON.parse(document.getElementById('scopeprof-data').textContent));
    check(JSON.stringify(data.report.flat) === JSON.stringify(rep.flat), `${file}: the page's data is not the JSON report`);
    check(await page.evaluate(() => document.scripts.length) === 2, `${file}: not exactly two script elements`);
    await page.screenshot({ path: path.join(artifacts, name + '.png'), fullPage: true });  // as it opens
    sorted = (await checkTables(file, page, rep)) || sorted;
    await checkFold(file, page);
    await checkCharts(file, page, rep, data);
    await checkWork(file, page, rep);
    if (rep.flat.some((f) => f.name.includes('</script>'))) {
      const cells = await texts(page, '#flat-table tbody td.name .label');
      check(cells.includes('</script><script>alert(1)</script>'), `${file}: the markup name is not shown as text`);
    }
    checkLog(file, log);
    await page.close();
  }
  check(sorted, 'sorting by Calls moved no row in any sample');
  await checkRanks(context, path.join(samples, 'host.html'));
} finally {
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

if (failures.length) {
  for (const f of failures) console.error('FAIL ' + f);
  process.exit(1);
}
console.log('html_report: every sample page passed; screenshots in ' + artifacts);

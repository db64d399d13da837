// scopeprof's outputs in the real speedscope app (tests/viewers/node_modules/speedscope, its release
// build) in Chromium: for every sample, both the Chrome trace (<name>.trace.json) and the native file
// (<name>.speedscope.json) must import without a console warning or error, with frames named exactly by
// the report's scope names (and, on CUPTI profiles, by its kernel names), a profile for every host
// thread, and (native file) frame weights equal to the report's host totals to the nanosecond.
//
// The app and the samples are served from 127.0.0.1 by this script; Chromium may reach nothing else: every
// other request is aborted and fails the test. speedscope keeps its state in preact components; the
// loaded profile group is read from them (the props of the component that receives `profileGroup`).
//
//   SCOPEPROF_SAMPLES=dir SCOPEPROF_CHROMIUM=/usr/bin/chromium SCOPEPROF_ARTIFACTS=dir node speedscope.mjs
import {chromium} from 'playwright-core';

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const appDir = path.join(here, 'node_modules', 'speedscope', 'dist', 'release');
const samplesDir = process.env.SCOPEPROF_SAMPLES;
const chromiumPath = process.env.SCOPEPROF_CHROMIUM;
const artifactsDir = process.env.SCOPEPROF_ARTIFACTS;
const FORMATS = [
  {ext: '.trace.json', label: 'Chrome trace', native: false},
  {ext: '.speedscope.json', label: 'speedscope file', native: true},
];
// Each sample in its formats; `merged` is `scopeprof merge` of ranks 0 and 1 of the gpu sample (a Chrome
// trace only): every track twice, once per rank, each named after its rank.
const SAMPLES = [
  {name: 'host', formats: FORMATS},
  {name: 'gpu', formats: FORMATS},
  {name: 'tie', formats: FORMATS},
  {name: 'merged', formats: [FORMATS[0]], factsFrom: 'rank0', ranks: 2},
];

for (const [name, value] of [['SCOPEPROF_SAMPLES', samplesDir], ['SCOPEPROF_CHROMIUM', chromiumPath],
                             ['SCOPEPROF_ARTIFACTS', artifactsDir]]) {
  if (!value) throw new Error(`${name} is not set (run through ctest, or set it by hand)`);
}
if (!fs.existsSync(path.join(appDir, 'index.html'))) throw new Error(`no speedscope release build in ${appDir}`);
fs.mkdirSync(artifactsDir, {recursive: true});

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
  '.txt': 'text/plain',
};

/// Files under `root` only: the decoded path may not climb out of it.
function resolveUnder(root, rel) {
  const file = path.resolve(root, '.' + path.posix.normalize('/' + decodeURIComponent(rel)));
  return file.startsWith(path.resolve(root) + path.sep) ? file : null;
}

/// /app/... from speedscope's release folder, /samples/... from SCOPEPROF_SAMPLES; anything else is 404.
function startServer() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let file = null;
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (url.pathname.startsWith('/app/')) file = resolveUnder(appDir, url.pathname.slice(5));
    else if (url.pathname.startsWith('/samples/')) file = resolveUnder(samplesDir, url.pathname.slice(9));
    if (req.method !== 'GET' || !file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, {'content-type': 'text/plain'}).end('not found');
      return;
    }
    res.writeHead(200, {'content-type': TYPES[path.extname(file)] || 'application/octet-stream'});
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/// What the report says: scope names, kernel names, thread labels (as both writers name threads) and
/// per-name host totals.
function reportFacts(sample, ranks = 1) {
  const rep = JSON.parse(fs.readFileSync(path.join(samplesDir, `${sample}.json`), 'utf8'));
  const scopes = new Set(rep.flat.map(f => f.name));
  const kernels = new Set(rep.kernel_summary.map(k => k.name));
  const threads = rep.threads.map(t => ({
    index: t.index,
    display: t.name === '' ? `thread ${t.index}` : t.name,
    label: (t.name === '' ? `thread ${t.index}` : t.name) + (t.os_id ? ` (tid ${t.os_id})` : ''),
  }));
  const host = new Map(rep.flat.map(f => [f.name, {total: f.host.total, self: f.host.self, calls: f.calls, selfSlack: f.calls}]));
  // The tables convert each path's summed host-clock ticks to ns once; a speedscope frame is one scope's
  // own ns. With a hardware counter they may differ by less than 1 ns per scope summed: a name's total by
  // at most its calls, its self time by that plus its children's calls and one per child path.
  for (const row of rep.tree) {
    if (row.parent < 0) continue;
    const parent = host.get(rep.tree[row.parent].name);
    if (parent) parent.selfSlack += row.calls + 1;
  }
  return {scopes, kernels, threads, host, cuptiValid: rep.evidence.cupti_valid, ranks};
}

/// In the page: the props of the component holding speedscope's profile group (found by walking preact's
/// virtual DOM from the document), reduced to plain data. null until the group is loaded.
function readProfileGroup() {
  const stack = [];
  for (const el of document.querySelectorAll('*')) if (el.__k) stack.push(el.__k);
  const seen = new Set();
  let props = null;
  while (stack.length && !props) {
    const v = stack.pop();
    if (!v || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    if (v.props && 'profileGroup' in v.props && 'hashParams' in v.props) props = v.props;
    if (Array.isArray(v.__k)) for (const k of v.__k) stack.push(k);
  }
  if (!props) return {found: false};
  if (props.error) return {found: true, error: true};
  const group = props.profileGroup;
  if (!group || props.loading) return {found: true, loaded: false};
  return {
    found: true,
    loaded: true,
    name: group.name,
    profiles: group.profiles.map(({profile}) => {
      const frames = [];
      profile.forEachFrame(f => frames.push({name: f.name, file: f.file, line: f.line, total: f.getTotalWeight(),
                                              self: f.getSelfWeight()}));
      return {name: profile.getName(), unit: profile.getWeightUnit(), total: profile.getTotalWeight(), frames};
    }),
  };
}

// Chromium's software GL reports its own slow paths as console warnings ("GPU stall due to ReadPixels"
// while drawing the flame chart); they say nothing about the import and are only counted.
const GL_PERFORMANCE_NOTE = /^\[\.WebGL-0x[0-9a-f]+\]GL Driver Message \([^,]+, Performance, /;

function sameSet(actual, expected) {
  const a = [...actual].sort(), e = [...expected].sort();
  return a.length === e.length && a.every((x, i) => x === e[i]);
}

/// The tracks of a Chrome trace by the name speedscope gives their profile (its trace-event importer:
/// "<process> (pid P), <thread> (tid T)"), each with its thread name, the categories of its events and
/// the names of its CUDA runtime and driver API calls (Kineto's "cuda_runtime" / "cuda_driver" events:
/// records of calls, not scopes).
function traceTracks(sample) {
  const doc = JSON.parse(fs.readFileSync(path.join(samplesDir, `${sample}.trace.json`), 'utf8'));
  const events = Array.isArray(doc) ? doc : doc.traceEvents;
  const processNames = new Map(), threadNames = new Map(), cats = new Map(), apiNames = new Map();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph === 'M' && e.name === 'process_name') processNames.set(e.pid, e.args.name);
    else if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(key, e.args.name);
    else if (['X', 'B', 'E'].includes(e.ph)) {
      (cats.get(key) || cats.set(key, new Set()).get(key)).add(e.cat || '');
      if (/^cuda_(runtime|driver)$/.test(e.cat || '')) (apiNames.get(key) || apiNames.set(key, new Set()).get(key)).add(e.name);
    }
  }
  const tracks = new Map();
  for (const [key, trackCats] of cats) {
    const [pid, tid] = key.split(':');
    const processName = processNames.get(Number(pid)), threadName = threadNames.get(key);
    const name = processName != null && threadName != null ? `${processName} (pid ${pid}), ${threadName} (tid ${tid})`
               : processName != null ? `${processName} (pid ${pid}, tid ${tid})`
               : threadName != null ? `${threadName} (pid ${pid}, tid ${tid})` : `pid ${pid}, tid ${tid}`;
    tracks.set(name, {threadName, cats: trackCats, apiNames: apiNames.get(key) || new Set()});
  }
  return tracks;
}

/// Which kind of track a profile shows: {kind: 'host', thread} (a host thread of the report), 'cupti'
/// (kernels, copies, memsets), 'device' (device spans), or 'unknown'.
function classifier(facts, format, sample) {
  if (format.native) {
    // This writer's names: the thread's label, "GPU g stream s (CUDA events)", "GPU g stream s (CUPTI)",
    // each perhaps followed by " lane N".
    return p => {
      const base = p.name.replace(/ lane \d+$/, '');
      const thread = facts.threads.find(t => t.label === base);
      if (thread) return {kind: 'host', thread, first: base === p.name, apiNames: new Set()};
      if (/^GPU \d+ stream \S+ \(CUPTI\)$/.test(base)) return {kind: 'cupti'};
      if (/^GPU \d+ stream \S+ \(CUDA events\)$/.test(base)) return {kind: 'device'};
      return {kind: 'unknown'};
    };
  }
  // A Chrome trace: a host thread's track carries its name (alone, or its label with the OS id); CUPTI
  // tracks hold only kernels, copies and memsets.
  const tracks = traceTracks(sample);
  return p => {
    const track = tracks.get(p.name);
    if (!track) return {kind: 'unknown'};
    if (track.threadName === 'steps (PROF_STEP)') return {kind: 'steps'};
    const thread = facts.threads.find(t => track.threadName === t.label || track.threadName === t.display);
    if (thread) return {kind: 'host', thread, first: true, apiNames: track.apiNames};
    if ([...track.cats].every(c => /kernel|memcpy|memset/.test(c))) return {kind: 'cupti'};
    return {kind: 'device'};
  };
}

/// speedscope names a trace event's frame by its name followed by its args, when it has any. Scope slices
/// carry none (one frame per scope); kernels, copies and API calls keep Kineto's per-call args
/// (correlation, External id, ...), so their frames are one per call: this gives back the event's name.
function eventName(frameName, format) {
  if (format.native) return frameName;
  const m = /^(.*) (\{.*\})$/s.exec(frameName);
  if (!m) return frameName;
  try {
    const args = JSON.parse(m[2]);
    return args && typeof args === 'object' && 'correlation' in args ? m[1] : frameName;
  } catch (e) {
    return frameName;
  }
}

/// The checks on one loaded profile group; returns a list of problems.
function checkGroup(group, facts, format, sample) {
  const problems = [];
  const classify = classifier(facts, format, sample);
  const kinds = group.profiles.map(p => ({p, c: classify(p)}));
  const of = kind => kinds.filter(x => x.c.kind === kind).map(x => x.p);
  const host = of('host'), cupti = of('cupti'), device = of('device');
  for (const p of of('unknown')) problems.push(`profile '${p.name}' is no host thread, device stream or CUPTI stream`);
  for (const p of of('steps')) {
    const extra = p.frames.map(f => f.name).filter(n => !/^ProfilerStep#\d+$/.test(n));
    if (extra.length) problems.push(`steps profile '${p.name}': frames that are no step: ${JSON.stringify(extra)}`);
  }
  for (const t of facts.threads) {
    const n = kinds.filter(x => x.c.kind === 'host' && x.c.thread === t && x.c.first).length;
    if (n !== facts.ranks) problems.push(`thread '${t.label}': ${n} profiles for it, not ${facts.ranks}`);
  }
  if (facts.ranks > 1) {
    // A merged trace: every track belongs to one rank and says so; each rank has its tracks.
    const rankOf = p => (/^rank (\d+): /.exec(p.name) || [])[1];
    for (const p of group.profiles.filter(p => rankOf(p) === undefined)) problems.push(`profile '${p.name}' names no rank`);
    const ranks = new Set(group.profiles.map(rankOf).filter(r => r !== undefined));
    if (ranks.size !== facts.ranks) problems.push(`profiles of ${ranks.size} ranks, not ${facts.ranks}`);
  }
  const names = profiles => new Set(profiles.flatMap(p => p.frames.map(f => f.name)));
  // A host thread's frames: its scopes, exactly (one frame per scope), and in a Chrome trace the API calls
  // it records, named as the file names them (with their per-call args).
  const hostNames = new Set(kinds.filter(x => x.c.kind === 'host')
                                 .flatMap(x => x.p.frames.map(f => f.name).filter(n => !x.c.apiNames.has(eventName(n, format)))));
  if (!sameSet(hostNames, facts.scopes)) {
    const missing = [...facts.scopes].filter(n => !hostNames.has(n)), extra = [...hostNames].filter(n => !facts.scopes.has(n));
    problems.push(`host profiles: scope names missing ${JSON.stringify(missing)}, frames that are no scope ${JSON.stringify(extra)}`);
  }
  for (const p of device) {
    const extra = [...names([p])].filter(n => !facts.scopes.has(n));
    if (extra.length) problems.push(`device profile '${p.name}': frames that are no scope: ${JSON.stringify(extra)}`);
  }
  if (facts.cuptiValid) {
    // The kernel summary names every kernel; copies and memsets carry CUPTI's fixed names ("[CUDA memcpy
    // DtoH]"), or Kineto's for them in a Chrome trace ("Memcpy DtoH").
    const cuptiNames = new Set([...names(cupti)].map(n => eventName(n, format)));
    const missing = [...facts.kernels].filter(n => !cuptiNames.has(n));
    const extra = [...cuptiNames].filter(n => !facts.kernels.has(n) && !/^(\[CUDA mem(cpy|set)( [A-Za-z]+)?\]|Mem(cpy|set)( [A-Za-z]+)?)$/.test(n));
    if (missing.length || extra.length)
      problems.push(`CUPTI profiles: kernels missing ${JSON.stringify(missing)}, other names ${JSON.stringify(extra)}`);
  }
  if (!facts.cuptiValid && cupti.length) problems.push('CUPTI profiles without valid CUPTI evidence');
  if (format.native) {
    // Integer nanoseconds: speedscope's own sums must equal the report's, to the rounding of the report's
    // tick conversion (exactly with SCOPEPROF_CLOCK=steady).
    const sums = new Map();
    for (const p of host) {
      if (p.unit !== 'nanoseconds') problems.push(`profile '${p.name}' has unit ${p.unit}`);
      for (const f of p.frames) {
        const s = sums.get(f.name) || {total: 0, self: 0};
        sums.set(f.name, {total: s.total + f.total, self: s.self + f.self});
      }
    }
    for (const [name, want] of facts.host) {
      const got = sums.get(name);
      if (!got || Math.abs(got.total - want.total) > want.calls || Math.abs(got.self - want.self) > want.selfSlack)
        problems.push(`'${name}': speedscope total/self ${got && got.total}/${got && got.self} ns, report ${want.total}/${want.self}`);
    }
  }
  return problems;
}

async function loadOne(context, base, sample, format, facts) {
  const page = await context.newPage();
  const messages = [];
  let glNotes = 0;
  page.on('console', msg => {
    if (!['warning', 'error', 'assert'].includes(msg.type())) return;
    if (GL_PERFORMANCE_NOTE.test(msg.text())) ++glNotes;
    else messages.push(`console.${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', err => messages.push(`page error: ${err.message}`));
  page.on('dialog', dialog => {
    messages.push(`dialog: ${dialog.message()}`);
    dialog.dismiss().catch(() => {});
  });
  const file = `${sample}${format.ext}`;
  const profileURL = `${base}/samples/${encodeURIComponent(file)}`;
  await page.goto(`${base}/app/index.html#profileURL=${encodeURIComponent(profileURL)}`);
  let state;
  const deadline = Date.now() + 15000;
  for (;;) {
    state = await page.evaluate(readProfileGroup);
    if (state.error || state.loaded || messages.some(m => m.startsWith('dialog')) || Date.now() > deadline) break;
    await page.waitForTimeout(100);
  }
  const problems = [...messages];  // what the import logged (the screenshot's own GL messages come later)
  if (!state.found) problems.push('speedscope\'s application component not found in the page');
  else if (state.error) problems.push('speedscope reports an error loading the profile');
  else if (!state.loaded) problems.push('the profile did not load within 15 s');
  else problems.push(...checkGroup(state, facts, format, sample));
  const shot = path.join(artifactsDir, `speedscope-${sample}${format.native ? '-native' : '-trace'}.png`);
  await page.screenshot({path: shot});
  await page.close();
  return {problems, profiles: state.profiles ? state.profiles.length : 0, shot, glNotes};
}

async function main() {
  const server = await startServer();
  const base = `http://127.0.0.1:${server.address().port}`;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scopeprof-speedscope-'));
  const outside = [];
  let context;
  let failed = 0;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: {width: 1280, height: 720},
    });
    await context.route('**/*', route => {
      const url = new URL(route.request().url());
      if (url.origin === base) return route.continue();
      outside.push(route.request().url());
      return route.abort('blockedbyclient');
    });
    context.on('websocket', ws => outside.push(ws.url()));
    for (const {name: sample, formats, factsFrom, ranks} of SAMPLES) {
      const facts = reportFacts(factsFrom || sample, ranks);
      for (const format of formats) {
        const {problems, profiles, shot, glNotes} = await loadOne(context, base, sample, format, facts);
        const what = `${sample}${format.ext} (${format.label})`;
        if (problems.length) {
          ++failed;
          console.log(`FAIL ${what}: ${profiles} profiles, screenshot ${shot}`);
          for (const p of problems.slice(0, 12)) console.log(`  ${p.length > 400 ? p.slice(0, 400) + '...' : p}`);
          if (problems.length > 12) console.log(`  ... and ${problems.length - 12} more`);
        } else {
          console.log(`ok   ${what}: ${profiles} profiles, screenshot ${shot}` +
                      (glNotes ? ` (${glNotes} GL performance notes ignored)` : ''));
        }
      }
    }
  } finally {
    if (context) await context.close();
    server.close();
    fs.rmSync(userDataDir, {recursive: true, force: true});
  }
  if (outside.length) {
    console.log(`FAIL requests that would have left localhost (aborted): ${[...new Set(outside)].join(', ')}`);
    ++failed;
  }
  assert.equal(failed, 0, `${failed} check(s) failed`);
}

await main();

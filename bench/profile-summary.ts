// Turns a V8 .cpuprofile (node --cpu-prof) into self time grouped by area of the
// request path. A sample belongs to the first area, in the order below, that any
// frame of its stack falls in: a SHA-256 inside fast-jwt counts as "jwt verify",
// a pg write under MikroORM as "pg driver", a JSON.stringify under pino as "logging".
//
//   node bench/profile-summary.ts <file.cpuprofile> [--top 25] [--window <fromUs>,<toUs>] [--json]
// --window keeps the samples taken in that span of the monotonic clock (the bench
// records the span of its measured load, so start-up is left out).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

type Test = (f: CallFrame) => boolean;
const has =
  (...parts: string[]): Test =>
  (f) =>
    parts.some((p) => f.url.includes(p));

/** Areas in priority order. */
const AREAS: [string, Test][] = [
  ['em.fork', (f) => f.url.includes('@mikro-orm/core') && f.functionName === 'fork'],
  ['jwt verify', has('/fast-jwt/', '/core/auth/')],
  ['ability (CASL)', has('/@casl/', '/@ucast/', '/core/access/')],
  ['tenant lookup', has('/core/tenancy/')],
  ['rate-limit', has('/@fastify/rate-limit/', '/toad-cache/')],
  ['logging', (f) => has('/pino/', '/pino-std-serializers/', '/sonic-boom/', '/core/logging.ts')(f) || (f.url.includes('/fastify/lib/') && /logger/i.test(f.url))],
  ['HTTP response write (socket)', (f) => f.url.startsWith('node:_http_outgoing')],
  ['serialisation', (f) => has('/fast-json-stringify/', '/core/crud/row-mapper.ts', '/core/i18n.ts')(f) || (f.url.includes('/fastify/lib/reply.js') && /^serialize/.test(f.functionName))],
  ['validation', has('/ajv/', '/ajv-formats/', '/fastify/lib/validation.js', '/@fastify/ajv-compiler/')],
  ['pg driver', (f) => /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pg-cursor|postgres-array|postgres-date|postgres-interval)\//.test(f.url)],
  ['SQL reader (core/crud/sql-reader.ts)', has('/core/crud/sql-reader.ts')],
  ['MikroORM / kysely (connection, query building, hydration)', has('/@mikro-orm/', '/kysely/')],
  ['Plinth pipeline / handlers (other core/)', has('/core/', '/plugins/')],
  ['Fastify (routing, hooks, reply)', has('/fastify/', '/find-my-way/', '/avvio/', '/@fastify/', '/fastq/', '/light-my-request/')],
  ['node http / net / streams', (f) => f.url.startsWith('node:')],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['V8 / native (program)', (f) => f.functionName === '(program)'],
  ['idle', (f) => f.functionName === '(idle)'],
];
const OTHER = 'other (libraries, builtins)';

const fn =
  (url: string, name: string): Test =>
  (f) =>
    f.url.includes(url) && f.functionName === name;
/** Frames whose inclusive time (self + callees, every resumption of an async body) is worth knowing. */
const MARKERS: [string, Test][] = [
  ['onRequest pipeline (request-context.ts)', has('/core/http/request-context.ts')],
  ['  token verify (TokenService.verifyAccess)', fn('/core/auth/tokens.ts', 'verifyAccess')],
  ['  ability (AbilityFactory.for)', fn('/core/access/abilities.ts', 'for')],
  ['  em.fork', (f) => f.url.includes('@mikro-orm/core') && f.functionName === 'fork'],
  ['route handler (crud-routes.ts)', has('/core/http/crud-routes.ts')],
  ['  em.find / findOne / findAndCount', (f) => f.url.includes('@mikro-orm/core/EntityManager.js') && ['find', 'findOne', 'findAndCount'].includes(f.functionName)],
  ['    driver findOne / find', (f) => f.url.includes('@mikro-orm/sql/AbstractSqlDriver.js') && (f.functionName === 'findOne' || f.functionName === 'find')],
  ['    entity factory (hydration)', has('@mikro-orm/core/entity/EntityFactory.js')],
  ['  em.flush (unit of work, change sets)', (f) => (f.url.includes('@mikro-orm/core/EntityManager.js') && f.functionName === 'flush') || f.url.includes('@mikro-orm/core/unit-of-work/')],
  ['  SQL reader (byId / list / run)', (f) => f.url.includes('/core/crud/sql-reader.ts') && ['byId', 'list', 'run'].includes(f.functionName)],
  ['  kysely executeQuery (every statement: SQL reader and MikroORM)', (f) => f.url.includes('/kysely/') && f.functionName === 'executeQuery'],
  ['  row mapper (toDto)', has('/core/crud/row-mapper.ts')],
  ['reply serialise (fast-json-stringify)', (f) => f.url.includes('/fastify/lib/reply.js') && /^serialize/.test(f.functionName)],
  ['pino (request log line)', has('/pino/', '/@pinojs/')],
  ['rate-limit hook', has('/@fastify/rate-limit/')],
];

export interface AreaRow {
  area: string;
  ms: number;
  pct: number;
  top: string[];
}
export interface ProfileSummary {
  file?: string;
  busyMs: number;
  idleMs: number;
  areas: AreaRow[];
  inclusive: { frame: string; ms: number; pct: number }[];
  functions: { fn: string; area: string; ms: number; pct: number }[];
}

const where = (f: CallFrame) => {
  const file = f.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(core|plugins|scripts|bench)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
};

/** window: only samples taken between these monotonic-clock µs (process.hrtime), e.g. the measured load. */
function summarise(profile: CpuProfile, top = 25, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areaOf = new Map<number, string>();
  const markersOf = new Map<number, number[]>();
  const classify = (id: number): string => {
    const known = areaOf.get(id);
    if (known) return known;
    const stack: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(byId.get(cur)!.callFrame);
    const area = AREAS.find(([, test]) => stack.some(test))?.[0] ?? OTHER;
    areaOf.set(id, area);
    markersOf.set(
      id,
      MARKERS.flatMap(([, test], i) => (stack.some(test) ? [i] : [])),
    );
    return area;
  };
  // time until the next sample belongs to this one (as DevTools counts it)
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (window && (at < window.fromUs || at > window.toUs)) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const areas = new Map<string, { us: number; fns: Map<string, number> }>();
  const fns = new Map<string, { us: number; area: string }>();
  for (const [id, us] of self) {
    const area = classify(id);
    const fn = where(byId.get(id)!.callFrame);
    const a = areas.get(area) ?? { us: 0, fns: new Map() };
    a.us += us;
    a.fns.set(fn, (a.fns.get(fn) ?? 0) + us);
    areas.set(area, a);
    const f = fns.get(`${area}|${fn}`) ?? { us: 0, area };
    f.us += us;
    fns.set(`${area}|${fn}`, f);
  }
  const inclusive = MARKERS.map(() => 0);
  for (const [id, us] of self) for (const i of markersOf.get(id) ?? []) inclusive[i] += us;
  const idleUs = areas.get('idle')?.us ?? 0;
  const busyUs = [...areas.values()].reduce((s, a) => s + a.us, 0) - idleUs;
  const pct = (us: number) => Math.round((1000 * us) / busyUs) / 10;
  const ms = (us: number) => Math.round(us / 100) / 10;
  return {
    busyMs: ms(busyUs),
    idleMs: ms(idleUs),
    areas: [...areas.entries()]
      .filter(([area]) => area !== 'idle')
      .sort((a, b) => b[1].us - a[1].us)
      .map(([area, a]) => ({
        area,
        ms: ms(a.us),
        pct: pct(a.us),
        top: [...a.fns.entries()]
          .sort((x, y) => y[1] - x[1])
          .slice(0, 3)
          .map(([fn, us]) => `${fn} (${pct(us)}%)`),
      })),
    inclusive: MARKERS.map(([frame], i) => ({ frame, ms: ms(inclusive[i]), pct: pct(inclusive[i]) })),
    functions: [...fns.entries()]
      .filter(([, f]) => f.area !== 'idle')
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([key, f]) => ({ fn: key.slice(key.indexOf('|') + 1), area: f.area, ms: ms(f.us), pct: pct(f.us) })),
  };
}

export function formatSummary(s: ProfileSummary): string {
  const lines = [`CPU profile: ${s.busyMs} ms busy, ${s.idleMs} ms idle${s.file ? ` (${s.file})` : ''}`, '', 'Self time by area (% of busy time):'];
  for (const a of s.areas) lines.push(`  ${a.pct.toFixed(1).padStart(5)}%  ${a.area.padEnd(42)} ${a.top.slice(0, 2).join('; ')}`);
  lines.push('', 'Inclusive time of key frames (% of busy time; nested rows are part of the row above):');
  for (const m of s.inclusive) lines.push(`  ${m.pct.toFixed(1).padStart(5)}%  ${m.frame}`);
  lines.push('', `Top ${s.functions.length} functions by self time:`);
  for (const f of s.functions) lines.push(`  ${f.pct.toFixed(1).padStart(5)}%  ${f.fn.slice(0, 90).padEnd(90)} [${f.area}]`);
  return lines.join('\n');
}

export function summariseFile(file: string, top = 25, window?: { fromUs: number; toUs: number }): ProfileSummary {
  return { ...summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top, window), file };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, window: { type: 'string' }, json: { type: 'boolean', default: false } } });
  if (!positionals[0]) {
    console.error('usage: node bench/profile-summary.ts <file.cpuprofile> [--top 25] [--window <fromUs>,<toUs>] [--json]');
    process.exit(2);
  }
  const [fromUs, toUs] = (values.window ?? '').split(',').map(Number);
  const summary = summariseFile(positionals[0], Number(values.top), values.window ? { fromUs, toUs } : undefined);
  console.log(values.json ? JSON.stringify(summary, null, 2) : formatSummary(summary));
}

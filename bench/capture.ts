// Captures the SQL Plinth sends for each scenario's probe request: the app is
// built in-process from the same kernel code the server runs (buildApp), the
// probe goes through app.inject, and every statement reaching the pg driver is
// recorded. The statements become the baseline's templates; a round trip
// (template + the probe's values = the captured text) proves nothing was lost.
import pg from './pg.ts';
import type { Kernel } from '../core/kernel.ts';
import { buildApp } from '../core/app.ts';
import type { BenchTenant } from './fixtures.ts';
import { CAPTURE, headersOf, type Scenario } from './scenarios.ts';
import { compile, lit, maskTimestamps, templatize, type Templates } from './sql-template.ts';

export interface Capture {
  templates: Templates;
  /** other statements a warm probe request issued (auth, registry, roles): Plinth-only work */
  other: Record<string, string[]>;
}

type Query = (this: unknown, ...args: unknown[]) => unknown;

export async function captureSql(kernel: Kernel, t: BenchTenant, scenarios: Scenario[], tag: string): Promise<Capture> {
  const app = await buildApp(kernel, { logger: false });
  await app.ready();
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  let recorded: string[] | null = null;
  let bound = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text: string; values?: unknown[] };
    const values = typeof q === 'string' ? args[1] : q.values ?? args[1];
    if (recorded && Array.isArray(values) && values.length) bound++;
    recorded?.push(typeof q === 'string' ? q : q.text);
    return original.apply(this, args);
  };
  const model = kernel.model('Product');
  const translatable = new Set(model.translatable.map((f) => f.name));
  const lang = (await kernel.tenants.find(t.id))!.defaultLanguage;
  const table = `"${t.schema}"."${model.table}"`;
  const conn = kernel.dbs.main.em.getConnection();
  const capture: Capture = { templates: {}, other: {} };
  try {
    for (const s of scenarios) {
      const send = async (tagged: string) => {
        const p = s.probe(t, tagged);
        const res = await app.inject({ method: p.method, url: p.url, headers: headersOf(t), ...(p.body ? { payload: p.body } : {}) });
        if (res.statusCode >= 300) throw new Error(`capture of ${s.name}: Plinth answered ${res.statusCode} ${res.body}`);
        return { p, res };
      };
      await send(`${tag}-warm`); // caches (tenant, roles, ability) filled, as under load
      if (s.name === 'update') await conn.execute(`update ${table} set stock = 0, version = ${CAPTURE.version} where id = ?`, [t.patchProbeId]);
      recorded = [];
      const { p, res } = await send(`${tag}-capture`);
      const statements = recorded;
      recorded = null;
      // MikroORM 7 inlines every value; the templates rely on it
      if (bound) throw new Error(`capture of ${s.name}: Plinth now sends bind parameters; teach bench/capture.ts and the baseline to pass values`);

      const literals: Record<string, string> = { companyId: lit(t.companyId) };
      const numbers: Record<string, number> = {};
      const id = /^\/api\/products\/([^/?]+)/.exec(p.url)?.[1];
      if (id) literals.id = lit(id);
      const search = new URL(p.url, 'http://x').searchParams.get('search');
      if (search !== null) literals.pattern = lit(`%${search.replace(/[\\%_]/g, '\\$&')}%`);
      if (p.method === 'GET' && !id) numbers.limit = 50;
      if (p.method === 'POST') literals.newId = lit(res.json().id);
      if (p.method === 'PATCH') numbers.version = CAPTURE.version;
      for (const [k, v] of Object.entries(p.body ?? {})) {
        if (translatable.has(k)) literals[`i18n:${k}`] = lit(JSON.stringify({ [lang]: v }));
        else if (typeof v === 'number') numbers[`body:${k}`] = v;
        else literals[`body:${k}`] = lit(String(v));
      }

      const mine = statements.filter((sql) => sql.includes(`"${t.schema}".`) || /^(begin|commit|rollback)$/.test(sql));
      capture.other[s.name] = statements.filter((sql) => !mine.includes(sql));
      capture.templates[s.name] = mine.map((sql) => {
        const template = templatize(sql, literals, numbers);
        const values = { ...literals, ...Object.fromEntries(Object.entries(numbers).map(([k, n]) => [k, String(n)])), now: "'2000-01-01T00:00:00.000Z'" };
        if (maskTimestamps(compile(template)(values)) !== maskTimestamps(sql)) {
          throw new Error(`SQL template of ${s.name} does not render back to Plinth's statement:\n  plinth:   ${sql}\n  template: ${template}`);
        }
        return { sql: template };
      });
      if (!capture.templates[s.name].length) throw new Error(`capture of ${s.name}: Plinth issued no statement on the tenant schema`);
    }
  } finally {
    proto.query = original;
    await app.close();
  }
  return capture;
}

// Captures the SQL Plinth sends for each scenario's probe request: the app is
// built in-process from the same kernel code the server runs (buildApp), the
// probe goes through app.inject, and every statement reaching the pg driver is
// recorded with its bind values. The statements become the baseline's templates;
// a round trip (template + the probe's variables = the captured text and values)
// proves nothing was lost.
import { isDeepStrictEqual } from 'node:util';
import pg from './pg.ts';
import type { Kernel } from '../core/kernel.ts';
import { buildApp } from '../core/app.ts';
import type { BenchTenant } from './fixtures.ts';
import { CAPTURE, headersOf, type Scenario } from './scenarios.ts';
import { binder, compile, maskTimestamps, paramsOf, placeholders, templatize, type Templates, type Vars } from './sql-template.ts';

export interface Statement {
  text: string;
  values: unknown[];
}

export interface Capture {
  templates: Templates;
  /** other statements a warm probe request issued (auth, registry, roles): Plinth-only work */
  other: Record<string, string[]>;
}

type Query = (this: unknown, ...args: unknown[]) => unknown;

/** The probe's variables: what the baseline takes from its own request (see baseline-server.ts). */
function varsOf(s: Scenario, t: BenchTenant, p: ReturnType<Scenario['probe']>, body: () => Record<string, unknown>, translatable: Set<string>, lang: string): Vars {
  const vars: Vars = { companyId: t.companyId };
  const url = new URL(p.url, 'http://x');
  const id = /^\/api\/products\/([^/?]+)/.exec(url.pathname)?.[1];
  if (id) vars.id = id;
  const search = url.searchParams.get('search');
  if (search !== null) vars.pattern = `%${search.replace(/[\\%_]/g, '\\$&')}%`;
  if (p.method === 'GET' && !id) vars.limit = Number(url.searchParams.get('size') ?? 50);
  if (p.method === 'POST') vars.newId = body().id;
  if (p.method === 'PATCH') vars.version = CAPTURE.version;
  for (const [k, v] of Object.entries(p.body ?? {})) vars[translatable.has(k) ? `i18n:${k}` : `body:${k}`] = translatable.has(k) ? { [lang]: v } : v;
  if (s.write) vars.now = new Date('2000-01-01T00:00:00.000Z'); // timestamps are masked on both sides
  return vars;
}

export async function captureSql(kernel: Kernel, t: BenchTenant, scenarios: Scenario[], tag: string): Promise<Capture> {
  const app = await buildApp(kernel, { logger: false });
  await app.ready();
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  let recorded: Statement[] | null = null;
  proto.query = function (this: unknown, ...args: unknown[]) {
    if (recorded) {
      const q = args[0] as string | { text: string; values?: unknown[]; name?: string };
      const values = (typeof q === 'string' ? args[1] : (q.values ?? args[1])) as unknown[] | undefined;
      // a named (prepared) statement is recorded by its text: the baseline prepares its parameterised statements too
      recorded.push({ text: typeof q === 'string' ? q : q.text, values: Array.isArray(values) ? [...values] : [] });
    }
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
      const vars = varsOf(s, t, p, () => res.json(), translatable, lang);

      const mine = statements.filter((st) => st.text.includes(`"${t.schema}".`) || /^(begin|commit|rollback)$/.test(st.text));
      capture.other[s.name] = statements.filter((st) => !mine.includes(st)).map((st) => (st.values.length ? `${st.text} [${st.values.length} values]` : st.text));
      capture.templates[s.name] = mine.map((st) => {
        const sql = templatize(st.text, vars);
        const params = st.values.length ? paramsOf(st.values, vars, st.text) : undefined;
        // round trip: the baseline's rendering of the probe = what Plinth sent, text and values
        const text = compile(sql)(vars);
        const values = params ? binder(params)(vars) : [];
        if (maskTimestamps(text) !== maskTimestamps(st.text)) {
          throw new Error(`SQL template of ${s.name} does not render back to Plinth's statement:\n  plinth:   ${st.text}\n  template: ${sql}`);
        }
        if (!isDeepStrictEqual(values, st.values) || placeholders(st.text) !== st.values.length) {
          throw new Error(
            `bind values of ${s.name} do not map back to Plinth's (${placeholders(st.text)} placeholders):\n  plinth:   ${JSON.stringify(st.values)}\n  template: ${JSON.stringify(values)}\n  in: ${st.text}`,
          );
        }
        return params ? { sql, params } : { sql };
      });
      if (!capture.templates[s.name].length) throw new Error(`capture of ${s.name}: Plinth issued no statement on the tenant schema`);
    }
  } finally {
    proto.query = original;
    await app.close();
  }
  return capture;
}

/** One line per scenario: statements and how many carry bind values. */
export const describeTemplates = (templates: Templates) =>
  Object.entries(templates)
    .map(([name, ts]) => `${name} ${ts.length} (${ts.filter((x) => x.params).length} parameterised)`)
    .join(', ');

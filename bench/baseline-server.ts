// The benchmark's baseline: bare Fastify + pg (pg.Pool), no auth, no tenancy, no
// ORM. It sends PostgreSQL the statements Plinth sends for each scenario (the
// templates the bench captured from Plinth, see sql-template.ts) and answers
// byte-identical JSON (the bench compares before measuring), so the ratio
// Plinth / baseline is the cost of everything Plinth adds on top of the queries.
//
// env: PORT, HOST, DATABASE_URL, DB_POOL_SIZE, BASELINE_SQL (the templates file),
// BASELINE_LANGUAGE (the tenant default language, "en"). The company comes from
// X-Company-Id, the schema is baked into the templates. Write templates fit
// bodies with the same keys as the captured request; others get 400.
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply } from 'fastify';
import pg, { type PoolClient } from './pg.ts';
import { v7 as uuidv7 } from 'uuid';
import { compile, lit, slotsOf, type Templates } from './sql-template.ts';

type Row = Record<string, any>;
type Values = Record<string, string>;

const env = process.env;
const LANG = env.BASELINE_LANGUAGE ?? 'en';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const templates = JSON.parse(readFileSync(env.BASELINE_SQL!, 'utf8')) as Templates;

// date columns stay 'YYYY-MM-DD' strings, as MikroORM reads them
const types = new pg.TypeOverrides();
types.setTypeParser(1082, (s: string) => s);
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_SIZE ?? 10), min: 0, types });
pool.on('error', () => {});

const statements = (name: string) => (templates[name] ?? []).map((t) => ({ sql: t.sql, render: compile(t.sql), slots: slotsOf(t.sql) }));
const S = { read: statements('by-id'), list: statements('list'), search: statements('search'), create: statements('create'), update: statements('update') };
const bodyKeys = (stmts: typeof S.create) => new Set(stmts.flatMap((s) => s.slots).filter((k) => k.startsWith('body:') || k.startsWith('i18n:')).map((k) => k.slice(k.indexOf(':') + 1)));
const createKeys = bodyKeys(S.create);
const updateKeys = bodyKeys(S.update);
const TRANSLATABLE = new Set(['name', 'description']);

function pick(value: Record<string, string> | null): string | null {
  if (!value || typeof value !== 'object') return null;
  if (typeof value[LANG] === 'string') return value[LANG];
  const first = Object.keys(value).sort()[0];
  return first ? value[first] : null;
}

/** The API shape of a product row (snake_case from pg), as Plinth's row mapper writes it. */
function dto(r: Row) {
  return {
    id: r.id, companyId: r.company_id, sku: r.sku, name: pick(r.name), description: pick(r.description),
    price: r.price, currency: r.currency, unit: r.unit, stock: r.stock, categoryId: r.category_id,
    isActive: r.is_active, availableFrom: r.available_from, discontinuedAt: r.discontinued_at,
    attributes: r.attributes, createdAt: r.created_at, updatedAt: r.updated_at, version: r.version,
  };
}

const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });
const Product = {
  $id: 'Product', type: 'object', additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' }, companyId: { type: 'string', format: 'uuid' }, sku: { type: 'string' },
    name: { type: 'string' }, description: nullable('string'), price: { type: 'string' }, currency: { type: 'string' },
    unit: nullable('string'), stock: nullable('integer'), categoryId: nullable('string', { format: 'uuid' }),
    isActive: nullable('boolean'), availableFrom: nullable('string', { format: 'date' }),
    discontinuedAt: nullable('string', { format: 'date-time' }), attributes: {},
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' }, version: { type: 'integer' },
  },
};
const List = {
  type: 'object', additionalProperties: false,
  properties: { items: { type: 'array', items: { $ref: 'Product#' } }, page: { type: 'integer' }, size: { type: 'integer' }, total: { type: 'integer' } },
};

class HttpError extends Error {
  status: number;
  constructor(status: number, message: string) { super(message); this.status = status; }
}

function companyOf(headers: Record<string, unknown>): string {
  const c = headers['x-company-id'];
  if (typeof c !== 'string' || !UUID.test(c)) throw new HttpError(400, 'X-Company-Id must be a UUID');
  return lit(c.toLowerCase());
}

function idOf(params: unknown): string {
  const id = (params as { id: string }).id;
  if (!UUID.test(id)) throw new HttpError(400, 'id must be a UUID');
  return lit(id);
}

/** SQL literal of a body value, as MikroORM inlines it. */
function sqlValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return lit(v);
  if (v === null) return 'null';
  return lit(JSON.stringify(v));
}

function bodyValues(body: unknown, keys: Set<string>, values: Values, translations: boolean): Row {
  const b = body as Row | null;
  if (!b || typeof b !== 'object' || Object.keys(b).length !== keys.size || !Object.keys(b).every((k) => keys.has(k))) {
    throw new HttpError(400, `the baseline's templates take a body with exactly: ${[...keys].join(', ')}`);
  }
  for (const [k, v] of Object.entries(b)) {
    if (TRANSLATABLE.has(k) && !translations) throw new HttpError(400, `the baseline does not merge translations (${k})`);
    if (TRANSLATABLE.has(k)) values[`i18n:${k}`] = lit(JSON.stringify({ [LANG]: v }));
    else values[`body:${k}`] = sqlValue(v);
  }
  return b;
}

/** Runs a write scenario's statements in order: outside begin…commit on the pool, inside on one client. */
async function runSequence(stmts: typeof S.create, values: Values, after: (sql: string, rows: Row[]) => void): Promise<void> {
  let client: PoolClient | null = null;
  try {
    for (const s of stmts) {
      if (s.sql === 'begin') client = await pool.connect();
      const res = await (client ?? pool).query(s.render(values));
      if (s.sql === 'commit') { client!.release(); client = null; }
      after(s.sql, res.rows);
    }
  } catch (err) {
    if (client) { await client.query('rollback').catch(() => {}); client.release(); client = null; }
    throw err;
  }
}

const app = Fastify({ logger: false });
app.addSchema(Product);
app.setErrorHandler((err: Error & { status?: number; statusCode?: number }, _req, reply) => {
  reply.code(err.status ?? err.statusCode ?? 500).send({ status: err.status ?? err.statusCode ?? 500, detail: err.message });
});
const one = (reply: FastifyReply, row: Row, status = 200) => reply.code(status).header('etag', `"${row.version}"`).header('content-language', LANG).send(dto(row));

app.get('/health/ready', async () => { await pool.query('select 1'); return { status: 'ok' }; });

app.get('/api/products/:id', { schema: { response: { 200: { $ref: 'Product#' } } } }, async (request, reply) => {
  const values = { id: idOf(request.params), companyId: companyOf(request.headers) };
  const { rows } = await pool.query(S.read[0].render(values));
  if (!rows[0]) throw new HttpError(404, 'not found');
  return one(reply, rows[0]);
});

app.get('/api/products', { schema: { response: { 200: List } } }, async (request, reply) => {
  const q = request.query as { size?: string; search?: string };
  const size = q.size === undefined ? 50 : Number(q.size);
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new HttpError(400, 'size must be 1..1000');
  const values: Values = { companyId: companyOf(request.headers), limit: String(size) };
  const stmts = q.search ? S.search : S.list;
  if (q.search) values.pattern = lit(`%${q.search.replace(/[\\%_]/g, '\\$&')}%`);
  const results = await Promise.all(stmts.map((s) => pool.query(s.render(values))));
  const countAt = stmts.findIndex((s) => /^select count\(\*\)/.test(s.sql));
  const rows = results.find((_, i) => i !== countAt)!.rows;
  if (rows.length) reply.header('content-language', LANG);
  return { items: rows.map(dto), page: 1, size, total: Number(results[countAt].rows[0].count) };
});

app.post('/api/products', { schema: { response: { 201: { $ref: 'Product#' } } } }, async (request, reply) => {
  const values: Values = { companyId: companyOf(request.headers) };
  const body = bodyValues(request.body, createKeys, values, true);
  const id = uuidv7();
  const now = new Date();
  Object.assign(values, { newId: lit(id), now: `'${now.toISOString()}'` });
  let version = 0;
  await runSequence(S.create, values, (sql, rows) => {
    if (/^select count\(\*\)/.test(sql) && Number(rows[0].count) === 0) throw new HttpError(400, 'unknown reference');
    if (/ returning /.test(sql)) version = rows[0].version;
  });
  const row = {
    id, company_id: (request.headers['x-company-id'] as string).toLowerCase(), sku: body.sku, name: { [LANG]: body.name },
    description: body.description === undefined ? {} : { [LANG]: body.description }, price: body.price,
    currency: body.currency ?? 'EUR', unit: body.unit ?? 'piece', stock: body.stock ?? 0, category_id: body.categoryId ?? null,
    is_active: body.isActive ?? true, available_from: body.availableFrom ?? null, discontinued_at: body.discontinuedAt ?? null,
    attributes: body.attributes ?? null, created_at: now, updated_at: now, version,
  };
  reply.header('location', `/api/products/${id}`);
  return one(reply, row, 201);
});

app.patch('/api/products/:id', { schema: { response: { 200: { $ref: 'Product#' } } } }, async (request, reply) => {
  const values: Values = { id: idOf(request.params), companyId: companyOf(request.headers) };
  const body = bodyValues(request.body, updateKeys, values, false);
  const now = new Date();
  values.now = `'${now.toISOString()}'`;
  let row: Row | undefined;
  await runSequence(S.update, values, (sql, rows) => {
    if (/ for update$/.test(sql)) {
      row = rows[0];
      if (!row) throw new HttpError(404, 'not found');
      values.version = String(row.version);
    } else if (/^update /.test(sql)) {
      if (!rows[0]) throw new HttpError(409, 'changed concurrently');
      row!.version = rows[0].version;
    }
  });
  for (const [k, v] of Object.entries(body)) row![k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  row!.updated_at = now;
  return one(reply, row!);
});

for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => { void app.close().then(() => pool.end()).then(() => process.exit(0)); });
await app.listen({ host: env.HOST ?? '127.0.0.1', port: Number(env.PORT ?? 3100) });
console.log(`baseline ready on port ${env.PORT}`);

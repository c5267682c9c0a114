// The benchmark's baseline: bare Fastify + pg (pg.Pool), no auth, no tenancy, no
// ORM. It sends PostgreSQL the statements Plinth sends for each scenario (the
// templates the bench captured from Plinth, see sql-template.ts): the same text,
// and for Plinth's parameterised reads the same bind values, through
// pool.query({ name, text, values }) (a statement prepared on each connection,
// as Plinth prepares a repeated one: db/prepared-statements.ts); inlined write
// statements through pool.query(text). It answers
// byte-identical JSON (the bench compares before measuring), so the ratio
// Plinth / baseline is the cost of everything Plinth adds on top of the queries.
//
// env: PORT, HOST, DATABASE_URL, DB_POOL_SIZE, BASELINE_SQL (the templates file),
// BASELINE_LANGUAGE (the tenant default language, "en"). The company comes from
// X-Company-Id, the schema is baked into the templates. Write templates fit
// bodies with the same keys as the captured request; others get 400.
//
// BASELINE_LIST=idiomatic (scenario default-list) with BASELINE_TABLE ("schema"."table"):
// GET /api/products without search sends no replayed statement but the SQL an
// experienced engineer writes by hand for that page (IDIOMATIC below). A replay
// cannot see slow SQL: it is as slow as Plinth's; this baseline can.
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply } from 'fastify';
import pg, { type PoolClient, type QueryConfig, type QueryResult } from './pg.ts';
import { v7 as uuidv7 } from 'uuid';
import { binder, compile, slotsOf, type Template, type Templates, type Vars } from './sql-template.ts';

type Row = Record<string, any>;

const env = process.env;
const LANG = env.BASELINE_LANGUAGE ?? 'en';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const templates = JSON.parse(readFileSync(env.BASELINE_SQL!, 'utf8')) as Templates;

// date columns stay 'YYYY-MM-DD' strings, as MikroORM reads them
const types = new pg.TypeOverrides();
types.setTypeParser(1082, (s: string) => s);
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_SIZE ?? 10), min: 0, types });
pool.on('error', () => {});

/** Parameterised statements run prepared, one name per text, as Plinth runs them (pg prepares a name once per connection). */
const names = new Map<string, string>();
const prepared = (text: string, values: unknown[]): QueryConfig => {
  let name = names.get(text);
  if (name === undefined) names.set(text, (name = `baseline_${names.size}`));
  return { name, text, values };
};

interface Statement {
  sql: string;
  slots: string[];
  run(on: Pick<PoolClient, 'query'>, vars: Vars): Promise<QueryResult>;
}
function statement(t: Template): Statement {
  const render = compile(t.sql);
  const bind = t.params ? binder(t.params) : null;
  return {
    sql: t.sql,
    slots: slotsOf(t),
    run: bind ? (on, vars) => on.query(prepared(render(vars), bind(vars))) : (on, vars) => on.query(render(vars)),
  };
}
const statements = (name: string) => (templates[name] ?? []).map(statement);
const S = { read: statements('by-id'), list: statements('list'), search: statements('search'), create: statements('create'), update: statements('update') };
const bodyKeys = (stmts: Statement[]) =>
  new Set(
    stmts
      .flatMap((s) => s.slots)
      .filter((k) => k.startsWith('body:') || k.startsWith('i18n:'))
      .map((k) => k.slice(k.indexOf(':') + 1)),
  );
const createKeys = bodyKeys(S.create);
const updateKeys = bodyKeys(S.update);
const TRANSLATABLE = new Set(['name', 'description']);

function pick(value: Record<string, string> | null): string | null {
  if (!value || typeof value !== 'object') return null;
  if (typeof value[LANG] === 'string') return value[LANG];
  const first = Object.keys(value).sort()[0];
  return first ? value[first] : null;
}

/**
 * The API shape of a product row, as Plinth's row mapper writes it. Plinth's read
 * SQL already names columns as the API does (camelCase, timestamps as ISO text);
 * its writes return what MikroORM loaded (snake_case from pg, timestamps as Date).
 */
function dto(r: Row) {
  if ('companyId' in r) {
    return {
      id: r.id,
      companyId: r.companyId,
      sku: r.sku,
      name: pick(r.name),
      description: pick(r.description),
      price: r.price,
      currency: r.currency,
      unit: r.unit,
      stock: r.stock,
      categoryId: r.categoryId,
      isActive: r.isActive,
      availableFrom: r.availableFrom,
      discontinuedAt: r.discontinuedAt,
      attributes: r.attributes,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      version: r.version,
    };
  }
  return {
    id: r.id,
    companyId: r.company_id,
    sku: r.sku,
    name: pick(r.name),
    description: pick(r.description),
    price: r.price,
    currency: r.currency,
    unit: r.unit,
    stock: r.stock,
    categoryId: r.category_id,
    isActive: r.is_active,
    availableFrom: r.available_from,
    discontinuedAt: r.discontinued_at,
    attributes: r.attributes,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    version: r.version,
  };
}

const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });
const Product = {
  $id: 'Product',
  type: 'object',
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' },
    companyId: { type: 'string', format: 'uuid' },
    sku: { type: 'string' },
    name: { type: 'string' },
    description: nullable('string'),
    price: { type: 'string' },
    currency: { type: 'string' },
    unit: nullable('string'),
    stock: nullable('integer'),
    categoryId: nullable('string', { format: 'uuid' }),
    isActive: nullable('boolean'),
    availableFrom: nullable('string', { format: 'date' }),
    discontinuedAt: nullable('string', { format: 'date-time' }),
    attributes: {},
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    version: { type: 'integer' },
  },
};
const List = {
  type: 'object',
  additionalProperties: false,
  properties: {
    items: { type: 'array', items: { $ref: 'Product#' } },
    size: { type: 'integer' },
    total: { type: 'integer' },
    nextCursor: { type: ['string', 'null'] },
    page: { type: 'integer' },
  },
};

/** Plinth's cursor of the page after this one (core/crud/list-cursor.ts): the default sort, the last row's sort key and id. */
function nextCursor(rows: Record<string, any>[], total: number, key: (row: Record<string, any>) => unknown): string | null {
  const last = rows.at(-1);
  if (!last || rows.length >= total) return null;
  return Buffer.from(JSON.stringify({ s: '-createdAt', k: [key(last)], id: last.id })).toString('base64url');
}

class HttpError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function companyOf(headers: Record<string, unknown>): string {
  const c = headers['x-company-id'];
  if (typeof c !== 'string' || !UUID.test(c)) throw new HttpError(400, 'X-Company-Id must be a UUID');
  return c.toLowerCase();
}

function idOf(params: unknown): string {
  const id = (params as { id: string }).id;
  if (!UUID.test(id)) throw new HttpError(400, 'id must be a UUID');
  return id;
}

/** The body's values as request variables (inlined by the write templates as MikroORM inlines them). */
function bodyValues(body: unknown, keys: Set<string>, vars: Vars, translations: boolean): Row {
  const b = body as Row | null;
  if (!b || typeof b !== 'object' || Object.keys(b).length !== keys.size || !Object.keys(b).every((k) => keys.has(k))) {
    throw new HttpError(400, `the baseline's templates take a body with exactly: ${[...keys].join(', ')}`);
  }
  for (const [k, v] of Object.entries(b)) {
    if (TRANSLATABLE.has(k) && !translations) throw new HttpError(400, `the baseline does not merge translations (${k})`);
    if (TRANSLATABLE.has(k)) vars[`i18n:${k}`] = { [LANG]: v };
    else vars[`body:${k}`] = v;
  }
  return b;
}

/** Runs a write scenario's statements in order: outside begin…commit on the pool, inside on one client. */
async function runSequence(stmts: Statement[], vars: Vars, after: (sql: string, rows: Row[]) => void): Promise<void> {
  let client: PoolClient | null = null;
  try {
    for (const s of stmts) {
      if (s.sql === 'begin') client = await pool.connect();
      const res = await s.run(client ?? pool, vars);
      if (s.sql === 'commit') {
        client!.release();
        client = null;
      }
      after(s.sql, res.rows);
    }
  } catch (err) {
    if (client) {
      await client.query('rollback').catch(() => {});
      client.release();
    }
    throw err;
  }
}

const app = Fastify({ logger: false });
app.addSchema(Product);
app.setErrorHandler((err: Error & { status?: number; statusCode?: number }, _req, reply) => {
  reply.code(err.status ?? err.statusCode ?? 500).send({ status: err.status ?? err.statusCode ?? 500, detail: err.message });
});
const one = (reply: FastifyReply, row: Row, status = 200) => reply.code(status).header('etag', `"${row.version}"`).header('content-language', LANG).send(dto(row));

app.get('/health/ready', async () => {
  await pool.query('select 1');
  return { status: 'ok' };
});

app.get('/api/products/:id', { schema: { response: { 200: { $ref: 'Product#' } } } }, async (request, reply) => {
  const { rows } = await S.read[0].run(pool, { id: idOf(request.params), companyId: companyOf(request.headers) });
  if (!rows[0]) throw new HttpError(404, 'not found');
  return one(reply, rows[0]);
});

/**
 * The hand-written list page: the columns Plinth answers with (timestamps come back as Date, serialised
 * as ISO text as Plinth writes them), the same company filter, newest first by the primary key (UUIDv7
 * ids grow with creation time), so PostgreSQL reads the page off an index that exists whatever Plinth
 * declares; and the total the { items, size, total, nextCursor } contract needs, counted alongside.
 */
const IDIOMATIC =
  env.BASELINE_LIST === 'idiomatic'
    ? (() => {
        const table = env.BASELINE_TABLE;
        if (!table || !/^"[a-z0-9_]+"\."[a-z0-9_]+"$/.test(table)) throw new Error('BASELINE_LIST=idiomatic needs BASELINE_TABLE as "schema"."table"');
        return {
          page: `select id, company_id, sku, name, description, price, currency, unit, stock, category_id, is_active, available_from,
      discontinued_at, attributes, created_at, updated_at, version from ${table} where company_id = $1 order by id desc limit $2`,
          total: `select count(*)::int as total from ${table} where company_id = $1`,
        };
      })()
    : null;

app.get('/api/products', { schema: { response: { 200: List } } }, async (request, reply) => {
  const q = request.query as { size?: string; search?: string };
  const size = q.size === undefined ? 50 : Number(q.size);
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new HttpError(400, 'size must be 1..1000');
  if (IDIOMATIC && !q.search) {
    const company = companyOf(request.headers);
    const [page, count] = await Promise.all([pool.query(prepared(IDIOMATIC.page, [company, size])), pool.query(prepared(IDIOMATIC.total, [company]))]);
    if (page.rows.length) reply.header('content-language', LANG);
    const total = count.rows[0].total;
    // created_at as Plinth's exact sort key spells it: microseconds
    return { items: page.rows.map(dto), size, total, nextCursor: nextCursor(page.rows, total, (r) => r.created_at.toISOString().replace('Z', '000Z')), page: 1 };
  }
  const vars: Vars = { companyId: companyOf(request.headers), limit: size };
  const stmts = q.search ? S.search : S.list;
  if (q.search) vars.pattern = `%${q.search.replace(/[\\%_]/g, '\\$&')}%`;
  const results = await Promise.all(stmts.map((s) => s.run(pool, vars)));
  const countAt = stmts.findIndex((s) => /^select count\(\*\)/.test(s.sql));
  const rows = results.find((_, i) => i !== countAt)!.rows;
  if (rows.length) reply.header('content-language', LANG);
  const count = results[countAt].rows[0];
  const total = Number(count.total ?? count.count);
  return { items: rows.map(dto), size, total, nextCursor: nextCursor(rows, total, (r) => r._k0), page: 1 };
});

app.post('/api/products', { schema: { response: { 201: { $ref: 'Product#' } } } }, async (request, reply) => {
  const vars: Vars = { companyId: companyOf(request.headers) };
  const body = bodyValues(request.body, createKeys, vars, true);
  const id = uuidv7();
  const now = new Date();
  Object.assign(vars, { newId: id, now });
  let version = 0;
  let returned: Row | undefined;
  await runSequence(S.create, vars, (sql, rows) => {
    if ((/^select count\(\*\)/.test(sql) && Number(rows[0].count) === 0) || (/^select 1 /.test(sql) && !rows.length)) throw new HttpError(400, 'unknown reference');
    if (/ returning /.test(sql)) {
      version = rows[0].version;
      returned = rows[0];
    }
  });
  // a statement returning the API's columns (camelCase) is the answer; a bare one (MikroORM's) is completed here
  const row =
    returned && 'companyId' in returned
      ? returned
      : {
          id,
          company_id: (request.headers['x-company-id'] as string).toLowerCase(),
          sku: body.sku,
          name: { [LANG]: body.name },
          description: body.description === undefined ? {} : { [LANG]: body.description },
          price: body.price,
          currency: body.currency ?? 'EUR',
          unit: body.unit ?? 'piece',
          stock: body.stock ?? 0,
          category_id: body.categoryId ?? null,
          is_active: body.isActive ?? true,
          available_from: body.availableFrom ?? null,
          discontinued_at: body.discontinuedAt ?? null,
          attributes: body.attributes ?? null,
          created_at: now,
          updated_at: now,
          version,
        };
  reply.header('location', `/api/products/${id}`);
  return one(reply, row, 201);
});

app.patch('/api/products/:id', { schema: { response: { 200: { $ref: 'Product#' } } } }, async (request, reply) => {
  const vars: Vars = { id: idOf(request.params), companyId: companyOf(request.headers) };
  const body = bodyValues(request.body, updateKeys, vars, false);
  const now = new Date();
  vars.now = now;
  let row: Row | undefined;
  let returned: Row | undefined;
  await runSequence(S.update, vars, (sql, rows) => {
    if (/ for update( of t)?$/.test(sql)) {
      row = rows[0];
      if (!row) throw new HttpError(404, 'not found');
      vars.version = row.version;
    } else if (/^update /.test(sql)) {
      if (!rows[0]) throw new HttpError(409, 'changed concurrently');
      row!.version = rows[0].version;
      returned = rows[0];
    }
  });
  // an update returning the API's columns is the answer; a bare one (MikroORM's) is completed from the locked row
  if (returned && 'companyId' in returned) return one(reply, returned);
  for (const [k, v] of Object.entries(body)) row![k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  row!.updated_at = now;
  return one(reply, row!);
});

for (const sig of ['SIGTERM', 'SIGINT'] as const)
  process.once(sig, () => {
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0));
  });
await app.listen({ host: env.HOST ?? '127.0.0.1', port: Number(env.PORT ?? 3100) });
console.log(`baseline ready on port ${env.PORT}`);

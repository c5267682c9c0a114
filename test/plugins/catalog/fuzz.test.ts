// Property-based fuzz of every catalog route, driven by the published OpenAPI
// document: ids, query strings, headers and bodies come from the declared
// schemas; then, most of the time, exactly one part of the request is broken
// (garbage body, junk query, hostile headers, bad id, wrong caller), so the
// fault reaches the code behind the parts that are still valid. Whatever
// arrives: never a 5xx, and every 4xx is problem+json whose code fits its status.
// A failure prints its request and seed; rerun with FUZZ_SEED=<seed>, and
// FUZZ_LOG=<file> writes every request and answer.
import t from 'tap';
import fc from 'fast-check';
import { appendFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { ERRORS, type ErrorCode } from '../../../core/errors.ts';
import { build, PASSWORD } from '../../helper.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_121);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const CATALOG_PATH = /^\/api\/(products|categories)(\/|$)/;

type Schema = Record<string, any>;
interface Parameter { name: string; in: 'query' | 'header' | 'path'; schema: Schema; description?: string }
interface Operation { operationId: string; parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }
interface Doc { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } }

type Entity = 'Product' | 'Category';
type Auth = 'admin' | 'viewer' | 'none' | 'garbage' | 'otherTenant';
type Fault = 'none' | 'body' | 'query' | 'headers' | 'id' | 'auth';
interface Body { text: string; type?: string }
interface FuzzRequest { fault: Fault; method: string; path: string; query: string; headers: Record<string, string>; auth: Auth; body?: Body }

// ---------------------------------------------------------------- garbage

const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deep = (depth: number): unknown => { let v: unknown = 'leaf'; for (let i = 0; i < depth; i++) v = { a: v }; return v; };
const HUGE = fc.constantFrom(256, 4_001, 20_001, 70_000).chain((n) => fc.constantFrom('x', 'é', '😀', '\u0000').map((c) => c.repeat(n)));
/** Text that is valid JSON but hostile to what stores or searches it; the first kind PostgreSQL cannot store at all. */
const unstorable = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800');
const odd = fc.oneof(unstorable, fc.constantFrom('\u202e\u200b', '\ufeff', '%00', "'; drop table x; --",
  '\\', '"', '%', '_', '${x}', '{{x}}', '\r\n', ' ', '', '😀', 'e\u0301', '\u{10ffff}'));
const junkString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 40 }), odd,
  fc.tuple(fc.string({ maxLength: 10 }), odd).map(([a, b]) => a + b), HUGE);
const numberAsString = fc.oneof(fc.integer().map(String), fc.double().map(String), fc.constantFrom('1e999', 'NaN', '-0', '0x1F', ' 12 ', '12.500', '1,5', 'true', 'null', '٣'));
const garbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(), fc.double(), fc.boolean(), fc.constant(null), junkString, numberAsString,
  fc.jsonValue({ maxDepth: 3 }), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.integer({ min: 30, max: 400 }).map(deep), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 1e308, -1, 0.5),
);
const RAW_BODIES = ['', '{', '{"a":', 'null', '[]', '"x"', '0', 'true', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}',
  '\u0000', '{"sku":"a"}{"sku":"b"}', nest(5_000), `{"name":"${'x'.repeat(1024 * 1024 + 10)}"}`, '\ufeff{}', '{"name":"\\ud800"}'];
const CONTENT_TYPES = ['application/json; charset=utf-8', 'application/JSON', 'text/plain', 'application/x-www-form-urlencoded',
  'application/problem+json', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/json;', 'garbage'];
const LANGUAGES = ['en', 'de', 'fr', 'pt-BR', 'zh-Hant'];

/** Percent-encodes what it can; a lone surrogate goes out as broken bytes, as a hostile client would send it. */
const enc = (s: string) => { try { return encodeURIComponent(s); } catch { return s.replace(/[^\w-]/g, '%FF'); } };

// ---------------------------------------------------------------- from schemas

function fromSchemas(doc: Doc, refs: (name: string) => fc.Arbitrary<string> | undefined) {
  const resolve = (s: Schema): Schema => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : s);

  function stringOf(s: Schema, name: string): fc.Arbitrary<string> {
    if (s.format === 'uuid') return refs(name) ?? fc.uuid();
    const dates = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
    if (s.format === 'date') return dates.map((d) => d.toISOString().slice(0, 10));
    if (s.format === 'date-time') return dates.map((d) => d.toISOString());
    const max = s.maxLength ?? 100;
    const fits = (v: string) => [...v].length <= max && [...v].length >= (s.minLength ?? 0);
    if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
    return fc.string({ unit: 'grapheme', minLength: s.minLength, maxLength: Math.min(max, 60) }).filter(fits);
  }

  /** Any value the schema allows; plain: never null where a value may be given. */
  function valueOf(schema: Schema, name = '', plain = false): fc.Arbitrary<unknown> {
    const s = resolve(schema);
    if (s.anyOf) return fc.oneof(...(s.anyOf as Schema[]).filter((x) => !plain || resolve(x).type !== 'null').map((x) => valueOf(x, name, plain)));
    if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
    if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((type) => valueOf({ ...s, type }, name, plain)));
    switch (s.type) {
      case 'null': return fc.constant(null);
      case 'boolean': return fc.boolean();
      case 'integer': return fc.integer({ min: s.minimum ?? -(2 ** 31), max: s.maximum ?? 2 ** 31 - 1 });
      case 'string': return stringOf(s, name);
      case 'array': return fc.array(valueOf(s.items ?? {}), { maxLength: 3 });
      case 'object': {
        const props = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, valueOf(v as Schema, k, plain)]));
        const record = fc.record(props, { requiredKeys: s.required ?? [] });
        // free-form maps here are translations (language -> text); keys follow propertyNames where the document has it
        const key = s.propertyNames?.pattern ? fc.stringMatching(new RegExp(s.propertyNames.pattern)) : fc.constantFrom(...LANGUAGES);
        const extra = s.additionalProperties && typeof s.additionalProperties === 'object'
          ? fc.dictionary(key, valueOf(s.additionalProperties), { maxKeys: Math.min(s.maxProperties ?? 3, 3) }) : fc.constant({});
        return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r })).filter((o) => Object.keys(o).length >= (s.minProperties ?? 0));
      }
      default: return fc.jsonValue({ maxDepth: 3 });
    }
  }

  /** Bodies the schema allows (clean) and the ways a client breaks them (dirty). */
  function bodyOf(schema: Schema): { clean: fc.Arbitrary<Body>; dirty: fc.Arbitrary<Body> } {
    const s = resolve(schema);
    const keys = Object.keys(s.properties ?? {});
    // free text (and free JSON): where hostile characters get past the schema to the database
    const free = (x: Schema): boolean => { const r = resolve(x); return r.anyOf ? r.anyOf.some(free) : (r.type === 'string' && !r.pattern && !r.format && !r.enum) || r.type === undefined; };
    const texts = keys.filter((k) => k !== 'translations' && free(s.properties[k]));
    const valid = valueOf(s) as fc.Arbitrary<Record<string, unknown>>;
    const plain = valueOf(s, '', true) as fc.Arbitrary<Record<string, unknown>>;
    const set = (base: fc.Arbitrary<Record<string, unknown>>, key: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>) =>
      fc.tuple(base, key, value).map(([v, k, x]) => ({ ...v, [k]: x }));
    const json = (v: unknown) => JSON.stringify(v) ?? 'null';
    const broken = fc.oneof(
      { weight: 4, arbitrary: set(plain, fc.constantFrom(...texts), fc.tuple(fc.string({ maxLength: 5 }), fc.oneof(unstorable, odd)).map(([p, o]) => p + o)) },
      { weight: 3, arbitrary: set(valid, fc.constantFrom(...keys), garbage) },
      { weight: 2, arbitrary: plain.chain((v) => (v.translations ? fc.constant(v) : fc.constant({ ...v, translations: {} })))
        .chain((v) => fc.tuple(fc.constantFrom(...Object.keys((resolve(s.properties.translations ?? {}).properties ?? { name: 0 }))), fc.oneof(junkString, fc.constantFrom(...LANGUAGES)), fc.oneof(odd, junkString, garbage))
          .map(([field, lang, text]) => ({ ...v, translations: { [field]: { [lang]: text } } }))) },
      { weight: 1, arbitrary: set(valid, fc.constantFrom('id', 'companyId', 'version', 'createdAt', 'translations', '__proto__', 'constructor'), fc.constantFrom(null, '', 'x', 1, {})) },
      { weight: 1, arbitrary: set(valid, fc.string({ minLength: 1, maxLength: 20 }), garbage) },
      { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...(s.required?.length ? s.required : keys))).map(([v, k]) => { const c = { ...v }; delete c[k]; return c; }) },
      { weight: 1, arbitrary: valid.map((v) => Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'number' || typeof x === 'boolean' ? String(x) : x]))) },
      { weight: 1, arbitrary: garbage },
    ).map(json);
    return {
      clean: fc.oneof(valid, plain).map((v) => ({ text: json(v), type: 'application/json' })),
      dirty: fc.oneof(
        { weight: 12, arbitrary: broken.map((text) => ({ text, type: 'application/json' })) },
        { weight: 1, arbitrary: fc.tuple(fc.oneof(broken, valid.map(json)), fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined)).map(([text, type]) => ({ text, type })) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((text) => ({ text, type: 'application/json' })) },
      ),
    };
  }

  /** Query strings from the declared parameters (clean), and with junk values, unknown keys and broken encoding (dirty). */
  function queryOf(params: Parameter[]): { clean: fc.Arbitrary<string>; dirty: fc.Arbitrary<string> } {
    const validOf = (p: Parameter) => {
      const sortable = /Sortable: (.+)$/.exec(p.description ?? '')?.[1].split(', ');
      return sortable
        ? fc.array(fc.tuple(fc.boolean(), fc.constantFrom(...sortable)).map(([desc, f]) => `${desc ? '-' : ''}${f}`), { minLength: 1, maxLength: 3 }).map((a) => a.join(','))
        : valueOf(p.schema, p.name).map(String);
    };
    const some = (value: (p: Parameter) => fc.Arbitrary<string>) =>
      fc.tuple(...params.map((p) => fc.option(value(p).map((v) => `${p.name}=${enc(v)}`), { freq: 2 }))).map((parts) => parts.filter((x) => x !== null));
    const junk = fc.oneof(fc.tuple(fc.string({ maxLength: 10 }), junkString).map(([k, v]) => `${enc(k)}=${enc(v)}`),
      fc.constantFrom('%', '%ZZ', '&&', '=', 'a[b]=1', 'page=1&page=2', 'size', 'sort=', 'search=%00', 'search=%E0%A4%A', 'search=%ED%A0%80',
        'translations=de,,fr', '__proto__=1', 'constructor=x', 'size=1001', 'page=0', 'page=99999999999999999999'));
    return {
      clean: some(validOf).map((parts) => parts.join('&')),
      dirty: fc.tuple(some((p) => fc.oneof(validOf(p), junkString, numberAsString)), fc.array(junk, { minLength: 1, maxLength: 2 }))
        .map(([known, extra]) => [...known, ...extra].join('&')),
    };
  }

  return { valueOf, bodyOf, queryOf };
}

// ---------------------------------------------------------------- checks

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...(${text.length} chars)` : text);
const show = (req: FuzzRequest, res: LightMyRequestResponse) => `${req.method} ${cut(req.path, 120)}${req.query ? `?${cut(req.query, 300)}` : ''} `
  + `auth=${req.auth} headers=${cut(JSON.stringify(req.headers), 300)} body=${req.body ? `${JSON.stringify(req.body.type)} ${JSON.stringify(cut(req.body.text, 300))}` : '-'}`
  + `\n  -> ${res.statusCode} ${res.headers['content-type']} ${cut(res.body, 500)}`;

/** Defects reported to the owner of the code: each is reported once as a todo with its first request, not failed. */
const KNOWN: Array<{ id: string; todo: string; matches: (req: FuzzRequest, res: LightMyRequestResponse) => boolean }> = [];
const known = new Map<string, string>();

function checkResponse(req: FuzzRequest, res: LightMyRequestResponse): void {
  const defect = KNOWN.find((k) => k.matches(req, res));
  if (defect) {
    if (!known.has(defect.id)) known.set(defect.id, show(req, res));
    return;
  }
  if (res.statusCode >= 500) throw new Error(`5xx answer: ${show(req, res)}`);
  if (res.statusCode < 400) return;
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) throw new Error(`error without problem+json: ${show(req, res)}`);
  let body: { code?: string; status?: number };
  try { body = res.json(); } catch { throw new Error(`problem body is not JSON: ${show(req, res)}`); }
  if (typeof body.code !== 'string' || !(body.code in ERRORS)) throw new Error(`problem without a known code: ${show(req, res)}`);
  if (ERRORS[body.code as ErrorCode][0] !== res.statusCode || body.status !== res.statusCode) throw new Error(`code ${body.code} does not fit the status: ${show(req, res)}`);
}

// ---------------------------------------------------------------- the run

t.test('fuzz every catalog route from the OpenAPI document', async (t) => {
  const ctx = await build(t);
  const a = await ctx.tenant();
  const b = await ctx.tenant();
  const viewer = await ctx.user(a, { codes: ['erp:catalog:view'] });
  const adminId = (await ctx.as(a.adminToken, { method: 'GET', url: '/api/auth/me' })).json().id as string;
  const second = await ctx.company(a, 'C2', [adminId]);
  const foreign = await ctx.company(a, 'C3');
  const admin = (await ctx.login(a.id, a.adminEmail, PASSWORD)).json().accessToken as string; // now lists C2 too
  const tokens: Record<Auth, string | undefined> = { admin, viewer: viewer.token, none: undefined, garbage: 'eyJhbGciOiJub25lIn0.e30.', otherTenant: b.adminToken };

  const make = async (token: string, url: string, payload: Record<string, unknown>, company?: string) => {
    const res = await ctx.as(token, { method: 'POST', url, payload, headers: company ? { 'x-company-id': company } : {} });
    if (res.statusCode !== 201) throw new Error(`fixture ${url}: ${res.body}`);
    return res.json().id as string;
  };
  const catA = await make(admin, '/api/categories', { name: 'Tools' });
  const catA2 = await make(admin, '/api/categories', { name: 'Garden', parentId: catA });
  const catC2 = await make(admin, '/api/categories', { name: 'Other company' }, second);
  const catB = await make(b.adminToken, '/api/categories', { name: 'Tenant B' });
  // rows of the caller's default company; the fuzz adds what it creates and drops what it deletes
  const ids: Record<Entity, string[]> = {
    Product: [
      await make(admin, '/api/products', { sku: 'FX-1', name: 'Hammer', price: '12.50', categoryId: catA }),
      await make(admin, '/api/products', { sku: 'FX-2', name: 'Saw', price: '0.99', translations: { name: { de: 'Säge' } } }),
      await make(admin, '/api/products', { sku: 'FX-3', name: 'Drill', price: '99' }),
    ],
    Category: [catA, catA2],
  };
  const elsewhere: Record<Entity, string[]> = {
    Product: [await make(admin, '/api/products', { sku: 'FX-C2', name: 'Elsewhere', price: '1.00' }, second), await make(b.adminToken, '/api/products', { sku: 'FX-B', name: 'B', price: '1.00' })],
    Category: [catC2, catB],
  };

  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json() as Doc;
  const categoryRef = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(catA, catA2) }, fc.constantFrom(catC2, catB), fc.uuid());
  const { queryOf, bodyOf, valueOf } = fromSchemas(doc, (name) => (name === 'categoryId' || name === 'parentId' ? categoryRef : undefined));

  // picked when the request is generated, so the pool follows the fuzz's own writes
  const existing = (entity: Entity) => fc.integer({ min: 0, max: 1_000 }).chain((i) => (ids[entity].length ? fc.constant(ids[entity][i % ids[entity].length]) : fc.uuid()));
  const sample = { Product: ids.Product[0], Category: ids.Category[0] };
  const idOf = (entity: Entity) => ({
    clean: existing(entity),
    dirty: fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...elsewhere[entity], ...ids[entity === 'Product' ? 'Category' : 'Product']) },
      { weight: 1, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: fc.oneof(junkString, fc.constantFrom('0', '-1', 'null', '..', '%2e%2e', sample[entity].toUpperCase(), `${sample[entity]}x`, sample[entity].replace(/-/g, ''), 'a'.repeat(201)))
        .filter((s) => s.length > 0).map(enc) },
    ),
  });
  const headerJunk = fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
    fc.constantFrom('', '*', ' ', ';;,,', 'x'.repeat(5000), 'de;q=abc, *;q=0', 'en-US,en;q=0.9,de;q=0.8', 'W/"1"', '"1", "2"', '*, "1"',
      '"999999999999999999999"', '"-1"', '"1.5"', '1', 'zz-ZZZZZZZZZ', 'de-DE-x-private-subtag', 'EN', 'i-klingon'));
  const headersOf = (params: Parameter[]) => {
    const clean = (p: Parameter): fc.Arbitrary<string> => p.name === 'x-company-id' ? fc.constantFrom(a.companyId, a.companyId.toUpperCase())
      : p.name.endsWith('-language') ? fc.constantFrom('en', 'de', 'fr', 'de-CH', 'pt-BR', 'de;q=0.5, en;q=0.9', '*')
      : p.name === 'if-match' ? fc.constant('"1"') : valueOf(p.schema).map(String);
    const dirty = (p: Parameter): fc.Arbitrary<string> => p.name === 'x-company-id' ? fc.oneof(fc.constantFrom(second, foreign, b.companyId), fc.uuid(), headerJunk)
      : p.name === 'if-match' ? fc.oneof(fc.integer({ min: 0, max: 3 }).map((v) => `"${v}"`), headerJunk) : headerJunk;
    const record = (pick: (p: Parameter) => fc.Arbitrary<string>) =>
      fc.record(Object.fromEntries(params.map((p) => [p.name, pick(p)])), { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>;
    return { clean: record((p) => (p.name === 'if-match' ? fc.constant('') : clean(p))).map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v))),
      dirty: fc.tuple(record(clean), fc.constantFrom(...params.map((p) => p.name)), fc.boolean())
        .chain(([h, name, also]) => fc.tuple(dirty(params.find((p) => p.name === name)!), also ? record(dirty) : fc.constant({}))
          .map(([v, more]) => ({ ...h, ...more, [name]: v }))) };
  };
  const callers = { clean: fc.constant<Auth>('admin'), dirty: fc.constantFrom<Auth>('viewer', 'none', 'garbage', 'otherTenant') };

  const stats = new Map<string, Map<number, number>>();
  const send = async (name: string, req: FuzzRequest) => {
    const token = tokens[req.auth];
    const headers: Record<string, string> = { ...req.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    if (req.body?.type) headers['content-type'] = req.body.type;
    const res = await ctx.app.inject({ method: req.method as 'GET', url: `${req.path}${req.query ? `?${req.query}` : ''}`, headers, ...(req.body ? { payload: req.body.text } : {}) });
    if (process.env.FUZZ_LOG) appendFileSync(process.env.FUZZ_LOG, `${name} [${req.fault}] ${show(req, res)}\n`);
    const counts = stats.get(name) ?? new Map<number, number>();
    stats.set(name, counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1));
    checkResponse(req, res);
    const entity: Entity = req.path.startsWith('/api/products') ? 'Product' : 'Category';
    const mine = req.auth === 'admin' && [undefined, a.companyId].includes(req.headers['x-company-id']?.toLowerCase());
    if (res.statusCode === 201 && mine) ids[entity].push(res.json().id);
    if (res.statusCode === 204) ids[entity] = ids[entity].filter((id) => !req.path.endsWith(id));
    return res;
  };

  const run = async (name: string, arb: fc.Arbitrary<FuzzRequest>, seed: number, check?: (req: FuzzRequest, res: LightMyRequestResponse) => void) => {
    const property = fc.asyncProperty(arb, async (req) => {
      const res = await send(name, req);
      check?.(req, res);
    });
    const details = await fc.check(property, { seed, numRuns: RUNS, endOnFailure: true });
    const statuses = JSON.stringify(Object.fromEntries([...(stats.get(name) ?? [])].sort(([x], [y]) => x - y)));
    if (!details.failed) return t.pass(`${name}: ${details.numRuns} requests, statuses ${statuses}`);
    const err = details.errorInstance;
    t.fail(`${name}: ${err instanceof Error ? err.message : String(err)}\n  (fast-check seed ${details.seed}, path ${details.counterexamplePath}; rerun the file with FUZZ_SEED=${SEED})`);
  };

  // Every catalog operation in the document; deletes last, so the others meet the fixtures.
  const operations = Object.entries(doc.paths).filter(([p]) => CATALOG_PATH.test(p))
    .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
    .sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
  t.equal(operations.length, 12, 'six operations per catalog entity');

  let seed = SEED;
  for (const { path, method, op } of operations) {
    const entity: Entity = path.startsWith('/api/products') ? 'Product' : 'Category';
    const params = op.parameters ?? [];
    const bodySchema = op.requestBody?.content['application/json']?.schema;
    const parts = {
      path: path.includes('{id}') ? idOf(entity) : { clean: fc.constant(''), dirty: fc.constant('') },
      query: queryOf(params.filter((p) => p.in === 'query')),
      headers: headersOf(params.filter((p) => p.in === 'header')),
      auth: callers,
      body: bodySchema ? bodyOf(bodySchema) : undefined,
    };
    const faults: Array<{ weight: number; arbitrary: fc.Arbitrary<Fault> }> = [
      { weight: 3, arbitrary: fc.constant('none') }, { weight: bodySchema ? 5 : 0, arbitrary: fc.constant('body') },
      { weight: 1, arbitrary: fc.constant('query') }, { weight: 2, arbitrary: fc.constant('headers') },
      { weight: path.includes('{id}') ? 1 : 0, arbitrary: fc.constant('id') }, { weight: 1, arbitrary: fc.constant('auth') },
    ];
    const arb = fc.oneof(...faults.filter((f) => f.weight > 0)).chain((fault) => fc.record({
      fault: fc.constant(fault),
      method: fc.constant(method),
      path: parts.path[fault === 'id' ? 'dirty' : 'clean'].map((id) => path.replace('{id}', id)),
      query: parts.query[fault === 'query' ? 'dirty' : 'clean'],
      headers: parts.headers[fault === 'headers' ? 'dirty' : 'clean'],
      auth: parts.auth[fault === 'auth' ? 'dirty' : 'clean'],
      ...(parts.body ? { body: parts.body[fault === 'body' ? 'dirty' : 'clean'] } : {}),
    })) as fc.Arbitrary<FuzzRequest>;
    await run(op.operationId, arb, seed++);
  }

  // Methods a catalog path lacks answer 405 with Allow (a body the parser refuses fails first).
  for (const path of Object.keys(doc.paths).filter((p) => CATALOG_PATH.test(p))) {
    const declared = Object.keys(doc.paths[path]).map((m) => m.toUpperCase());
    const missing = METHODS.filter((m) => !declared.includes(m));
    const entity: Entity = path.startsWith('/api/products') ? 'Product' : 'Category';
    const ids = idOf(entity);
    const arb = fc.record({
      fault: fc.constant<Fault>('none'),
      method: fc.constantFrom(...missing),
      path: path.includes('{id}') ? fc.oneof(ids.clean, fc.uuid()).map((id) => path.replace('{id}', id)) : fc.constant(path),
      query: fc.constantFrom('', 'page=2', 'x=%00'),
      headers: fc.constant({}),
      auth: fc.oneof(callers.clean, callers.dirty),
      body: fc.option(fc.constantFrom({ text: '{}', type: 'application/json' }, { text: 'x', type: 'text/plain' }), { nil: undefined }),
    }) as fc.Arbitrary<FuzzRequest>;
    await run(`${missing.join('/')} ${path}`, arb, seed++, (req, res) => {
      if (req.body?.type === 'text/plain') return;
      const allow = String(res.headers.allow ?? '').split(', ').sort().join(', ');
      if (res.statusCode !== 405 || allow !== [...declared].sort().join(', ')) throw new Error(`expected 405 with Allow ${declared.join(', ')}: ${show(req, res)}`);
    });
  }

  for (const { id, todo } of KNOWN.filter((k) => known.has(k.id))) t.fail(`${id}: ${known.get(id)}`, { todo });
});

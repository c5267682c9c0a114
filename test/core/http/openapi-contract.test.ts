// What a generated client relies on in the OpenAPI document: every example
// fits its schema, every schema is typed, each operation lists the problem
// codes it can answer and no others, declares the headers it sends and the
// X-Company-Id it honours, and operationIds follow one rule.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { entityNoun, plural } from '../../../core/manifest/names.ts';
import { build, PASSWORD } from '../../helper.ts';
import { loadApi, fillPath, type ApiOperation } from '../../support/api/describe.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
type Json = Record<string, any>;

const ctx = await build(t);
const api = await loadApi(ctx.app, ctx.kernel);
const doc = api.doc as unknown as Json;

/** The codes an operation documents, read from its error responses' descriptions. */
const responses = (op: ApiOperation) => (op.doc as Json).responses as Record<string, Json>;
const codesOf = (op: ApiOperation) =>
  Object.entries(responses(op))
    .filter(([s]) => Number(s) >= 400)
    .flatMap(([, r]) => [...String(r.description).matchAll(/\(([A-Z_]+)\)/g)].map((m) => m[1]));
const headerParams = (op: ApiOperation) => op.params.filter((p) => p.in === 'header').map((p) => p.name);

/** Every [pointer, value] under `node`. */
function* walk(node: unknown, pointer = ''): Generator<[string, Json]> {
  if (!node || typeof node !== 'object') return;
  yield [pointer, node as Json];
  for (const [k, v] of Object.entries(node)) yield* walk(v, `${pointer}/${k}`);
}

t.test('every example is valid against its own schema', async (t) => {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  const invalid = (source: Json) => {
    const bad: string[] = [];
    for (const [pointer, node] of walk(source)) {
      if (!Array.isArray(node.examples) || !('type' in node || '$ref' in node || 'pattern' in node)) continue;
      const { examples, ...schema } = node;
      // refs point into the document's components: compile the schema inside a copy of them
      const validate = ajv.compile({ ...schema, components: source.components });
      for (const e of examples) if (!validate(e)) bad.push(`${pointer}: ${JSON.stringify(e)} ${ajv.errorsText(validate.errors)}`);
    }
    return bad;
  };
  t.same(invalid(doc), []);
  // the check can fail: a decimal example its pattern refuses is found
  const broken = structuredClone(doc);
  broken.components.schemas.CatalogProductCreate.properties.price.examples = ['12.505'];
  t.equal(invalid(broken).length, 1, 'a bad example is caught');
});

t.test('every schema is typed: a generated client gets no unknown', async (t) => {
  const TYPED = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'const', 'enum'];
  const untyped: string[] = [];
  for (const [pointer, node] of walk({ components: doc.components, paths: doc.paths, webhooks: doc.webhooks })) {
    const schemas = [
      ...Object.entries(node.properties && typeof node.properties === 'object' && !('type' in node.properties) ? node.properties : {}),
      ...(node.items ? [['items', node.items]] : []),
      ...(node.schema && !('in' in node && node.schema.$ref) ? [['schema', node.schema]] : []),
    ] as [string, Json | false][];
    // false, the schema nothing meets, is a property ruled out ({ app: false }: a client's never)
    for (const [name, s] of schemas) if (s !== false && !TYPED.some((k) => k in s)) untyped.push(`${pointer}/${name}`);
  }
  t.same(untyped, []);
});

t.test('each operation lists only the problem codes it can answer', async (t) => {
  const GUARDS = ['UNAUTHENTICATED', 'PLATFORM_ONLY', 'ROLE_REQUIRED', 'ADMIN_REQUIRED', 'COMPANY_FORBIDDEN', 'COMPANY_REQUIRED', 'FORBIDDEN'];
  const wrong: string[] = [];
  const expect = (op: ApiOperation, code: string, can: boolean) => {
    if (codesOf(op).includes(code) !== can) wrong.push(`${op.id} ${can ? 'lacks' : 'lists'} ${code}`);
  };
  for (const op of api.ops) {
    const codes = codesOf(op);
    // refresh checks its token itself; logout's access token is optional, but checked (with its company) when sent
    const own: Record<string, string[]> = { authRefresh: ['UNAUTHENTICATED'], authLogout: ['UNAUTHENTICATED', 'COMPANY_FORBIDDEN'] };
    // a module authenticator's routes are guarded like a user's, by its credentials
    if (op.auth === 'public' && !op.authenticator) for (const g of GUARDS.filter((g) => !own[op.id]?.includes(g))) expect(op, g, false);
    else expect(op, 'COMPANY_FORBIDDEN', true);
    expect(op, 'PLATFORM_ONLY', op.auth === 'platform');
    if (op.kind !== 'kernel') {
      expect(op, 'ADMIN_REQUIRED', op.admin);
      expect(op, 'COMPANY_REQUIRED', op.company);
    }
    // Fastify reads no body of a GET; a body route takes JSON within the size limit
    if (op.method === 'GET') for (const c of ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']) expect(op, c, false);
    if (op.body) for (const c of ['VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']) expect(op, c, true);
    if (op.kind !== 'custom') expect(op, 'PRECONDITION_FAILED', headerParams(op).includes('if-match'));
    // a flow the manifest declares, or one a module's write hooks say they check
    const hookedFlow = (ctx.kernel.hooks.get(op.entity ?? '') ?? []).some((h) => Object.values(h.problems ?? {}).some((codes) => codes.includes('INVALID_TRANSITION')));
    if (op.entity && op.kind !== 'custom' && !api.model(op.entity)!.transitions && !hookedFlow) expect(op, 'INVALID_TRANSITION', false);
    if (op.kind === 'list' && !op.pathParams.length) expect(op, 'NOT_FOUND', false);
    if (!codes.length) wrong.push(`${op.id} lists no problem`);
  }
  t.same(wrong, []);
  const login = api.ops.find((o) => o.id === 'authLogin')!;
  t.same(
    codesOf(login).sort(),
    [
      'DATABASE_UNAVAILABLE',
      'INTERNAL',
      'INVALID_CREDENTIALS',
      'PAYLOAD_TOO_LARGE',
      'RATE_LIMITED',
      'SERVICE_UNAVAILABLE',
      'TENANT_MIGRATING',
      'TENANT_MIGRATION_FAILED',
      'TENANT_UNAVAILABLE',
      'UNSUPPORTED_MEDIA_TYPE',
      'VALIDATION_FAILED',
    ],
    'login: what the handler and the body parser answer, no guard',
  );
});

t.test('what the routes answer is what they document', async (t) => {
  const tenant = await ctx.tenant();
  const undocumented: string[] = [];
  const check = (op: ApiOperation, what: string, res: { statusCode: number; json(): Json }) => {
    const r = responses(op)[String(res.statusCode)];
    const code = res.statusCode >= 400 ? res.json().code : undefined;
    if (!r || (code && !String(r.description).includes(`(${code})`))) undocumented.push(`${op.id} ${what}: ${res.statusCode} ${code ?? ''}`);
  };
  for (const op of api.ops) {
    const url = fillPath(op.path, Object.fromEntries(op.pathParams.map((p) => [p, randomUUID()])));
    const payload = op.body ? {} : undefined;
    // no credentials; then an administrator naming a company that is not theirs
    check(op, 'anonymous', await ctx.app.inject({ method: op.method as 'GET', url, payload }));
    if (op.auth === 'public') continue;
    const headers = { authorization: `Bearer ${tenant.adminToken}`, 'x-company-id': randomUUID() };
    check(op, 'foreign company', await ctx.app.inject({ method: op.method as 'GET', url, payload, headers }));
    if (op.method !== 'GET') {
      const xml = { ...headers, 'x-company-id': tenant.companyId, 'content-type': 'application/xml' };
      check(op, 'an XML body', await ctx.app.inject({ method: op.method as 'GET', url, payload: '<a/>', headers: xml }));
    }
  }
  t.same(undocumented, []);
  t.ok(api.ops.length > 100, `${api.ops.length} operations tried`);
});

t.test('responses declare the headers they carry', async (t) => {
  const declared = (op: ApiOperation, status: number) => Object.keys(responses(op)[String(status)]?.headers ?? {}).map((h) => h.toLowerCase());
  const wrong: string[] = [];
  for (const op of api.ops) {
    for (const [status, r] of Object.entries(responses(op))) {
      const has = Object.keys(r.headers ?? {});
      if (status === '201' && !has.includes('Location')) wrong.push(`${op.id} 201 without Location`);
      if (['429', '503'].includes(status) && !has.includes('Retry-After')) wrong.push(`${op.id} ${status} without Retry-After`);
      const row = ['read', 'create', 'replace', 'update'].includes(op.kind) && status < '300';
      if (row && !has.includes('ETag')) wrong.push(`${op.id} ${status} without ETag`);
      if (op.kind !== 'custom' && op.kind !== 'delete' && status < '300' && api.model(op.entity ?? '')?.translatable.length && !has.includes('Content-Language'))
        wrong.push(`${op.id} ${status} without Content-Language`);
    }
    if (op.auth !== 'public' && !headerParams(op).includes('x-company-id')) wrong.push(`${op.id} does not declare X-Company-Id`);
  }
  t.same(wrong, []);

  // live: every header of those that a response sends is one its status declares
  const WATCHED = ['etag', 'location', 'content-language', 'retry-after', 'cache-control'];
  const tenant = await ctx.tenant();
  const byId = (id: string) => api.ops.find((o) => o.id === id)!;
  const sent: string[] = [];
  const call = async (id: string, o: { url?: string; payload?: object; headers?: Record<string, string> } = {}) => {
    const op = byId(id);
    const res = await ctx.as(tenant.adminToken, { method: op.method as 'GET', url: o.url ?? op.path, payload: o.payload, headers: { 'accept-language': 'de', ...o.headers } });
    for (const h of WATCHED) if (res.headers[h] !== undefined && !declared(op, res.statusCode).includes(h)) sent.push(`${id} ${res.statusCode} sends ${h}`);
    return res;
  };
  const created = await call('catalogCreateProduct', { payload: { sku: 'HDR-1', name: 'Header', price: '1.50' }, headers: { 'content-language': 'de' } });
  t.equal(created.statusCode, 201);
  const url = created.headers.location as string;
  await call('catalogGetProduct', { url });
  await call('catalogUpdateProduct', { url, payload: { price: '2.00' } });
  await call('catalogListProducts');
  const login = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD } });
  t.equal(login.statusCode, 200);
  for (const h of WATCHED) if (login.headers[h] !== undefined && !declared(byId('authLogin'), 200).includes(h)) sent.push(`authLogin sends ${h}`);
  t.same(sent, []);
});

t.test('operationIds: <module><Verb><Noun>, the CRUD noun the entity name', async (t) => {
  const VERBS = [
    'List',
    'Get',
    'Create',
    'Replace',
    'Update',
    'Delete',
    'Bulk',
    'Set',
    'Ping',
    'Replay',
    'Convert',
    'Suspend',
    'Resume',
    'Migrate',
    'Archive',
    'Unarchive',
    'Retry',
    'Check',
    'Parse',
    'Login',
    'Logout',
    'Refresh',
    // API-key clients: keys, tokens and a job's lease
    'Rotate',
    'Revoke',
    'Issue',
    'Queue',
    'Claim',
    'Heartbeat',
    'Complete',
    'Fail',
  ];
  // the session verbs of auth act on the caller's own session: no noun to name
  const ALONE = ['Login', 'Logout', 'Refresh'];
  const CRUD_VERB = { list: 'List', read: 'Get', create: 'Create', replace: 'Replace', update: 'Update', delete: 'Delete' } as const;
  const prefixes = [...ctx.kernel.modules.map((m) => m.manifest.id.replace(/-./g, (s) => s[1].toUpperCase())), 'auth', 'platform', 'health', 'jobs', 'meta'];
  const wrong: string[] = [];
  for (const op of api.ops) {
    const prefix = prefixes.find((p) => new RegExp(`^${p}[A-Z]`).test(op.id));
    const rest = prefix ? op.id.slice(prefix.length) : '';
    const verb = VERBS.find((v) => rest.startsWith(v) && (rest.length === v.length || /[A-Z]/.test(rest[v.length])));
    if (!prefix || !verb || (rest === verb && !ALONE.includes(verb))) wrong.push(`${op.id}: not <prefix><Verb><Noun>`);
    if (op.kind in CRUD_VERB && op.entity) {
      const kind = op.kind as keyof typeof CRUD_VERB;
      // the entity's name without its module's in front (AiClient of ai: Client)
      const one = entityNoun(ctx.kernel.model(op.entity).module, op.entity);
      const noun = kind === 'list' ? plural(one) : one;
      const want = `${prefix}${CRUD_VERB[kind]}${noun}`;
      // a list of one parent's rows says whose (coreListEmailAccountsByCompany), a declared sub-set which (aiListTasksMine)
      const ok = kind === 'list' ? op.id === want || new RegExp(`^${want}(By)?[A-Z][A-Za-z]*$`).test(op.id) : op.id === want;
      if (!ok) wrong.push(`${op.id}: want ${want}`);
    }
  }
  t.same(wrong, []);
});

t.test('descriptions are words and markdown, not HTML', async (t) => {
  const bad: string[] = [];
  for (const [pointer, node] of walk(doc)) {
    for (const key of ['description', 'summary']) {
      const text = node[key];
      if (typeof text !== 'string') continue;
      if (text === 'Default Response') bad.push(`${pointer}: Default Response`);
      // text in <angle brackets> outside a code span is eaten by Swagger UI as an HTML tag
      if (/<[A-Za-z]/.test(text.replace(/`[^`]*`/g, ''))) bad.push(`${pointer}/${key}: ${text}`);
    }
  }
  t.same(bad, []);
  t.match(doc.info.description, /`Authorization: Bearer <accessToken>`/);
});

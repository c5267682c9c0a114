// External data sources of a BI application (/api/bi/apps/:appId/data-sources):
// tested on every save (a good and a bad URL, user, schema; a failing test
// refuses the save with 422 naming the field), the password write-only and
// encrypted at rest, the tables introspected into the source and refreshed on
// demand, refused private targets without the allow setting, and who may do
// what: owners and editors change sources, viewers read them, outsiders,
// other companies and tenants do not see them, nor callers without BI codes.
import t from 'tap';
import { apiAs } from '../core/core-api.ts';
import { biApi, expectProblem, expectStatus, UNKNOWN_ID } from './bi-api.ts';
import { addSource, buildWithSources, externalDatabase, SERVER, skipWithout, sourceBody } from './external-fixture.ts';

const fixture = await externalDatabase(t);
const skip = skipWithout(fixture);
const ctx = await buildWithSources(t, true);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const PASSWORD = 'Tr0ub4dor&3-not-shown';
const sources = (appId: string) => `/api/bi/apps/${appId}/data-sources`;
const body = (extra: Record<string, unknown> = {}) => sourceBody(fixture!, extra);

/** The error paths of a 422, and that nothing of the password leaks in it. */
function failedTest(t: Tap, res: Awaited<ReturnType<typeof ctx.app.inject>>, path: string, reason: RegExp, what: string) {
  expectProblem(t, res, 422, 'UNPROCESSABLE', what);
  t.equal(res.json().errors?.[0]?.path, path, `${what}: the field to fix`);
  t.match(res.json().detail, reason, `${what}: the reason`);
  t.notMatch(res.body, PASSWORD, `${what}: no password`);
}
type Tap = Pick<typeof t, 'ok' | 'equal' | 'match' | 'notMatch'>;

t.test('a source is tested when saved: its tables are introspected, its password never shown', { skip }, async (t) => {
  const owner = await bi.user();
  const app = await bi.app(owner);
  const res = await owner.api('POST', sources(app.id), body({ password: PASSWORD, description: 'the shop' }));
  const created = expectStatus(res, 201, 'create');
  t.equal(res.headers.location, `${sources(app.id)}/${created.id}`);
  t.equal(res.headers.etag, '"1"');
  t.match(created, { name: 'warehouse', appId: app.id, url: fixture!.url, schemaName: 'sales', sslMode: 'disable', status: 'ok', lastFailure: null, description: 'the shop' });
  t.match(created.serverVersion, /^\d+/);
  t.ok(Date.parse(created.testedAt), 'when it was tested');
  t.notOk('password' in created, 'no password field');
  t.notMatch(res.body, PASSWORD);
  t.same(
    created.tables.map((x: { name: string }) => x.name),
    ['big_orders', 'numbers', 'orders', 'slow'],
  );
  const orders = created.tables.find((x: { name: string }) => x.name === 'orders');
  t.same(
    orders.columns.map((c: Record<string, unknown>) => [c.name, c.label, c.type, c.dbType]),
    [
      ['id', 'Id', 'integer', 'int4'],
      ['customer', 'Customer', 'string', 'text'],
      ['region', 'Region', 'enum', 'region'],
      ['amount', 'Amount', 'decimal', 'numeric'],
      ['quantity', 'Quantity', 'integer', 'int4'],
      ['ordered_on', 'Ordered on', 'date', 'date'],
      ['shipped_at', 'Shipped at', 'datetime', 'timestamptz'],
      ['paid', 'Paid', 'boolean', 'bool'],
    ],
  );
  t.same(orders.skipped, ['notes (jsonb)', 'Odd Name (text)'], 'what analytics cannot use, named');
  for (const url of [`${sources(app.id)}/${created.id}`, sources(app.id)]) {
    const read = await owner.api('GET', url);
    expectStatus(read, 200, url);
    t.notMatch(read.body, PASSWORD, `${url}: no password`);
    t.notMatch(read.body, /"password"/, `${url}: no password field`);
  }
  // encrypted at rest: the stored value is a sealed secret, not the password
  const model = ctx.kernel.model('BiDataSource');
  const conn = ctx.kernel.dbs.get('main').em.getConnection();
  const [stored] = await conn.execute(`select password from "${tenant.schema}"."${model.table}" where id = ?`, [created.id]);
  t.match(stored.password, /^v1\./);
  t.notMatch(stored.password, PASSWORD);
  // the OpenAPI document says it is write-only
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  t.notOk('password' in doc.components.schemas.BiDataSource.properties, 'no password in the read shape');
  t.match(JSON.stringify(doc.components.schemas.BiDataSourcePatch.properties.password), /"writeOnly":true/);
  t.match(JSON.stringify(doc.paths['/api/bi/apps/{appId}/data-sources'].post.requestBody.content['application/json'].schema.properties.password), /"writeOnly":true/);
});

t.test('a password or sslmode written into the URL moves to its own field', { skip }, async (t) => {
  const owner = await bi.user();
  const app = await bi.app(owner);
  const url = fixture!.url.replace('postgres@', `postgres:${encodeURIComponent(PASSWORD)}@`) + '?sslmode=disable';
  const res = await owner.api('POST', sources(app.id), { name: 'inline', url, schemaName: 'sales' });
  const created = expectStatus(res, 201, 'create');
  t.equal(created.url, fixture!.url, 'the URL without password and sslmode');
  t.equal(created.sslMode, 'disable');
  t.notMatch(res.body, PASSWORD);
  const revealed = await (
    await ctx.kernel.contextFor({ tenant: tenant.id, principal: { kind: 'system' } as never, companyId: tenant.companyId })
  )
    .data('BiDataSource')
    .reveal(created.id, ['password']);
  t.equal(revealed?.password, PASSWORD, 'kept, encrypted, as the password');
});

t.test('a failing test refuses the save with 422 naming the reason', { skip }, async (t) => {
  const owner = await bi.user();
  const app = await bi.app(owner);
  const other = fixture!.url.replace(/\/[^/]+$/, '');
  failedTest(t, await owner.api('POST', sources(app.id), body({ url: `${other}/no_such_database_x` })), '/url', /no such database/, 'a database that does not exist');
  failedTest(
    t,
    await owner.api('POST', sources(app.id), body({ url: `postgres://no_such_role_x@${SERVER}/${fixture!.database}`, password: PASSWORD })),
    '/password',
    /authentication failed/,
    'a user that does not exist',
  );
  failedTest(t, await owner.api('POST', sources(app.id), body({ schemaName: 'no_such_schema' })), '/schemaName', /no such schema/, 'a schema that does not exist');
  failedTest(t, await owner.api('POST', sources(app.id), body({ url: `postgres://postgres@127.0.0.1:1/${fixture!.database}` })), '/url', /unreachable/, 'a port nobody listens on');
  failedTest(t, await owner.api('POST', sources(app.id), body({ url: `postgres://${SERVER}/x` })), '/url', /invalid URL/, 'a URL without a user');
  const tls = await owner.api('POST', sources(app.id), body({ name: 'tls', sslMode: 'require' }));
  if (tls.statusCode !== 201) failedTest(t, tls, '/sslMode', /TLS failed/, 'TLS the server does not speak');
  // the request's own shape is a 400 before anything connects
  for (const [bad, path] of [
    [{ url: 'mysql://u@h/d' }, '/url'],
    [{ name: 'Warehouse' }, '/name'],
    [{ name: 'a.b' }, '/name'],
    [{ sslMode: 'prefer' }, '/sslMode'],
    [{ tables: [] }, '/tables'],
    [{ status: 'ok' }, '/status'],
  ] as const) {
    const res = await owner.api('POST', sources(app.id), body(bad));
    expectProblem(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(bad));
    t.equal(res.json().errors[0].path, path);
  }
  const list = expectStatus(await owner.api('GET', sources(app.id)), 200, 'list');
  t.same(
    list.items.map((s: { name: string }) => s.name),
    tls.statusCode === 201 ? ['tls'] : [],
    'nothing saved by a failed test',
  );
  // one name per application
  const first = await addSource(owner, app.id, body({ name: 'one' }));
  expectProblem(t, await owner.api('POST', sources(app.id), body({ name: 'one' })), 409, 'CONFLICT', 'the same name twice');
  t.ok(first.id);
});

t.test('a change of the connection is tested again; other changes are not', { skip }, async (t) => {
  const owner = await bi.user();
  const app = await bi.app(owner);
  const source = await addSource(owner, app.id, body({ password: PASSWORD }));
  const item = `${sources(app.id)}/${source.id}`;
  const renamed = expectStatus(await owner.api('PATCH', item, { description: 'renamed' }), 200, 'describe');
  t.equal(renamed.testedAt, source.testedAt, 'no new test for a description');
  failedTest(t, await owner.api('PATCH', item, { schemaName: 'no_such_schema' }), '/schemaName', /no such schema/, 'a schema that does not exist');
  failedTest(t, await owner.api('PATCH', item, { url: `postgres://no_such_role_x@${SERVER}/${fixture!.database}` }), '/password', /authentication failed/, 'a user that does not exist');
  // a password far longer in UTF-16 than in characters is no reason to skip the test
  failedTest(t, await owner.api('PATCH', item, { url: 'postgresql://q', password: '😀'.repeat(1000) }), '/url', /invalid URL/, 'a long password and a bad URL');
  const kept = expectStatus(await owner.api('GET', item), 200, 'read');
  t.match(kept, { schemaName: 'sales', url: fixture!.url, status: 'ok', version: renamed.version }, 'a refused change changed nothing');
  const retested = expectStatus(await owner.api('PATCH', item, { schemaName: 'public' }), 200, 'another schema');
  t.same(
    retested.tables.map((x: { name: string }) => x.name),
    ['elsewhere'],
  );
  t.ok(retested.testedAt > source.testedAt, 'tested again');
  // PUT may leave the password out: the stored one is kept and used
  const put = await owner.api('PUT', item, { name: 'warehouse', description: null, url: fixture!.url, schemaName: 'sales', sslMode: 'disable' }, { 'if-match': `"${retested.version}"` });
  expectStatus(put, 200, 'replace');
  t.same(
    put.json().tables.map((x: { name: string }) => x.name),
    ['big_orders', 'numbers', 'orders', 'slow'],
  );
});

t.test('refresh: tables as they are now; a failure is answered and recorded', { skip }, async (t) => {
  const owner = await bi.user();
  const app = await bi.app(owner);
  const source = await addSource(owner, app.id, body());
  const refresh = `${sources(app.id)}/${source.id}/refresh`;
  await fixture!.sql('create table sales.added (id int, total numeric(8, 3))');
  t.teardown(() => fixture!.sql('drop table if exists sales.added'));
  const res = await owner.api('POST', refresh);
  const refreshed = expectStatus(res, 200, 'refresh');
  t.equal(res.headers.etag, `"${refreshed.version}"`);
  t.ok(
    refreshed.tables.some((x: { name: string }) => x.name === 'added'),
    'a table added since',
  );
  const schema = expectStatus(await owner.api('GET', `/api/bi/schema?app=${app.id}`), 200, 'schema');
  t.ok(schema.tables.some((x: { name: string }) => x.name === 'warehouse.added'));
  // the database goes away: the refresh fails, says why and records it; the last good tables stay
  await fixture!.sql('alter schema sales rename to sales_gone');
  t.teardown(() => fixture!.sql("do $$ begin if exists (select from pg_namespace where nspname = 'sales_gone') then alter schema sales_gone rename to sales; end if; end $$"));
  failedTest(t, await owner.api('POST', refresh), '/schemaName', /no such schema/, 'a refresh whose schema is gone');
  const recorded = expectStatus(await owner.api('GET', `${sources(app.id)}/${source.id}`), 200, 'read');
  t.equal(recorded.status, 'failed');
  t.match(recorded.lastFailure, /no such schema/);
  t.equal(recorded.tables.length, refreshed.tables.length, 'the tables of the last good test');
  await fixture!.sql('alter schema sales_gone rename to sales');
  const again = expectStatus(await owner.api('POST', refresh), 200, 'refresh again');
  t.match(again, { status: 'ok', lastFailure: null });
  expectProblem(t, await owner.api('POST', `${sources(app.id)}/${UNKNOWN_ID}/refresh`), 404, 'NOT_FOUND', 'an unknown source');
  const elsewhere = await bi.app(owner);
  expectProblem(t, await owner.api('POST', `${sources(elsewhere.id)}/${source.id}/refresh`), 404, 'NOT_FOUND', 'a source of another application');
});

t.test('who may do what: owners and editors change sources, viewers read them, the others not at all', { skip }, async (t) => {
  const team = await bi.team();
  const app = team.app.id;
  const source = await addSource(team.owner, app, body({ password: PASSWORD }));
  const item = `${sources(app)}/${source.id}`;
  // an editor may add, change and refresh
  const byEditor = await addSource(team.editor, app, body({ name: 'by_editor' }));
  expectStatus(await team.editor.api('PATCH', `${sources(app)}/${byEditor.id}`, { description: 'mine' }), 200, 'editor changes');
  expectStatus(await team.editor.api('POST', `${sources(app)}/${byEditor.id}/refresh`), 200, 'editor refreshes');
  // a viewer reads (without the password) and nothing more
  const listed = await team.viewer.api('GET', sources(app));
  t.equal(expectStatus(listed, 200, 'viewer lists').total, 2);
  t.notMatch(listed.body, PASSWORD);
  expectStatus(await team.viewer.api('GET', item), 200, 'viewer reads');
  expectProblem(t, await team.viewer.api('POST', sources(app), body({ name: 'by_viewer' })), 403, 'FORBIDDEN', 'viewer adds');
  expectProblem(t, await team.viewer.api('PATCH', item, { description: 'x' }), 403, 'FORBIDDEN', 'viewer changes');
  expectProblem(t, await team.viewer.api('POST', `${item}/refresh`), 403, 'FORBIDDEN', 'viewer refreshes');
  expectProblem(t, await team.viewer.api('DELETE', item), 403, 'FORBIDDEN', 'viewer deletes');
  // a viewer cannot make the server connect anywhere, however the URL is chosen: the right is checked first
  expectProblem(t, await team.viewer.api('POST', sources(app), body({ name: 'probe', url: 'postgres://u@127.0.0.1:1/x' })), 403, 'FORBIDDEN', 'viewer probes');
  // a BI user who is no member sees no application, so no source
  for (const [method, url] of [
    ['GET', sources(app)],
    ['GET', item],
    ['PATCH', item],
    ['DELETE', item],
    ['POST', `${item}/refresh`],
    ['POST', sources(app)],
  ] as const) {
    const res = await team.outsider.api(method, url, method === 'PATCH' ? { description: 'x' } : method === 'POST' && !url.endsWith('refresh') ? body({ name: 'x' }) : undefined);
    expectProblem(t, res, 404, 'NOT_FOUND', `outsider ${method} ${url}`);
  }
  // a user without BI codes: refused outright
  const noBi = await ctx.user(tenant, { codes: ['erp:crm:view'] });
  for (const [method, url] of [
    ['GET', sources(app)],
    ['POST', sources(app)],
    ['POST', `${item}/refresh`],
  ] as const) {
    expectProblem(t, await apiAs(ctx, noBi.token)(method, url, method === 'POST' && !url.endsWith('refresh') ? body({ name: 'x' }) : undefined), 403, 'FORBIDDEN', `no BI code: ${method} ${url}`);
  }
  // a BI administrator of the company changes every application's sources without being a member
  const admin = await bi.user(['erp:bi:admin']);
  expectStatus(await admin.api('PATCH', item, { description: 'by the BI administrator' }), 200, 'BI admin changes');
  await addSource(admin, app, body({ name: 'by_admin' }));
  // the owner deletes
  expectStatus(await team.owner.api('DELETE', item), 204, 'owner deletes');
  expectProblem(t, await team.owner.api('GET', item), 404, 'NOT_FOUND', 'gone');
});

t.test('other companies and tenants never see a source', { skip }, async (t) => {
  const owner = await bi.user();
  const app = await bi.app(owner);
  const source = await addSource(owner, app.id, body());
  const second = await ctx.company(tenant, `S${Date.now() % 100000}`);
  const both = await bi.user(['erp:bi:admin'], [tenant.companyId, second]);
  expectProblem(t, await both.api('GET', `${sources(app.id)}/${source.id}`, undefined, { 'x-company-id': second }), 404, 'NOT_FOUND', 'another company');
  expectStatus(await both.api('GET', `${sources(app.id)}/${source.id}`), 200, 'its own company');
  const other = await ctx.tenant();
  const foreign = apiAs(ctx, other.adminToken);
  expectProblem(t, await foreign('GET', `${sources(app.id)}/${source.id}`), 404, 'NOT_FOUND', 'another tenant reads');
  expectProblem(t, await foreign('POST', `${sources(app.id)}/${source.id}/refresh`), 404, 'NOT_FOUND', 'another tenant refreshes');
  expectProblem(t, await foreign('GET', `/api/bi/schema?app=${app.id}`), 404, 'NOT_FOUND', "another tenant's model");
  expectProblem(t, await foreign('POST', '/api/bi/analytics', { table: 'warehouse.orders', app: app.id, measures: [{ agg: 'count' }] }), 404, 'NOT_FOUND', "another tenant's analytics");
  const theirs = expectStatus(await foreign('POST', '/api/bi/apps', { name: 'Theirs' }), 201, 'their app');
  expectProblem(t, await foreign('PATCH', `${sources(theirs.id)}/${source.id}`, { description: 'x' }), 404, 'NOT_FOUND', 'under their own application');
});

t.test('without the allow setting, private and loopback targets are refused', { skip }, async (t) => {
  const strict = await buildWithSources(t, false);
  const other = await strict.tenant();
  const owner = apiAs(strict, other.adminToken);
  const app = expectStatus(await owner('POST', '/api/bi/apps', { name: 'Strict' }), 201, 'app');
  for (const url of [
    fixture!.url,
    fixture!.url.replace('127.0.0.1', 'localhost'),
    fixture!.url.replace('127.0.0.1', '[::1]'),
    'postgres://postgres@10.0.0.7/warehouse',
    'postgres://postgres@169.254.169.254/x',
  ]) {
    failedTest(t, await owner('POST', sources(app.id), body({ url })), '/url', /refused target/, url);
  }
  t.equal(expectStatus(await owner('GET', sources(app.id)), 200, 'list').total, 0);
});

// BI applications, members, sheets and widgets: the creator owns the
// application, rights per application role (viewer reads, editor edits sheets,
// widgets and queries, owner also shares), the last owner stays, isolation
// across tenants and companies, sheet order, widget rules and the grid layout.
import t from 'tap';
import { build } from '../../helper.ts';
import { biApi, BI_ADMIN, expectProblem, expectStatus, UNKNOWN_ID } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const COUNT = { table: 'BiApp', measures: [{ agg: 'count' }] };

t.test('create: the creator owns the application', async (t) => {
  const u = await bi.user();
  const a = await bi.app(u, { name: 'Sales', description: 'Pipeline' });
  t.match(a, { name: 'Sales', description: 'Pipeline' });
  const members = expectStatus(await u.api('GET', `/api/bi/apps/${a.id}/members`), 200, 'members');
  t.same(
    members.items.map((m: { userId: string; role: string }) => [m.userId, m.role]),
    [[u.id, 'owner']],
  );
});

t.test('rights per application role; outsiders see nothing', async (t) => {
  const team = await bi.team();
  const id = team.app.id;
  for (const who of ['owner', 'editor', 'viewer'] as const) t.equal(expectStatus(await team[who].api('GET', `/api/bi/apps/${id}`), 200, who).id, id);
  expectProblem(t, await team.outsider.api('GET', `/api/bi/apps/${id}`), 404, 'NOT_FOUND', 'outsider reads');
  const list = expectStatus(await team.outsider.api('GET', '/api/bi/apps'), 200, 'outsider list');
  t.same([list.items.length, list.total], [0, 0]);
  expectProblem(t, await team.outsider.api('GET', `/api/bi/apps/${id}/sheets`), 404, 'NOT_FOUND', 'outsider sheets');
  // sheets: editors and owners write, viewers read
  const s = await bi.sheet(team.editor, id, { name: 'Overview' });
  expectProblem(t, await team.viewer.api('POST', `/api/bi/apps/${id}/sheets`, { name: 'v' }), 403, 'FORBIDDEN', 'viewer creates a sheet');
  expectProblem(t, await team.viewer.api('PATCH', `/api/bi/apps/${id}/sheets/${s.id}`, { name: 'v' }), 403, 'FORBIDDEN', 'viewer edits a sheet');
  t.equal(expectStatus(await team.viewer.api('GET', `/api/bi/apps/${id}/sheets/${s.id}`), 200, 'viewer reads a sheet').name, 'Overview');
  expectProblem(t, await team.outsider.api('GET', `/api/bi/apps/${id}/sheets/${s.id}`), 404, 'NOT_FOUND', 'outsider reads a sheet');
  // widgets follow their sheet's application
  const w = await bi.widget(team.editor, s.id, { kind: 'text', text: '# Hello', w: 6, h: 2 });
  expectProblem(t, await team.viewer.api('POST', `/api/bi/sheets/${s.id}/widgets`, { kind: 'text', text: 'x', w: 6, h: 2 }), 403, 'FORBIDDEN', 'viewer adds a widget');
  t.equal(expectStatus(await team.viewer.api('GET', `/api/bi/sheets/${s.id}/widgets`), 200, 'viewer lists widgets').total, 1);
  expectProblem(t, await team.outsider.api('GET', `/api/bi/sheets/${s.id}/widgets/${w.id}`), 404, 'NOT_FOUND', 'outsider reads a widget');
  // the application itself and its sharing: owners only
  expectProblem(t, await team.editor.api('PATCH', `/api/bi/apps/${id}`, { name: 'e' }), 403, 'FORBIDDEN', 'editor renames');
  expectProblem(t, await team.editor.api('POST', `/api/bi/apps/${id}/members`, { userId: team.outsider.id, role: 'viewer' }), 403, 'FORBIDDEN', 'editor shares');
  expectProblem(t, await team.viewer.api('DELETE', `/api/bi/apps/${id}`), 403, 'FORBIDDEN', 'viewer deletes');
  expectStatus(await team.owner.api('PATCH', `/api/bi/apps/${id}`, { name: 'Renamed' }), 200, 'owner renames');
  // a BI admin sees every application of the company; another tenant nothing
  const admin = await bi.user(BI_ADMIN);
  t.ok(expectStatus(await admin.api('GET', '/api/bi/apps?size=1000'), 200, 'admin list').items.some((a: { id: string }) => a.id === id));
  const other = await ctx.tenant();
  expectProblem(t, await ctx.as(other.adminToken, { method: 'GET', url: `/api/bi/apps/${id}` }), 404, 'NOT_FOUND', 'other tenant');
  expectProblem(t, await ctx.as(other.adminToken, { method: 'GET', url: `/api/bi/apps/${id}/sheets` }), 404, 'NOT_FOUND', 'other tenant sheets');
});

t.test('another company of the tenant sees none of the applications', async (t) => {
  const team = await bi.team();
  const second = await ctx.company(tenant, `C${Date.now() % 100000}`);
  const both = await bi.user(BI_ADMIN, [tenant.companyId, second]);
  const headers = { 'x-company-id': second };
  expectProblem(t, await both.api('GET', `/api/bi/apps/${team.app.id}`, undefined, headers), 404, 'NOT_FOUND', 'other company');
  t.equal(expectStatus(await both.api('GET', '/api/bi/apps', undefined, headers), 200, 'list').total, 0);
});

t.test('without a BI code: 403 on every BI route', async (t) => {
  const none = await bi.user(['erp:crm:view']);
  for (const [method, url] of [
    ['GET', '/api/bi/apps'],
    ['GET', '/api/bi/app-tables'],
    ['GET', '/api/bi/app-relations'],
    ['GET', '/api/bi/schema'],
    ['GET', '/api/bi/database'],
    ['GET', `/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(COUNT))}`],
  ] as const) {
    expectProblem(t, await none.api(method, url), 403, 'FORBIDDEN', `${method} ${url}`);
  }
  expectProblem(t, await none.api('POST', '/api/bi/apps', { name: 'x' }), 403, 'FORBIDDEN', 'create');
  expectProblem(t, await none.api('POST', '/api/bi/analytics', COUNT), 403, 'FORBIDDEN', 'analytics');
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/bi/apps' }), 401, 'UNAUTHENTICATED', 'anonymous');
});

t.test('the last owner cannot leave or be demoted', async (t) => {
  const team = await bi.team();
  const id = team.app.id;
  const members = expectStatus(await team.owner.api('GET', `/api/bi/apps/${id}/members?size=10`), 200, 'members').items as { id: string; userId: string; role: string }[];
  const mine = members.find((m) => m.userId === team.owner.id)!;
  expectProblem(t, await team.owner.api('PATCH', `/api/bi/apps/${id}/members/${mine.id}`, { role: 'viewer' }), 409, 'CONFLICT', 'demote the last owner');
  expectProblem(t, await team.owner.api('DELETE', `/api/bi/apps/${id}/members/${mine.id}`), 409, 'CONFLICT', 'last owner leaves');
  const editor = members.find((m) => m.userId === team.editor.id)!;
  expectStatus(await team.owner.api('PATCH', `/api/bi/apps/${id}/members/${editor.id}`, { role: 'owner' }), 200, 'a second owner');
  t.equal((await team.owner.api('DELETE', `/api/bi/apps/${id}/members/${mine.id}`)).statusCode, 204, 'now the first may leave');
  expectProblem(t, await team.owner.api('GET', `/api/bi/apps/${id}`), 404, 'NOT_FOUND', 'and no longer sees it');
  expectProblem(t, await team.editor.api('POST', `/api/bi/apps/${id}/members`, { userId: team.viewer.id, role: 'viewer' }), 409, 'CONFLICT', 'a member twice');
  // deleting the application takes its members along
  t.equal((await team.editor.api('DELETE', `/api/bi/apps/${id}`)).statusCode, 204, 'the owner deletes it');
  expectProblem(t, await team.viewer.api('GET', `/api/bi/apps/${id}`), 404, 'NOT_FOUND', 'gone');
});

t.test('bad input on applications and sheets', async (t) => {
  const u = await bi.user();
  for (const body of [{}, { name: '' }, { name: 5 }, { name: 'x'.repeat(121) }, { name: 'x', bogus: 1 }, { name: 'x', color: 'red' }]) {
    expectProblem(t, await u.api('POST', '/api/bi/apps', body), 400, 'VALIDATION_FAILED', JSON.stringify(body).slice(0, 40));
  }
  expectProblem(t, await u.api('GET', '/api/bi/apps/not-a-uuid'), 400, 'VALIDATION_FAILED', 'malformed id');
  expectProblem(t, await u.api('GET', `/api/bi/apps/${UNKNOWN_ID}`), 404, 'NOT_FOUND', 'unknown id');
  expectProblem(t, await u.api('GET', `/api/bi/apps/${UNKNOWN_ID}/sheets`), 404, 'NOT_FOUND', 'sheets of an unknown app');
  const a = await bi.app(u);
  const s = await bi.sheet(u, a.id);
  expectProblem(t, await u.api('PATCH', `/api/bi/apps/${a.id}`, { name: 'y' }, { 'if-match': '"99"' }), 412, 'PRECONDITION_FAILED', 'stale version');
  expectProblem(t, await u.api('POST', `/api/bi/apps/${a.id}/sheets`, { name: 'x', position: -1 }), 400, 'VALIDATION_FAILED', 'negative position');
  expectProblem(t, await u.api('POST', `/api/bi/apps/${a.id}/sheets`, { name: 'x', appId: a.id }), 400, 'VALIDATION_FAILED', 'appId from the body');
  expectProblem(t, await u.api('PATCH', `/api/bi/apps/${a.id}/sheets/${s.id}`, { position: 'first' }), 400, 'VALIDATION_FAILED', 'position as text');
});

t.test('sheet order: every sheet once, in one call', async (t) => {
  const team = await bi.team();
  const id = team.app.id;
  const [s1, s2, s3] = [await bi.sheet(team.owner, id), await bi.sheet(team.owner, id), await bi.sheet(team.owner, id)];
  const res = expectStatus(await team.editor.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: [s3.id, s1.id, s2.id] }), 200, 'reorder');
  t.same(
    res.items.map((s: { id: string; position: number }) => [s.id, s.position]),
    [
      [s3.id, 0],
      [s1.id, 1],
      [s2.id, 2],
    ],
  );
  const listed = expectStatus(await team.viewer.api('GET', `/api/bi/apps/${id}/sheets`), 200, 'list').items.map((s: { id: string }) => s.id);
  t.same(listed, [s3.id, s1.id, s2.id], 'lists follow the position');
  expectProblem(t, await team.viewer.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: [s1.id, s2.id, s3.id] }), 403, 'FORBIDDEN', 'a viewer reorders');
  expectProblem(t, await team.outsider.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: [s1.id, s2.id, s3.id] }), 404, 'NOT_FOUND', 'an outsider reorders');
  expectProblem(t, await team.owner.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: [s1.id, s2.id] }), 400, 'VALIDATION_FAILED', 'a sheet left out');
  expectProblem(t, await team.owner.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: [s1.id, s2.id, s3.id, UNKNOWN_ID] }), 400, 'VALIDATION_FAILED', 'an unknown sheet');
  expectProblem(t, await team.owner.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: [s1.id, s1.id, s2.id, s3.id] }), 400, 'VALIDATION_FAILED', 'a sheet twice');
  expectProblem(t, await team.owner.api('PUT', `/api/bi/apps/${id}/sheet-order`, { sheetIds: 'x' }), 400, 'VALIDATION_FAILED', 'not a list');
  expectProblem(t, await team.owner.api('PUT', `/api/bi/apps/${UNKNOWN_ID}/sheet-order`, { sheetIds: [s1.id] }), 404, 'NOT_FOUND', 'unknown app');
});

t.test('widgets: kinds, chart types, queries, placement, the grid', async (t) => {
  const u = await bi.user();
  const a = await bi.app(u);
  const s = await bi.sheet(u, a.id);
  const q = { table: 'BiSheet', measures: [{ agg: 'count', name: 'sheets' }] };
  const chart = await bi.widget(u, s.id, { kind: 'chart', chartType: 'bar', title: 'Sheets', w: 6, h: 4, query: q, chart: { xAxis: 'sheets' } });
  t.match(chart, { kind: 'chart', chartType: 'bar', query: q, chart: { xAxis: 'sheets' }, x: 0, y: 0, w: 6, h: 4 });
  for (const chartType of ['line', 'area', 'pie', 'scatter', 'stackedBar', 'funnel', 'heatmap']) {
    expectStatus(await u.api('PATCH', `/api/bi/sheets/${s.id}/widgets/${chart.id}`, { chartType }), 200, chartType);
  }
  const saved = expectStatus(await u.api('POST', `/api/bi/apps/${a.id}/queries`, { name: 'Sheets', query: q }), 201, 'saved query');
  const kpi = await bi.widget(u, s.id, { kind: 'number', title: 'KPI', w: 3, h: 2, queryId: saved.id });
  t.match(kpi, { x: 0, y: 4 }, 'a new widget takes the first free row');
  const table = await bi.widget(u, s.id, { kind: 'table', query: q });
  t.match(table, { x: 0, y: 6, w: 6, h: 4 }, 'default size');
  const bad = (body: Record<string, unknown>, status: number, code: string, path: string | RegExp, what: string) =>
    u.api('POST', `/api/bi/sheets/${s.id}/widgets`, { kind: 'text', text: 'x', w: 2, h: 2, ...body }).then((res) => {
      expectProblem(t, res, status, code, what);
      t.match(res.json().errors?.[0]?.path, path, `${what}: path`);
    });
  await bad({ x: 2 }, 400, 'VALIDATION_FAILED', '/x', 'x is the layout’s');
  await bad({ w: 13 }, 400, 'VALIDATION_FAILED', '/w', 'wider than the grid');
  await bad({ h: 0 }, 400, 'VALIDATION_FAILED', '/h', 'no height');
  await bad({ w: 'wide' }, 400, 'VALIDATION_FAILED', '/w', 'text for a number');
  await bad({ kind: 'chart', text: undefined, query: q }, 400, 'VALIDATION_FAILED', '/chartType', 'a chart without chart type');
  await bad({ kind: 'chart', chartType: 'donut', query: q }, 400, 'VALIDATION_FAILED', '/chartType', 'an unknown chart type');
  await bad({ kind: 'gauge' }, 400, 'VALIDATION_FAILED', '/kind', 'an unknown kind');
  await bad({ kind: 'table' }, 400, 'VALIDATION_FAILED', '/query', 'a table without a query');
  await bad({ kind: 'table', query: { measures: [{ agg: 'count' }] } }, 400, 'VALIDATION_FAILED', /^\/query/, 'a query without a table');
  await bad({ kind: 'table', query: { table: 'BiSheet', measures: [{ agg: 'median' }] } }, 400, 'VALIDATION_FAILED', '/query/measures/0/agg', 'an unknown aggregation');
  await bad({ kind: 'table', query: { table: 'BiSheet', sql: 'select 1' } }, 400, 'VALIDATION_FAILED', '/query/sql', 'an unknown property');
  const elsewhere = await bi.app(u);
  const foreign = expectStatus(await u.api('POST', `/api/bi/apps/${elsewhere.id}/queries`, { name: 'F', query: q }), 201, 'query of another app');
  await bad({ kind: 'number', queryId: foreign.id }, 400, 'VALIDATION_FAILED', '/queryId', 'a saved query of another application');
  expectProblem(t, await u.api('POST', `/api/bi/apps/${a.id}/queries`, { name: 'bad', query: { measures: [] } }), 400, 'VALIDATION_FAILED', 'a saved query without table');
  expectProblem(t, await u.api('DELETE', `/api/bi/apps/${a.id}/queries/${saved.id}`), 409, 'CONFLICT', 'a saved query in use');
  // growing into another widget, or out of the grid, is refused; the layout call moves widgets
  const grow = await u.api('PATCH', `/api/bi/sheets/${s.id}/widgets/${chart.id}`, { h: 5 });
  expectProblem(t, grow, 422, 'UNPROCESSABLE', 'grows over the KPI');
  t.equal(grow.json().errors[0].path, '/h');
  expectStatus(
    await u.api('PUT', `/api/bi/sheets/${s.id}/layout`, {
      widgets: {
        [chart.id]: { x: 6, y: 0, w: 6, h: 4 },
        [kpi.id]: { x: 0, y: 0, w: 3, h: 2 },
        [table.id]: { x: 0, y: 4, w: 6, h: 4 },
      },
    }),
    200,
    'rearranged',
  );
  const wide = await u.api('PATCH', `/api/bi/sheets/${s.id}/widgets/${chart.id}`, { w: 7 });
  expectProblem(t, wide, 400, 'VALIDATION_FAILED', 'out of the grid');
  t.equal(wide.json().errors[0].path, '/w');
  expectStatus(await u.api('PATCH', `/api/bi/sheets/${s.id}/widgets/${kpi.id}`, { w: 6, h: 4 }), 200, 'grows into free space');
});

t.test('layout: every widget in one call, inside the grid, no overlap', async (t) => {
  const team = await bi.team();
  const s = await bi.sheet(team.owner, team.app.id);
  const text = { kind: 'text', text: 'x' };
  const a = await bi.widget(team.owner, s.id, { ...text, w: 6, h: 2 });
  const b = await bi.widget(team.owner, s.id, { ...text, w: 6, h: 2 });
  t.same([a.y, b.y], [0, 2], 'stacked as created');
  expectStatus(
    await team.owner.api('PUT', `/api/bi/sheets/${s.id}/layout`, {
      widgets: {
        [a.id]: { x: 0, y: 0, w: 6, h: 2 },
        [b.id]: { x: 6, y: 0, w: 6, h: 2 },
      },
    }),
    200,
    'side by side',
  );
  // swap them: they overlap while they move one by one, never in the layout saved
  const A = { x: 6, y: 0, w: 6, h: 2 };
  const B = { x: 0, y: 0, w: 6, h: 2 };
  const res = expectStatus(await team.editor.api('PUT', `/api/bi/sheets/${s.id}/layout`, { widgets: { [a.id]: A, [b.id]: B } }), 200, 'swap');
  t.same(
    res.items.map((w: { id: string; x: number }) => [w.id, w.x]),
    [
      [a.id, 6],
      [b.id, 0],
    ],
  );
  const put = (widgets: unknown, as = team.owner) => as.api('PUT', `/api/bi/sheets/${s.id}/layout`, { widgets });
  expectProblem(t, await put({ [a.id]: A }), 400, 'VALIDATION_FAILED', 'a widget left out');
  expectProblem(t, await put({ [a.id]: A, [b.id]: B, [UNKNOWN_ID]: { x: 0, y: 5, w: 1, h: 1 } }), 400, 'VALIDATION_FAILED', 'an unknown widget');
  expectProblem(t, await put({ [a.id]: A, [b.id]: B, 'not-an-id': { x: 0, y: 5, w: 1, h: 1 } }), 400, 'VALIDATION_FAILED', 'no widget id');
  const outside = await put({ [a.id]: { ...A, x: 7 }, [b.id]: B });
  expectProblem(t, outside, 400, 'VALIDATION_FAILED', 'outside the grid');
  t.equal(outside.json().errors[0].path, `/widgets/${a.id}/w`);
  const overlap = await put({ [a.id]: { ...A, x: 4 }, [b.id]: B });
  expectProblem(t, overlap, 422, 'UNPROCESSABLE', 'overlap');
  t.equal(overlap.json().errors[0].path, `/widgets/${b.id}`);
  expectProblem(t, await put({ [a.id]: { ...A, y: -1 }, [b.id]: B }), 400, 'VALIDATION_FAILED', 'negative row');
  expectProblem(t, await put({ [a.id]: { ...A, x: '1' }, [b.id]: B }), 400, 'VALIDATION_FAILED', 'text for a number');
  expectProblem(t, await put({ [a.id]: { ...A, z: 1 }, [b.id]: B }), 400, 'VALIDATION_FAILED', 'an unknown property');
  expectProblem(t, await put('x'), 400, 'VALIDATION_FAILED', 'no map');
  expectProblem(t, await put({ [a.id]: A, [b.id]: B }, team.viewer), 403, 'FORBIDDEN', 'a viewer moves widgets');
  expectProblem(t, await put({ [a.id]: A, [b.id]: B }, team.outsider), 404, 'NOT_FOUND', 'an outsider moves widgets');
  expectProblem(t, await team.owner.api('PUT', `/api/bi/sheets/${UNKNOWN_ID}/layout`, { widgets: {} }), 404, 'NOT_FOUND', 'unknown sheet');
  const after = expectStatus(await team.viewer.api('GET', `/api/bi/sheets/${s.id}/widgets`), 200, 'unchanged by the refusals').items;
  t.same(
    after.map((w: { id: string; x: number }) => [w.id, w.x]).sort(),
    [
      [a.id, 6],
      [b.id, 0],
    ].sort(),
  );
});

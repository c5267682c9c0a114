// The semantic model over the loaded manifests: tables with fields and roles
// (dimension, measure, time), relations along refs, the schema, and the
// database's version and sizes the caller may see.
import t from 'tap';
import { build } from '../../helper.ts';
import { biApi, expectProblem, expectStatus } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const analyst = await bi.user(['erp:bi:view', 'erp:crm:view', 'erp:pm:view']);

t.test('tables: the entities the caller may read, fields with their roles', async (t) => {
  const res = expectStatus(await analyst.api('GET', '/api/bi/app-tables'), 200, 'tables');
  t.equal(res.total, res.items.length);
  const byName = new Map(res.items.map((x: { name: string }) => [x.name, x]));
  const opportunity = byName.get('Opportunity') as { module: string; label: string; fields: { name: string; role: string; type: string; ref?: string; values?: string[] }[] };
  t.equal(opportunity.module, 'crm');
  const field = (name: string) => opportunity.fields.find((f) => f.name === name);
  t.match(field('amount'), { type: 'decimal', role: 'measure' });
  t.match(field('probability'), { type: 'integer', role: 'measure' });
  t.match(field('expectedCloseDate'), { type: 'date', role: 'time' });
  t.match(field('createdAt'), { type: 'datetime', role: 'time' });
  t.match(field('stage'), { type: 'enum', role: 'dimension', values: ['prospecting', 'qualification', 'proposal', 'negotiation', 'won', 'lost'] });
  t.match(field('customerId'), { type: 'ref', role: 'dimension', ref: 'Customer' });
  t.ok(byName.has('Task') && byName.has('Project'), 'PM tables');
  t.notOk(byName.has('Role'), 'no table they may not read');
  t.notOk(byName.has('RefreshToken'));
  expectProblem(t, await analyst.api('GET', '/api/bi/app-tables?x=1'), 400, 'VALIDATION_FAILED', 'unknown parameter');
});

t.test('relations: refs between readable tables', async (t) => {
  const res = expectStatus(await analyst.api('GET', '/api/bi/app-relations'), 200, 'relations');
  t.match(
    res.items.find((r: { name: string }) => r.name === 'Opportunity.customerId'),
    { from: 'Opportunity', field: 'customerId', to: 'Customer', toField: 'id', cardinality: 'many-to-one' },
  );
  t.ok(res.items.some((r: { name: string }) => r.name === 'Task.projectId'));
  t.notOk(
    res.items.some((r: { to: string }) => r.to === 'Role'),
    'none to a table they may not read',
  );
  expectProblem(t, await analyst.api('GET', '/api/bi/app-relations?page=2'), 400, 'VALIDATION_FAILED', 'unknown parameter');
});

t.test('schema: tables, relations, aggregations, granularities, operators, limits', async (t) => {
  const res = expectStatus(await analyst.api('GET', '/api/bi/schema'), 200, 'schema');
  t.same(res.aggregations, ['count', 'countDistinct', 'sum', 'avg', 'min', 'max']);
  t.same(res.granularities, ['day', 'week', 'month', 'quarter', 'year']);
  t.ok(res.filterOperators.includes('contains') && res.filterOperators.includes('notSet'));
  t.match(res.limits, { maxRows: 10000, timeoutMs: 10000, maxJoinDepth: 3 });
  t.equal(res.tables.length, expectStatus(await analyst.api('GET', '/api/bi/app-tables'), 200, 'tables').total);
  t.ok(res.relations.length > 0);
});

t.test('database: the server version and the sizes of readable tables, by module', async (t) => {
  const res = expectStatus(await analyst.api('GET', '/api/bi/database'), 200, 'database');
  t.match(res.serverVersion, /^\d+/);
  const modules = res.modules.map((m: { module: string }) => m.module);
  t.ok(modules.includes('crm') && modules.includes('pm') && modules.includes('bi'));
  t.equal(
    res.totalBytes,
    res.modules.reduce((s: number, m: { bytes: number }) => s + m.bytes, 0),
  );
  for (const m of res.modules) {
    t.equal(
      m.bytes,
      m.tables.reduce((s: number, x: { bytes: number }) => s + x.bytes, 0),
      m.module,
    );
  }
  t.notOk(
    res.modules.some((m: { tables: { table: string }[] }) => m.tables.some((x) => x.table === 'Role')),
    'no table they may not read',
  );
  const biOnly = await bi.user();
  const small = expectStatus(await biOnly.api('GET', '/api/bi/database'), 200, 'bi only');
  t.notOk(small.modules.some((m: { module: string }) => m.module === 'crm'));
  expectProblem(t, await analyst.api('GET', '/api/bi/database?verbose=true'), 400, 'VALIDATION_FAILED', 'unknown parameter');
});

t.test('/api/auth/db still answers from the same kernel code', async (t) => {
  const res = expectStatus(await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/db' }), 200, 'auth/db');
  t.equal(res.scope, 'tenant');
  t.ok(res.schemas[0].tables.length > 0);
});

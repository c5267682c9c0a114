// Demo data: every shipped module's plugins/<module>/demo-data.json goes in
// through the scoped data access (validation, hooks, derived fields, audit), so
// a first start shows no empty list, and the demo team can log in; a reference
// to an unknown "$key" fails.
import t from 'tap';
import { build } from '../helper.ts';
import { seedDemoRows, seedModuleDemoData } from '../../core/demo-data.ts';
import { SYSTEM } from '../../core/access/principal.ts';
import { expectStatus } from '../plugins/crm/crm-api.ts';

const ctx = await build(t);
/** The tenant's first administrator, whom demo rows name as "$admin". */
const adminOf = async (tenant: { id: string; companyId: string; adminEmail: string }) => {
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  return (await sys.data('User').find({ email: tenant.adminEmail }))[0].id as string;
};

t.test("every module's list answers rows after seeding", async (t) => {
  const tenant = await ctx.tenant();
  const admin = await adminOf(tenant);
  const written = await seedModuleDemoData(ctx.kernel, tenant.id, tenant.companyId, admin);
  const memberships = expectStatus(await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/pm/tasks?assigneeId=me` }), 200, 'my tasks');
  t.ok(memberships.total > 0, '"$admin" names the tenant\'s administrator: tasks are assigned to them');
  t.ok(written.core > 0 && written.catalog > 0 && written.crm > 0, `rows per module: ${JSON.stringify(written)}`);
  const api = (url: string) => ctx.as(tenant.adminToken, { method: 'GET', url });
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  // each list route of every module whose rows a create makes (uploads, logs, deliveries and notices come from
  // module code and events, not from demo rows); a nested list (a project's members) counts its entity's rows
  for (const module of ctx.kernel.modules) {
    for (const route of module.manifest.routes ?? []) {
      if (!('entity' in route) || !route.entity || ('operations' in route && route.operations && !(route.operations.includes('list') && route.operations.includes('create')))) continue;
      if (route.path.includes(':')) {
        t.ok((await sys.data(route.entity).count()) > 0, `${route.entity} (${route.path}) has rows`);
        continue;
      }
      const list = expectStatus(await api(`${route.path}?size=1`), 200, route.path);
      t.ok(list.total > 0, `${route.path}: ${list.total} rows`);
    }
  }
  const webhooks = expectStatus(await api('/api/webhooks'), 200, 'webhooks').items as { url: string; active: boolean }[];
  t.ok(
    webhooks.every((w) => !w.active && new URL(w.url).hostname.endsWith('.example')),
    'a demo webhook points at an example address and is inactive: the server never calls out',
  );
  const mail = expectStatus(await api('/api/emails'), 200, 'e-mail accounts').items as { host: string; isActive: boolean }[];
  t.ok(
    mail.every((m) => !m.isActive && m.host.endsWith('.example')),
    'a demo mail account names an example host and is inactive',
  );
});

t.test('the demo team can log in, holds a role and a company, and can be assigned', async (t) => {
  const tenant = await ctx.tenant();
  await seedModuleDemoData(ctx.kernel, tenant.id, tenant.companyId, await adminOf(tenant));
  const api = (url: string) => ctx.as(tenant.adminToken, { method: 'GET', url });
  const users = expectStatus(await api('/api/users?size=100'), 200, 'users').items as { id: string; email: string }[];
  const team = users.filter((u) => u.email !== tenant.adminEmail);
  t.ok(team.length >= 3, `the team: ${team.map((u) => u.email).join(', ')}`);
  let assigned = 0;
  for (const user of team) {
    const login = await ctx.login(tenant.id, user.email, 'plinth-demo');
    t.equal(login.statusCode, 200, `${user.email} logs in with the demo password`);
    const roles = expectStatus(await api(`/api/users/${user.id}/roles`), 200, `${user.email} roles`);
    t.ok(roles.items.length > 0, `${user.email} holds a role`);
    const companies = expectStatus(await api(`/api/users/${user.id}/companies`), 200, `${user.email} companies`);
    t.ok(
      companies.items.some((c: { id?: string; companyId?: string }) => (c.companyId ?? c.id) === tenant.companyId),
      `${user.email} belongs to the company`,
    );
    const token = login.json().accessToken as string;
    assigned += expectStatus(await ctx.as(token, { method: 'GET', url: '/api/pm/tasks?assigneeId=me&size=1' }), 200, `${user.email} lists their tasks`).total;
  }
  t.ok(assigned > 0, 'tasks are assigned to the team, who see them as theirs');
});

t.test('a quote with lines: totals computed as for an API write', async (t) => {
  const tenant = await ctx.tenant();
  await seedModuleDemoData(ctx.kernel, tenant.id, tenant.companyId, await adminOf(tenant));
  const api = (url: string) => ctx.as(tenant.adminToken, { method: 'GET', url });
  const quotes = expectStatus(await api('/api/crm/quotes?sort=number'), 200, 'quotes').items;
  t.ok(quotes.length >= 2);
  for (const quote of quotes) {
    const lines = expectStatus(await api(`/api/crm/quotes/${quote.id}/lines`), 200, 'lines').items as { lineTotal: string }[];
    t.ok(lines.length > 0, `${quote.number} has lines`);
    const sum = lines.reduce((cents, l) => cents + Math.round(Number(l.lineTotal) * 100), 0);
    t.equal(Math.round(Number(quote.total) * 100), sum, `${quote.number}: total is the sum of its lines`);
  }
  const contacts = expectStatus(await api('/api/crm/contacts'), 200, 'contacts').items as { customerId: string }[];
  const customers = new Set((expectStatus(await api('/api/crm/customers?size=100'), 200, 'customers').items as { id: string }[]).map((c) => c.id));
  t.ok(
    contacts.every((c) => customers.has(c.customerId)),
    'references resolve to rows of the same company',
  );
  const log = expectStatus(await api('/api/crm/activity-logs?size=1'), 200, 'activity log');
  t.ok(log.total > 0, 'audited entities recorded their creation');
});

t.test('a reference to a key no earlier row defines fails, naming it', async (t) => {
  const tenant = await ctx.tenant();
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  await t.rejects(seedDemoRows(ctx.kernel, sys, { Product: [{ sku: 'X-1', name: 'x', price: '1.00', categoryId: '$nowhere' }] }, new Map(), 'test.json'), /Product\.categoryId names \$nowhere/);
  await t.rejects(
    seedDemoRows(ctx.kernel, sys, { Product: [{ sku: 'X-2', name: 'x', price: '-1.00' }] }, new Map(), 'test.json'),
    { code: 'VALIDATION_FAILED' },
    'rows meet the checks API input meets',
  );
  const keys = new Map<string, string>();
  t.equal(await seedDemoRows(ctx.kernel, sys, { Category: [{ $key: 'c', name: 'C' }], Product: [{ sku: 'X-3', name: 'x', price: '1.00', categoryId: '$c' }] }, keys, 'test.json'), 2);
  t.ok(keys.get('c'), 'a $key names the row it was written as');
});

t.test('a reference may $find exactly one row by its values', async (t) => {
  const tenant = await ctx.tenant();
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  const keys = new Map<string, string>();
  await seedDemoRows(ctx.kernel, sys, { Category: [{ $key: 'top', name: 'Top' }, { name: 'Child', parentId: '$top' }, { name: 'Other' }] }, keys, 'test.json');
  const rows = { Product: [{ sku: 'F-1', name: 'found', price: '1.00', categoryId: { $find: { parentId: '$top' } } }] };
  t.equal(await seedDemoRows(ctx.kernel, sys, rows, keys, 'test.json'), 1);
  const product = (await sys.data('Product').find({ sku: 'F-1' }))[0];
  t.equal(product.categoryId, (await sys.data('Category').find({ parentId: keys.get('top') }))[0].id, 'the one row meeting the values');
  const many = { Product: [{ sku: 'F-2', name: 'x', price: '1.00', categoryId: { $find: { parentId: null } } }] };
  await t.rejects(seedDemoRows(ctx.kernel, sys, many, keys, 'test.json'), /finds 2 Category rows/, 'more than one is an error');
  const none = { Product: [{ sku: 'F-3', name: 'x', price: '1.00', categoryId: { $find: { parentId: product.id } } }] };
  await t.rejects(seedDemoRows(ctx.kernel, sys, none, keys, 'test.json'), /finds 0 Category rows/, 'none is an error');
});

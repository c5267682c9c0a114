// A change of a role's codes takes effect at once in the process that wrote it
// and, on a shared server, in every other process (two kernels here), not when
// their role cache expires, also after the listening connection was down.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';
import { RoleChanges } from '../../../core/access/role-changes.ts';
import type { Databases } from '../../../core/db/databases.ts';
import type { PgListener } from '../../../core/db/pg-listener.ts';

const CATALOG_VIEW = 'erp:catalog:view';

t.test('in the process that wrote it', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();
  const user = await ctx.user(tenant, { codes: [CATALOG_VIEW] });
  const list = () => ctx.as(user.token, { method: 'GET', url: '/api/products' });
  t.equal((await list()).statusCode, 200, 'the role grants the list');
  const role = (await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/users/${user.id}/roles` })).json().items[0];
  const cut = await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/roles/${role.id}`, payload: { permissions: [] } });
  t.equal(cut.statusCode, 200, cut.body);
  const refused = await list();
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().code, 'FORBIDDEN');
});

t.test('in another process on the same server', { skip: onPglite && 'embedded PGlite serves one process' }, async (t) => {
  const one = await build(t);
  const two = await build(t);
  const tenant = await one.tenant();
  const user = await one.user(tenant, { codes: [CATALOG_VIEW] });
  const listOnTwo = () => two.as(user.token, { method: 'GET', url: '/api/products' });
  t.equal((await listOnTwo()).statusCode, 200, 'the other process has the role cached');
  const role = (await one.as(tenant.adminToken, { method: 'GET', url: `/api/users/${user.id}/roles` })).json().items[0];
  t.equal((await one.as(tenant.adminToken, { method: 'PATCH', url: `/api/roles/${role.id}`, payload: { permissions: [] } })).statusCode, 200);
  let status = 200;
  for (let waited = 0; waited < 2000 && status === 200; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
    status = (await listOnTwo()).statusCode;
  }
  t.equal(status, 403, 'refused there within 2 s');
  t.equal((await one.as(tenant.adminToken, { method: 'PATCH', url: `/api/roles/${role.id}`, payload: { permissions: [CATALOG_VIEW] } })).statusCode, 200);
  for (let waited = 0; waited < 2000 && status !== 200; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
    status = (await listOnTwo()).statusCode;
  }
  t.equal(status, 200, 'and granted again there within 2 s');
});

t.test('after the listening connection was down, every tenant’s roles are read again', async (t) => {
  const roles = new RoleChanges({ embedded: true } as Databases, 'platform');
  const seen: (string | null)[] = [];
  roles.subscribe((tenantId) => seen.push(tenantId));
  let reconnected: () => void = () => undefined;
  let notify: (payload: string) => void = () => undefined;
  const listener = { on: (_: string, fn: (p: string) => void) => void (notify = fn), onReconnect: (fn: () => void) => void (reconnected = fn) } as unknown as PgListener;
  roles.listenOn(listener);
  notify('acme');
  t.same(seen, ['acme'], 'a notification names its tenant');
  reconnected();
  t.same(seen, ['acme', null], 'a reconnect (notifications may have been lost) drops every tenant');
});

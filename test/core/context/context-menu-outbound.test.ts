// Two module-SDK capabilities: ctx.menu() lists the loaded modules' menu
// entries whose pages open for the principal: their permission code, and full
// access where the page's route needs it (every entry for the system and for
// administrators), and ctx.http.postJson's per-call timeout shortens the
// kernel's timeout, never lengthens it.
import t from 'tap';
import { build } from '../../helper.ts';
import { SYSTEM, type Principal } from '../../../core/access/principal.ts';
import { ADMIN_ROLE } from '../../../core/access/role-directory.ts';
import { startReceiver } from '../../support/receiver.ts';

const ctx = await build(t, { config: { outbound: { allowPrivate: true, timeoutMs: 1500, maxResponseBytes: 4096 } } });
const tenant = await ctx.tenant();
const allEntries = ctx.kernel.modules.flatMap((m) => (m.manifest.menu ?? []).map((e) => ({ module: m.manifest.id, path: e.path, permission: e.permission })));

const contextOf = async (roles: string[]) => {
  const principal: Principal = { kind: 'user', id: null, roles, companyIds: [tenant.companyId] };
  return ctx.kernel.contextFor({ tenant: tenant.id, principal, companyId: tenant.companyId });
};

t.test('menu: the entries of the codes the principal holds, in load order', async (t) => {
  t.ok(allEntries.length > 5, 'the loaded modules have menus');
  const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM });
  t.same(
    (await system.menu()).map((e) => e.path),
    allEntries.map((e) => e.path),
    'the system: every entry',
  );
  const admin = await contextOf([ADMIN_ROLE]);
  t.equal((await admin.menu()).length, allEntries.length, 'an administrator: every entry');
  const role = 'pm-viewer';
  await ctx.user(tenant, { codes: ['erp:pm:view'], role });
  const pm = await (await contextOf([role])).menu();
  t.ok(pm.length > 0);
  t.same(
    pm.map((e) => e.path),
    allEntries.filter((e) => e.permission === 'erp:pm:view').map((e) => e.path),
    'only erp:pm:view entries',
  );
  t.match(pm[0], { module: 'pm', label: String, path: /^\/pm\//, permission: 'erp:pm:view' });
  t.same(await (await contextOf([])).menu(), [], 'no role, no entries');
  // the codes of pages whose routes need full access: their entries stay out, as in GET /api/meta
  await ctx.user(tenant, { codes: ['core:company:view', 'core:dashboard:view', 'core:organization:view'], role: 'clerk' });
  t.same(
    (await (await contextOf(['clerk'])).menu()).map((e) => e.path),
    ['/organizations'],
    'no Companies, no Dashboard without full access',
  );
});

t.test('postJson: a per-call timeout shorter than the kernel one applies; a longer one does not', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  receiver.delay = () => 800;
  const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM });
  const started = Date.now();
  await t.rejects(system.http.postJson(receiver.url, '{}', {}, { timeoutMs: 200 }), { code: 'TIMEOUT' }, 'the shorter timeout');
  t.ok(Date.now() - started < 700, 'gave up before the answer');
  const ok = await system.http.postJson(receiver.url, '{}', {}, { timeoutMs: 60_000 });
  t.equal(ok.status, 200, 'a longer one is the kernel one, and the answer came within it');
  receiver.delay = () => 2500;
  await t.rejects(system.http.postJson(receiver.url, '{}', {}, { timeoutMs: 60_000 }), { code: 'TIMEOUT' }, 'never longer than the kernel timeout (1.5 s)');
  await new Promise((resolve) => setTimeout(resolve, 1100));
});

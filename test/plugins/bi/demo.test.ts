// The demo application: seeded with the other modules' demo data, every
// widget's query (its own or a saved one) runs for the demo administrator and
// answers rows.
import t from 'tap';
import { build } from '../../helper.ts';
import { seedModuleDemoData } from '../../../core/demo-data.ts';
import { SYSTEM } from '../../../core/plugin-api.ts';
import { apiAs } from '../core/core-api.ts';
import { expectStatus } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const admin = (await sys.data('User').find({ email: tenant.adminEmail }))[0].id as string;
await seedModuleDemoData(ctx.kernel, tenant.id, tenant.companyId, admin);
const api = apiAs(ctx, tenant.adminToken);

t.test('every widget of the demo application answers', async (t) => {
  const apps = expectStatus(await api('GET', '/api/bi/apps'), 200, 'apps').items;
  t.same(
    apps.map((a: { name: string }) => a.name),
    ['Sales and delivery'],
  );
  const app = apps[0];
  const members = expectStatus(await api('GET', `/api/bi/apps/${app.id}/members`), 200, 'members').items;
  t.same(
    members.map((m: { userId: string; role: string }) => [m.userId, m.role]),
    [[admin, 'owner']],
  );
  const sheets = expectStatus(await api('GET', `/api/bi/apps/${app.id}/sheets`), 200, 'sheets').items;
  t.same(
    sheets.map((s: { name: string }) => s.name),
    ['Overview', 'Pipeline'],
  );
  const saved = new Map((expectStatus(await api('GET', `/api/bi/apps/${app.id}/queries`), 200, 'queries').items as { id: string; query: unknown }[]).map((q) => [q.id, q.query]));
  let charts = 0;
  for (const sheet of sheets) {
    const widgets = expectStatus(await api('GET', `/api/bi/sheets/${sheet.id}/widgets?size=100`), 200, 'widgets').items as { kind: string; title: string; query: unknown; queryId: string | null }[];
    for (const w of widgets.filter((x) => x.kind !== 'text')) {
      const query = w.query ?? saved.get(w.queryId!);
      const res = expectStatus(await api('POST', '/api/bi/analytics', query as object), 200, w.title);
      t.ok(res.rows.length > 0, `${w.title}: ${res.rows.length} rows`);
      charts++;
    }
  }
  t.ok(charts >= 7);
});

t.test('the open pipeline (EUR and GBP deals) is one figure per currency, never their sum', async (t) => {
  const [app] = expectStatus(await api('GET', '/api/bi/apps'), 200, 'apps').items;
  const [overview] = expectStatus(await api('GET', `/api/bi/apps/${app.id}/sheets?sort=position`), 200, 'sheets').items;
  const widgets = expectStatus(await api('GET', `/api/bi/sheets/${overview.id}/widgets?size=100`), 200, 'widgets').items as { id: string; title: string }[];
  const pipeline = widgets.find((w) => w.title === 'Open pipeline')!;
  const data = expectStatus(await api('GET', `/api/bi/sheets/${overview.id}/data`), 200, 'sheet data');
  const answer = data.widgets.find((w: { widgetId: string }) => w.widgetId === pipeline.id).data;
  t.same(answer.rows, [
    { currency: 'EUR', pipeline: '20450.00' },
    { currency: 'GBP', pipeline: '9200.00' },
  ]);
});

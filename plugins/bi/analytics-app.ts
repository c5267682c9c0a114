// The application an analytics query reads besides the tenant's entities
// (`app` in the address and in the query): the applications to choose from,
// the picker's groups for the tables an application adds (its data sources'
// tables, module "external"; its saved queries, module "queries"), and a
// saved query of it to start the builder from (?saved=<id>).
import type { PageApi } from '../../core/plugin-api.ts';
import type { BiTable } from './semantic-model.ts';
import type { Text } from './page-support.ts';

export interface AppChoice {
  id: string;
  name: string;
}

const MAX_APPS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The modules of the tables an application adds, by the key of their group's label in the module's texts. */
const APP_MODULES: Record<string, string> = { external: 'analytics.module.external', queries: 'analytics.module.queries' };

/** Whether `table` is one of an application's own (a widget or saved query reading it must belong to that application). */
export const appBound = (table: BiTable) => Object.hasOwn(APP_MODULES, table.module);

/**
 * The applications the caller reads (by name, the first MAX_APPS), and the one
 * `chosen` names: null for none, or for one they do not read (then `unknown`).
 */
export async function appsOf(api: PageApi, chosen: string): Promise<{ apps: AppChoice[]; app: AppChoice | null; unknown: boolean }> {
  const list = await api.get<{ items: AppChoice[] }>(`/api/bi/apps?sort=name&size=${MAX_APPS}&fields=name`);
  const apps = (list.ok ? list.body.items : []).map((a) => ({ id: a.id, name: a.name }));
  if (!chosen) return { apps, app: null, unknown: false };
  let app = apps.find((a) => a.id === chosen) ?? null;
  // one beyond the first MAX_APPS is still offered once chosen
  if (!app && UUID.test(chosen)) {
    const res = await api.get<AppChoice>(`/api/bi/apps/${chosen}`);
    if (res.ok) apps.push((app = { id: res.body.id, name: res.body.name }));
  }
  return { apps, app, unknown: app === null };
}

/** The table picker: tables by module, module names from the API's model, an application's own tables under their group's label. */
export async function tableGroups(api: PageApi, tables: BiTable[], current: string, app: AppChoice | null, text: Text) {
  const meta = await api.get<{ modules: { id: string; name: string }[] }>('/api/meta');
  const names = new Map((meta.ok ? meta.body.modules : []).map((m) => [m.id, m.name]));
  const modules = [...new Set(tables.map((t) => t.module))];
  const label = (t: BiTable) => (t.source ? text('analytics.sourceTable', { source: t.source, table: t.label }) : t.label);
  return modules.map((m) => ({
    label: Object.hasOwn(APP_MODULES, m) ? text(APP_MODULES[m], { app: app?.name ?? '' }) : (names.get(m) ?? m),
    options: tables
      .filter((t) => t.module === m)
      .map((t) => ({ value: t.name, label: label(t), selected: t.name === current }))
      .sort((a, b) => a.label.localeCompare(b.label)),
  }));
}

/** Saved query `id` of application `app`, or null when the caller cannot read it there. */
export async function savedQuery(api: PageApi, app: AppChoice, id: string): Promise<{ name: string; query: Record<string, unknown> } | null> {
  if (!UUID.test(id)) return null;
  const res = await api.get<{ appId: string; name: string; query: Record<string, unknown> }>(`/api/bi/apps/${app.id}/queries/${id}`);
  return res.ok && res.body.appId === app.id ? { name: res.body.name, query: res.body.query } : null;
}

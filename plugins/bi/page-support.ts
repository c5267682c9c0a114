// Whether the caller may change an application's sheets and widgets, as far
// as the API tells it: which edit controls a BI page shows (the console never
// decides access: the API still refuses what it must, and the scripts show
// that refusal).
import type { PageApi } from '../../core/plugin-api.ts';

interface Meta {
  entities: { name: string; actions: string[] }[];
}

/**
 * Whether the caller may change `entity` rows (BiSheet, BiWidget) of application
 * `appId`: the API's model must grant the action at all, and a member of the
 * application must not be listed as a viewer. A non-member who reads the
 * application holds a wider grant (BI administration). A refusal the API
 * still answers (403) is shown by the page's script when it saves.
 */
export async function mayChange(api: PageApi, appId: string, entity: 'BiSheet' | 'BiWidget', actions: string[] = ['update']): Promise<boolean> {
  const [me, meta] = await Promise.all([api.get<{ id: string }>('/api/auth/me'), api.get<Meta>('/api/meta')]);
  if (!me.ok || !meta.ok) return false;
  const allowed = meta.body.entities.find((e) => e.name === entity)?.actions ?? [];
  if (!actions.every((a) => allowed.includes(a))) return false;
  const member = await api.get<{ items: { role: string }[] }>(`/api/bi/apps/${appId}/members?userId=${encodeURIComponent(me.body.id)}&size=1`);
  if (!member.ok) return true;
  return member.body.items[0]?.role !== 'viewer';
}

// The pages (sheets) of a BI application, /bi/apps/:id/sheets, linked from the
// application's detail page: each with a link to its dashboard, in the order
// of their positions. Editors add a page, reorder them (PUT
// /api/bi/apps/:id/sheet-order) and delete one through assets/sheets.js.
import type { ConsolePage } from '../../core/plugin-api.ts';
import { required, scriptJson } from '../../core/plugin-api.ts';
import { mayChange } from './page-support.ts';

interface Sheet {
  id: string;
  name: string;
  description: string | null;
  position: number;
  version: number;
}

const NOTICES: Record<string, string> = { created: 'Page added.', deleted: 'Page deleted.' };

export const sheetsPage: ConsolePage = {
  view: new URL('./views/sheets.hbs', import.meta.url),
  title: 'Pages',
  async load(api, query, params) {
    const appId = params.id;
    const app = required(await api.get<{ id: string; name: string }>(`/api/bi/apps/${encodeURIComponent(appId)}`));
    const [list, canEdit] = await Promise.all([
      api.get<{ items: Sheet[]; total: number }>(`/api/bi/apps/${app.id}/sheets?sort=position,name&size=500`).then(required),
      mayChange(api, app.id, 'BiSheet', ['create', 'update', 'delete']),
    ]);
    const base = `/bi/apps/${app.id}`;
    const sheets = list.items.map((s, i) => ({
      id: s.id,
      name: s.name,
      description: s.description ?? '',
      number: i + 1,
      url: `${base}/sheets/${s.id}`,
      first: i === 0,
      last: i === list.items.length - 1,
    }));
    return {
      app: { id: app.id, name: app.name, url: base },
      sheets,
      truncated: list.total > list.items.length,
      canEdit,
      notice: NOTICES[query.notice ?? ''] ?? null,
      json: scriptJson({ appId: app.id, sheets: list.items.map((s) => ({ id: s.id, name: s.name, version: s.version })) }),
    };
  },
};

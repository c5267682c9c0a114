// The pages (sheets) of a BI application, /bi/apps/:id/sheets, linked from the
// application's detail page and beside its data (data-page.ts): each with a
// link to its dashboard, in the order of their positions. Editors add a page,
// reorder them (PUT /api/bi/apps/:id/sheet-order) and delete one through
// assets/sheets.js.
import type { ConsolePage } from '../../core/plugin-api.ts';
import { required, scriptJson } from '../../core/plugin-api.ts';
import { mayChange, scriptTexts } from './page-support.ts';

interface Sheet {
  id: string;
  name: string;
  description: string | null;
  position: number;
  version: number;
}

/** the notices the script's redirects ask for (?notice=created), by their texts' keys */
const NOTICES: Record<string, string> = { created: 'sheets.added', deleted: 'sheets.deleted' };
const MAX_SHEETS = 500;

export const sheetsPage: ConsolePage = {
  view: new URL('./views/sheets.hbs', import.meta.url),
  title: 'Pages',
  async load(api, query, params) {
    const appId = params.id;
    const app = required(await api.get<{ id: string; name: string }>(`/api/bi/apps/${encodeURIComponent(appId)}`));
    const [list, canEdit] = await Promise.all([
      api.get<{ items: Sheet[]; total: number }>(`/api/bi/apps/${app.id}/sheets?sort=position,name&size=${MAX_SHEETS}`).then(required),
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
      app: { id: app.id, name: app.name, url: base, sheetsUrl: `${base}/sheets`, dataUrl: `${base}/data` },
      sheets,
      truncated: list.total > list.items.length,
      maxSheets: MAX_SHEETS,
      canEdit,
      notice: query.notice && Object.hasOwn(NOTICES, query.notice) ? api.text(NOTICES[query.notice]) : null,
      json: scriptJson({ appId: app.id, sheets: list.items.map((s) => ({ id: s.id, name: s.name, version: s.version })) }),
      texts: scriptTexts(api, ['sheetsScript', 'scripts']),
    };
  },
};

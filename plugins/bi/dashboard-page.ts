// A sheet's dashboard, /bi/apps/:id/sheets/:sheetId: its widgets on the
// 12-column grid (GET /api/bi/sheets/:id/widgets) with the data of all of
// them from one call (GET /api/bi/sheets/:id/data). Numbers, tables and texts
// are drawn here; charts by assets/dashboard.js with ECharts, which also lets
// editors move and resize widgets and saves the layout in one call;
// assets/dashboard-edit.js lets them rename and remove a widget.
import type { ConsolePage } from '../../core/plugin-api.ts';
import { pageError, required, scriptJson } from '../../core/plugin-api.ts';
import { mayChange, scriptTexts } from './page-support.ts';
import { widgetView, type Widget, type WidgetData } from './widget-view.ts';

interface Sheet {
  id: string;
  appId: string;
  name: string;
  description: string | null;
}

const MAX_WIDGETS = 500;

/** a widget as the API lists it: its version goes back as If-Match when the page renames or removes it */
type Row = Widget & { version: number };

export const dashboardPage: ConsolePage = {
  view: new URL('./views/dashboard.hbs', import.meta.url),
  title: 'Dashboard',
  async load(api, _query, params) {
    const app = required(await api.get<{ id: string; name: string }>(`/api/bi/apps/${encodeURIComponent(params.id)}`));
    const sheet = required(await api.get<Sheet>(`/api/bi/apps/${app.id}/sheets/${encodeURIComponent(params.sheetId)}`));
    // a sheet named under another application's path is no page of this one
    if (sheet.appId !== app.id) throw pageError(404, api.text('common.notFound'));
    const [sheets, widgets, data, editable] = await Promise.all([
      api.get<{ items: Sheet[] }>(`/api/bi/apps/${app.id}/sheets?sort=position,name&size=500`).then(required),
      api.get<{ items: Row[] }>(`/api/bi/sheets/${sheet.id}/widgets?size=${MAX_WIDGETS}`).then(required),
      api.get<{ widgets: WidgetData[] }>(`/api/bi/sheets/${sheet.id}/data`).then(required),
      mayChange(api, app.id, 'BiWidget'),
    ]);
    const answers = new Map(data.widgets.map((d) => [d.widgetId, d]));
    // reading order: top to bottom, left to right (the grid's order for keyboards and screen readers)
    const ordered = [...widgets.items].sort((a, b) => a.y - b.y || a.x - b.x);
    const base = `/bi/apps/${app.id}`;
    return {
      app: { name: app.name, url: base, sheetsUrl: `${base}/sheets` },
      sheet: { name: sheet.name, description: sheet.description ?? '' },
      tabs: sheets.items.map((s) => ({ name: s.name, url: `${base}/sheets/${s.id}`, current: s.id === sheet.id })),
      widgets: ordered.map((w) => widgetView(w, answers.get(w.id), (key, values) => api.text(key, values))),
      editable,
      json: scriptJson({
        sheetId: sheet.id,
        editable,
        widgets: ordered.map((w) => {
          const d = answers.get(w.id)?.data;
          return {
            id: w.id,
            version: w.version,
            kind: w.kind,
            chartType: w.chartType,
            chart: w.chart ?? {},
            ...(w.kind === 'chart' && d ? { columns: d.columns, rows: d.rows } : {}),
          };
        }),
      }),
      texts: scriptTexts(api, ['dashboardScript', 'scripts', 'chart']),
    };
  },
};

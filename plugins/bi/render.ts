// GET /api/bi/sheets/:id/data: the data of every widget of a sheet in one
// call, for the dashboard. Widget queries run concurrently, at most
// BI_RENDER_CONCURRENCY at once (default 4) so one dashboard cannot take every
// pooled connection, and identical queries (two widgets over the same groups)
// run once. A widget whose query fails (a table the caller may not read, a
// timeout) carries its own problem; the others still render.
import pLimit from 'p-limit';
import { handler, titleOf, Type, type ErrorCode, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { answer, Result } from './analytics.ts';
import { tablesOf } from './semantic-model.ts';

const DEFAULT_CONCURRENCY = 4;

function concurrency(): number {
  const n = Number(process.env.BI_RENDER_CONCURRENCY);
  return Number.isInteger(n) && n >= 1 && n <= 32 ? n : DEFAULT_CONCURRENCY;
}

const WidgetProblem = Type.Object(
  {
    status: Type.Integer(),
    code: Type.String(),
    title: Type.String(),
    detail: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }, { additionalProperties: false }))),
  },
  { additionalProperties: false, description: 'why this widget has no data (RFC 9457 fields); the other widgets are unaffected' },
);

const WidgetData = Type.Object(
  {
    widgetId: Type.String({ format: 'uuid' }),
    kind: Type.String(),
    data: Type.Optional(Result),
    problem: Type.Optional(WidgetProblem),
  },
  { additionalProperties: false, description: 'a widget and its data; a text widget has neither data nor problem' },
);

interface HttpProblem {
  statusCode: number;
  code: ErrorCode;
  message: string;
  errors?: { path: string; message: string }[];
}
const isHttpProblem = (err: unknown): err is HttpProblem => typeof (err as HttpProblem)?.statusCode === 'number' && (err as HttpProblem).statusCode < 500;

/** Each widget's query: a saved one of the application wins over its own. */
async function queriesOf(ctx: ModuleContext, widgets: Row[]): Promise<Map<string, unknown>> {
  const savedIds = [...new Set(widgets.flatMap((w) => (w.queryId ? [w.queryId as string] : [])))];
  const saved = savedIds.length ? await ctx.data('BiQuery').find({ id: { $in: savedIds } }, { limit: savedIds.length }) : [];
  const byId = new Map(saved.map((q) => [q.id as string, q.query]));
  return new Map(widgets.flatMap((w) => (w.kind === 'text' ? [] : [[w.id as string, w.queryId ? byId.get(w.queryId as string) : w.query]])));
}

export const getSheetData = handler(
  {
    params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
    response: {
      200: Type.Object(
        { sheetId: Type.String({ format: 'uuid' }), widgets: Type.Array(WidgetData) },
        { additionalProperties: false, description: 'Every widget of the sheet with its data, in layout order' },
      ),
    },
  },
  async (ctx, request) => {
    const sheetId = request.params.id;
    const sheet = await ctx.data('BiSheet').read(sheetId);
    const widgets = await ctx.data('BiWidget').find({ sheetId }, { limit: 500, orderBy: 'y,x' });
    const queries = await queriesOf(ctx, widgets);
    const tables = tablesOf(ctx);
    const limit = pLimit(concurrency());
    const running = new Map<string, ReturnType<typeof answer>>();
    const dataOf = (query: unknown) => {
      const key = JSON.stringify(query);
      let p = running.get(key);
      // a widget's query reads the data sources of its sheet's application
      if (!p) running.set(key, (p = limit(() => answer(ctx, query, { tables, app: sheet.appId as string }))));
      return p;
    };
    const out = await Promise.all(
      widgets.map(async (w) => {
        const base = { widgetId: w.id as string, kind: w.kind as string };
        if (!queries.has(base.widgetId)) return base;
        const query = queries.get(base.widgetId);
        // a saved query the caller can no longer read (it was deleted meanwhile)
        if (query === undefined) return { ...base, problem: { status: 404, code: 'NOT_FOUND', title: titleOf('NOT_FOUND'), detail: 'the saved query of this widget is gone' } };
        try {
          return { ...base, data: await dataOf(query) };
        } catch (err) {
          if (!isHttpProblem(err)) throw err;
          return { ...base, problem: { status: err.statusCode, code: err.code, title: titleOf(err.code), detail: err.message, ...(err.errors ? { errors: err.errors } : {}) } };
        }
      }),
    );
    return { sheetId, widgets: out };
  },
);

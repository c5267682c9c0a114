// Widgets on a sheet's 12-column grid. A new widget takes the left of the
// first free row below the others (x and y are the layout's: read-only in a
// widget's body); its width and height are its own. Every write keeps the grid
// sound: inside it (x + w <= 12) and over no other widget of the sheet. A chart
// names its chart type; a chart, number or table has a query (its own, whose
// shape the manifest's JSON Schema checks, or a saved query of the same
// application, which wins when both are given). PUT /api/bi/sheets/:id/layout
// moves every widget of a sheet in one call (the drag-and-drop dashboard),
// checked as a whole, since widgets may overlap while they move one by one.
//
// Locks, in one order everywhere (two writers taking them in opposite orders
// deadlock): the widget rows a write changes, in id order, then their sheet's
// row. The kernel takes them so in one write of a widget (the row, then the
// parent its path names); a create has no widget row yet and locks the sheet
// first; the layout call locks every widget of the sheet before the sheet. The
// sheet's row lock is its layout's lock: each write of its widgets holds it
// while it places or checks them. The kernel runs a transaction that still
// loses a deadlock again (a sheet deleted with its widgets locks them after it).
import { lockInIdOrder } from './sheets.ts';
import { handler, httpError, Type, validationError, type EntityHooks, type ModuleContext, type Row } from '../../core/plugin-api.ts';

const COLUMNS = 12;
const LAYOUT = 'bi:layout';

interface Box {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

const overlaps = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const unprocessable = (path: string, message: string) => httpError('UNPROCESSABLE', `${path} ${message}`, { errors: [{ path, message }] });

/** Problems of one layout: widgets outside the grid (400) or on top of each other (422), by index. */
function checkLayout(boxes: Box[], at: (i: number) => string): void {
  const outside = boxes.flatMap((b, i) => (b.x + b.w > COLUMNS ? [{ path: `${at(i)}/w`, message: `x + w is at most ${COLUMNS} (the grid's columns)` }] : []));
  if (outside.length) throw validationError(outside);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      if (overlaps(boxes[i], boxes[j])) throw unprocessable(at(j), `overlaps widget ${boxes[i].id}`);
    }
  }
}

async function checkContent(ctx: ModuleContext, row: Row): Promise<void> {
  if (row.kind === 'chart' && !row.chartType) throw validationError([{ path: '/chartType', message: 'a chart names its chart type' }]);
  if (row.kind === 'text') return;
  if (!row.query && !row.queryId) throw validationError([{ path: '/query', message: `a ${row.kind} widget needs a query or a saved query (queryId)` }]);
  if (!row.queryId) return;
  // a saved query of the sheet's own application: the system's view, since the reference check already
  // proved the caller may read the query
  const sys = ctx.system();
  const [sheet] = await sys.data('BiSheet').find({ id: row.sheetId }, { limit: 1 });
  if (!(await sys.data('BiQuery').count({ id: row.queryId, appId: sheet?.appId }))) {
    throw validationError([{ path: '/queryId', message: 'is a saved query of this application' }]);
  }
}

export const widgetHooks: EntityHooks = {
  problems: { create: ['UNPROCESSABLE'], update: ['UNPROCESSABLE'] },
  // a new widget: the left of the first free row below every other widget of its sheet
  async beforeWrite(ctx, { op, input, parents }) {
    if (op !== 'create' || typeof parents?.sheetId !== 'string') return;
    await ctx.data('BiSheet').lock(parents.sheetId);
    const others = (await ctx.system().data('BiWidget').find({ sheetId: parents.sheetId }, { limit: 1000 })) as unknown as Box[];
    return { ...input, x: 0, y: others.reduce((bottom, o) => Math.max(bottom, o.y + o.h), 0) };
  },
  async afterWrite(ctx, { op, after }) {
    if (op === 'delete' || !after) return;
    await checkContent(ctx, after);
    if (op === 'create' || ctx.transactionState?.get(LAYOUT) === after.sheetId) return;
    // held already (the kernel locked the widget's sheet before writing it): the grid is checked under it
    await ctx.data('BiSheet').lock(after.sheetId as string);
    const others = (await ctx
      .system()
      .data('BiWidget')
      .find({ sheetId: after.sheetId, id: { $ne: after.id } }, { limit: 1000 })) as unknown as Box[];
    const me = after as unknown as Box;
    if (me.x + me.w > COLUMNS) throw validationError([{ path: '/w', message: `x + w is at most ${COLUMNS} (the grid's columns): move the widget left first (PUT /api/bi/sheets/:id/layout)` }]);
    const hit = others.find((o) => overlaps(me, o));
    if (hit) throw unprocessable('/h', `the widget would overlap widget ${hit.id} on its sheet: save the whole layout (PUT /api/bi/sheets/:id/layout)`);
  },
};

const Id = Type.String({ format: 'uuid' });
const Cell = (max: number, min = 0) => Type.Integer({ minimum: min, maximum: max });

export const setSheetLayout = handler(
  {
    params: Type.Object({ id: Id }, { additionalProperties: false }),
    body: Type.Object(
      {
        widgets: Type.Record(Id, Type.Object({ x: Cell(COLUMNS - 1), y: Cell(10000), w: Cell(COLUMNS, 1), h: Cell(100, 1) }, { additionalProperties: false }), {
          maxProperties: 500,
          description: 'every widget of the sheet, by id: its place and size',
        }),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        { items: Type.Array(Type.Ref('BiWidget')), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() },
        { additionalProperties: false, description: 'The widgets of the sheet in their new places' },
      ),
    },
    problems: ['UNPROCESSABLE'],
  },
  async (ctx, request) => {
    const sheetId = request.params.id;
    const boxes = Object.entries(request.body.widgets).map(([id, b]) => ({ id, ...b }));
    const rows = await ctx.transaction(async (tx) => {
      // the widgets first, in id order, then the sheet (the order at the top); 404 for a sheet the caller cannot read
      await lockInIdOrder(tx, 'BiWidget', await tx.data('BiWidget').find({ sheetId }, { limit: 1000 }));
      await tx.data('BiSheet').lock(sheetId);
      // read again under the sheet's lock: a widget created meanwhile belongs to the layout too
      const current = await tx.data('BiWidget').find({ sheetId }, { limit: 1000 });
      const known = new Set(current.map((w) => w.id as string));
      const errors = boxes.flatMap((b) => (known.has(b.id) ? [] : [{ path: `/widgets/${b.id}`, message: 'is no widget of this sheet' }]));
      const named = new Set(boxes.map((b) => b.id));
      for (const w of current) if (!named.has(w.id as string)) errors.push({ path: '/widgets', message: `leaves out widget ${w.id}: name every widget of the sheet` });
      if (errors.length) throw validationError(errors);
      checkLayout(boxes, (i) => `/widgets/${boxes[i].id}`);
      tx.transactionState!.set(LAYOUT, sheetId);
      const out = [];
      for (const b of boxes) out.push(await tx.data('BiWidget').update(b.id, { w: b.w, h: b.h }, { set: { x: b.x, y: b.y } }));
      return out;
    });
    const items = rows.map((r) => ctx.data('BiWidget').toDto(r));
    return { items, page: 1, size: items.length, total: items.length };
  },
);

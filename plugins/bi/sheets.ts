// The sheets (pages) of an application keep an order: PUT
// /api/bi/apps/:id/sheet-order names every sheet once, in the new order, and
// their positions are rewritten in one transaction with the caller's rights.
// Locks in the order a single write of a sheet takes them (the sheet, then the
// application its path names): every sheet of the application, in id order,
// then the application, whose row lock keeps two orders from interleaving.
import { handler, Type, validationError, type ModuleContext, type Row } from '../../core/plugin-api.ts';

const Id = Type.String({ format: 'uuid' });

/**
 * Locks the rows of `entity` named by `rows`, in id order (so two callers locking overlapping sets never wait
 * on each other in a circle); a row deleted since it was listed is left out.
 */
export async function lockInIdOrder(ctx: ModuleContext, entity: string, rows: Row[]): Promise<void> {
  for (const id of rows.map((r) => r.id as string).sort()) {
    try {
      await ctx.data(entity).lock(id);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'NOT_FOUND') throw err;
    }
  }
}

export const setSheetOrder = handler(
  {
    params: Type.Object({ id: Id }, { additionalProperties: false }),
    body: Type.Object(
      { sheetIds: Type.Array(Id, { minItems: 1, maxItems: 500, uniqueItems: true, description: 'every sheet of the application, once, in the new order' }) },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        { items: Type.Array(Type.Ref('BiSheet')), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() },
        { additionalProperties: false, description: 'The sheets in their new order' },
      ),
    },
  },
  async (ctx, request) => {
    const { id } = request.params;
    const { sheetIds } = request.body;
    const rows = await ctx.transaction(async (tx) => {
      await lockInIdOrder(tx, 'BiSheet', await tx.data('BiSheet').find({ appId: id }, { limit: 1000 }));
      // 404 for an application the caller cannot read; then the sheets again, one created meanwhile among them
      await tx.data('BiApp').lock(id);
      const sheets = await tx.data('BiSheet').find({ appId: id }, { limit: 1000 });
      const known = new Set(sheets.map((s) => s.id as string));
      const errors = sheetIds.flatMap((s, i) => (known.has(s) ? [] : [{ path: `/sheetIds/${i}`, message: 'is no sheet of this application' }]));
      const named = new Set(sheetIds);
      for (const s of sheets) if (!named.has(s.id as string)) errors.push({ path: '/sheetIds', message: `leaves out sheet ${s.id}: name every sheet once` });
      if (errors.length) throw validationError(errors);
      const out = [];
      for (const [position, sheetId] of sheetIds.entries()) out.push(await tx.data('BiSheet').update(sheetId, { position }));
      return out;
    });
    const items = rows.map((r) => ctx.data('BiSheet').toDto(r));
    return { items, page: 1, size: items.length, total: items.length };
  },
);

// Saved queries: checked against the writer's semantic model when saved, as
// a widget's own query is (the tables and fields they may read); run later
// with the reader's rights, like every analytics query.
import type { EntityHooks } from '../../core/plugin-api.ts';
import { checkQuery } from './analytics.ts';

export const queryHooks: EntityHooks = {
  async beforeWrite(ctx, { op, input }) {
    if (op === 'delete' || input?.query === undefined) return;
    try {
      checkQuery(ctx, input.query, { fields: true });
    } catch (err) {
      for (const x of (err as { errors?: { path: string }[] }).errors ?? []) x.path = `/query${x.path}`;
      throw err;
    }
  },
};

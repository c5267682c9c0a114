// An activity belongs to something: a customer, a lead or an opportunity (the
// manifest can say "optional" per field, not "at least one of three").
import type { EntityHooks } from '../../core/plugin-api.ts';
import { httpError } from '../../core/plugin-api.ts';

const LINKS = ['customerId', 'leadId', 'opportunityId'];

export const activityHooks: EntityHooks = {
  async beforeWrite(request, { op, id, body }, kernel) {
    if (op === 'delete' || !body) return;
    let merged = body;
    if (op === 'update') {
      // an unknown id is the generic route's 404
      const row = await request.em!.findOne(kernel.model('Activity').schema, { id: id!, companyId: request.companyId } as never) as Record<string, unknown> | null;
      if (!row) return;
      merged = { ...Object.fromEntries(LINKS.map((f) => [f, row[f]])), ...body };
    }
    if (LINKS.every((f) => merged[f] === null || merged[f] === undefined)) {
      const errors = LINKS.map((f) => ({ path: `/${f}`, message: 'an activity needs a customer, a lead or an opportunity' }));
      throw httpError('VALIDATION_FAILED', 'an activity needs a customer, a lead or an opportunity', { errors });
    }
  },
};

// An activity belongs to something: a customer, a lead or an opportunity (the
// manifest can say "optional" per field, not "at least one of three").
import { validationError, type EntityHooks } from '../../core/plugin-api.ts';

const LINKS = ['customerId', 'leadId', 'opportunityId'];

export const activityHooks: EntityHooks = {
  async beforeWrite(_ctx, { op, input, before }) {
    if (op === 'delete' || !input) return;
    // a PATCH keeps the links it does not name
    const merged = op === 'update' && before ? { ...Object.fromEntries(LINKS.map((f) => [f, before[f]])), ...input } : input;
    if (LINKS.every((f) => merged[f] === null || merged[f] === undefined)) {
      throw validationError(LINKS.map((f) => ({ path: `/${f}`, message: 'an activity needs a customer, a lead or an opportunity' })));
    }
  },
};

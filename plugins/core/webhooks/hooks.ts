// Rules of every Webhook write: the event list names event types or patterns
// that match at least one event of the loaded modules, and the URL is one the
// kernel would call (no loopback or private address unless configured). A
// webhook switched back on starts with a clean failure record.
import { EVENT_PATTERN, validationError, type EntityHooks, type ModuleContext } from '../../../core/plugin-api.ts';

const PATTERN = new RegExp(EVENT_PATTERN);
const MAX_PATTERNS = 50;

function eventErrors(ctx: ModuleContext, value: unknown) {
  if (!Array.isArray(value) || value.length === 0) return [{ path: '/events', message: 'must be a non-empty list of event types or patterns ("crm.*", "*")' }];
  if (value.length > MAX_PATTERNS) return [{ path: '/events', message: `must hold at most ${MAX_PATTERNS} entries` }];
  return value.flatMap((p, i) => {
    const path = `/events/${i}`;
    if (typeof p !== 'string' || !PATTERN.test(p)) return [{ path, message: 'is no event type or pattern (module.entity.action, module.*, *)' }];
    if (!ctx.eventTypesMatching(p).length) return [{ path, message: `matches no event type of the loaded modules` }];
    return value.indexOf(p) === i ? [] : [{ path, message: 'is listed twice' }];
  });
}

export const webhookHooks: EntityHooks = {
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'delete' || !input) return;
    const errors = [];
    if (input.events !== undefined || op === 'create') errors.push(...eventErrors(ctx, input.events));
    if (typeof input.url === 'string') {
      const reason = ctx.http.checkUrl(input.url);
      if (reason) errors.push({ path: '/url', message: reason });
    }
    if (errors.length) throw validationError(errors);
    if (before && before.active === false && input.active === true) return { ...input, failureCount: 0, disabledReason: null };
  },
};

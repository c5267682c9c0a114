// Report definitions: the owner is whoever creates one (unless named); the type is one of
// the registry's and stays; parameters meet the type's schema; a schedule is
// a cron expression, and nextRunAt follows it (and the enabled flag) on the
// tenant's clock whenever either changes. An archived report is read-only
// (report-archive.ts archives and restores it).
import { handler, httpError, Type, validationError, type EntityHooks } from '../../core/plugin-api.ts';
import { parameterProblems, reportType, reportTypes } from './report-types.ts';
import { cronProblem, nextRunOf } from './schedule.ts';

export const reportHooks: EntityHooks = {
  problems: { update: ['STATE_LOCKED'] },
  async beforeWrite(ctx, { op, input = {}, before }) {
    if (op === 'delete') return;
    // archive and restore change nothing a body names (they set archived themselves)
    if (before?.archived && Object.keys(input).length) throw httpError('STATE_LOCKED', 'the report is archived: restore it first (POST /api/ai/reports/{id}/unarchive)');
    const out: Record<string, unknown> = { ...input };
    // the create grant decides whose reports one may make (erp:ai:view: one's own)
    if (!before) out.ownerId = input.ownerId ?? ctx.userId;
    if (!before && !out.ownerId) throw validationError([{ path: '/ownerId', message: 'a report needs an owner to run as' }]);
    if (before && input.ownerId !== undefined && input.ownerId !== before.ownerId) throw validationError([{ path: '/ownerId', message: 'a report keeps its owner' }]);
    const typeName = (input.type ?? before?.type) as string;
    if (before && input.type !== undefined && input.type !== before.type) throw validationError([{ path: '/type', message: 'a report keeps its type (create a new report)' }]);
    const type = reportType(typeName);
    if (!type)
      throw validationError([
        {
          path: '/type',
          message: `is no report type (known: ${reportTypes()
            .map((t) => t.name)
            .join(', ')})`,
        },
      ]);
    if (!before || input.parameters !== undefined) {
      const problems = parameterProblems(type, input.parameters);
      if (problems.length) throw validationError(problems);
    }
    const schedule = input.schedule !== undefined ? input.schedule : before?.schedule;
    const fault = typeof schedule === 'string' ? cronProblem(schedule) : null;
    if (fault) throw validationError([{ path: '/schedule', message: fault }]);
    if (!before || input.schedule !== undefined || input.enabled !== undefined) {
      const next = nextRunOf({ schedule, enabled: input.enabled ?? before?.enabled }, ctx.timeZone, ctx.now());
      out.nextRunAt = next?.toISOString() ?? null;
    }
    return out;
  },
};

export const listReportTypes = handler(
  {
    response: {
      200: Type.Object(
        {
          items: Type.Array(
            Type.Object(
              {
                name: Type.String({ description: 'the value of a report\'s "type"' }),
                title: Type.String(),
                description: Type.String(),
                parameters: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of its parameters' }),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: 'The report types, with their parameters' },
      ),
    },
  },
  async () => ({ items: reportTypes().map((t) => ({ name: t.name, title: t.title, description: t.description, parameters: t.parameters })) }),
);

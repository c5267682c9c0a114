// A report's history outlives it unless deleting it is meant: a report is
// archived (kept with its runs, read-only, never run, left out of default
// lists) and restored; deleting one that has runs takes ?force=true, its runs
// going with it (their foreign key cascades), else 409 naming how many.
import { etag, handler, httpError, Type } from '../../core/plugin-api.ts';
import { nextRunOf } from './schedule.ts';

const ReportParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/** DELETE /api/ai/reports/:id[?force=true] */
export const deleteReport = handler(
  {
    params: ReportParams,
    querystring: Type.Object(
      {
        force: Type.Optional(
          Type.Boolean({
            description:
              'true: delete the report with its runs (its history). Without it a report that has runs is not deleted: 409 CONFLICT, the number of runs in errors[/force] (archive it to keep them)',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    response: { 204: Type.Null({ description: 'The report is deleted, and its runs with it' }) },
    problems: ['CONFLICT', 'PRECONDITION_FAILED'],
  },
  async (ctx, request, reply) => {
    const { id } = request.params;
    await ctx.transaction(async (tx) => {
      // locked first: a run being recorded meanwhile waits (its key check), so what is counted is what goes
      await tx.data('AiReport').lock(id);
      const runs = await tx.data('AiReportRun').count({ reportId: id });
      if (runs && request.query.force !== true) {
        throw httpError('CONFLICT', `the report has ${runs} run(s), deleted with it: archive it to keep them, or delete it with ?force=true`, {
          errors: [{ path: '/force', message: `${runs} run(s) would be deleted with the report` }],
        });
      }
      await tx.data('AiReport').remove(id, { ifMatch: request.headers['if-match'] });
    });
    return reply.code(204).send();
  },
);

function archiving(archived: boolean) {
  return handler(
    {
      params: ReportParams,
      response: {
        200: Type.Ref('AiReport', { description: archived ? 'The report, archived with its runs' : 'The report, restored (its schedule runs again)', headers: ['ETag'] }),
      },
    },
    async (ctx, request, reply) => {
      const row = await ctx.transaction(async (tx) => {
        const report = await tx.data('AiReport').lock(request.params.id);
        if ((report.archived === true) === archived) return report;
        // an archived report is never due; restored, it is due when its schedule next says
        const next = archived ? null : nextRunOf({ ...report, archived: false }, ctx.timeZone, ctx.now());
        const set = { archived, archivedAt: archived ? ctx.now().toISOString() : null, nextRunAt: next?.toISOString() ?? null };
        return tx.data('AiReport').update(report.id, {}, { set });
      });
      reply.header('etag', etag(row.version));
      return ctx.data('AiReport').toDto(row);
    },
  );
}

export const archiveReport = archiving(true);
export const unarchiveReport = archiving(false);

// Running a report: always as its owner (ctx.as), so a run sees what the
// owner may see, never more, whoever or whatever starts it; every run is kept
// with its parameters, range and result, failed ones with their error.
import { handler, httpError, Type, validationError, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { reportType, type ReportRange } from './report-types.ts';

const MAX_ERROR = 2000;
const MIN_YEAR = 1900;
const MAX_YEAR = 9999;

interface RunOptions {
  triggeredBy: 'manual' | 'schedule';
  /** who asked, for a manual run */
  runById?: string | null;
  now?: Date;
}

/** Runs `report` over `range` and records the run (its history is bookkeeping: written as the system). */
export async function executeRun(ctx: ModuleContext, report: Row, range: ReportRange, opts: RunOptions): Promise<Row> {
  const startedAt = opts.now ?? ctx.now();
  const parameters = (report.parameters ?? {}) as Record<string, unknown>;
  let outcome: { status: 'succeeded'; result: Record<string, unknown> } | { status: 'failed'; error: string };
  try {
    const type = reportType(report.type);
    if (!type) throw new Error(`report type "${report.type}" is no longer known`);
    const owner = await ctx.as(report.ownerId);
    if (!owner) throw new Error('the report has no active owner to run as');
    outcome = { status: 'succeeded', result: await type.run(owner, parameters, range) };
  } catch (err) {
    outcome = { status: 'failed', error: String((err as Error).message ?? err).slice(0, MAX_ERROR) };
  }
  return ctx
    .system()
    .data('AiReportRun')
    .create(
      {},
      {
        internal: {
          reportId: report.id,
          type: report.type,
          parameters,
          rangeFrom: range.from?.toISOString() ?? null,
          rangeTo: range.to.toISOString(),
          status: outcome.status,
          result: outcome.status === 'succeeded' ? outcome.result : null,
          error: outcome.status === 'failed' ? outcome.error : null,
          startedAt: startedAt.toISOString(),
          finishedAt: new Date(Math.max(Date.now(), startedAt.getTime())).toISOString(),
          triggeredBy: opts.triggeredBy,
          runById: opts.runById ?? null,
        },
      },
    );
}

const Instant = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }));

export const createReportRun = handler(
  {
    params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
    body: Type.Optional(
      Type.Object({ from: Instant('start of the input range (default: none, from the beginning)'), to: Instant('end of the input range (default: now)') }, { additionalProperties: false }),
    ),
    response: { 201: Type.Ref('AiReportRun', { description: 'The run, succeeded or failed, as kept in the history', headers: ['Location'] }) },
    problems: ['STATE_LOCKED'],
  },
  async (ctx, request, reply) => {
    // 404 unless the caller may read the definition (their own, or any for erp:ai:admin)
    const report = await ctx.data('AiReport').read(request.params.id);
    if (report.archived) throw httpError('STATE_LOCKED', 'the report is archived: restore it to run it (its runs stay readable)');
    const now = ctx.now();
    const from = request.body?.from ? new Date(request.body.from) : null;
    const to = request.body?.to ? new Date(request.body.to) : now;
    for (const [name, at] of [
      ['from', from],
      ['to', to],
    ] as const) {
      // the database keeps years 1..9999 (and refuses year 0 in ISO input): a range outside is no range of tasks
      if (at && (at.getUTCFullYear() < MIN_YEAR || at.getUTCFullYear() > MAX_YEAR)) throw validationError([{ path: `/${name}`, message: `must be within the years ${MIN_YEAR}–${MAX_YEAR}` }]);
    }
    if (from && from > to) throw validationError([{ path: '/from', message: 'is after to' }]);
    const run = await executeRun(ctx, report, { from, to }, { triggeredBy: 'manual', runById: ctx.userId, now });
    reply.code(201).header('location', `/api/ai/report-runs/${run.id}`);
    return ctx.data('AiReportRun').toDto(run);
  },
);

const Figure = Type.Object(
  {
    figure: Type.String({ description: 'what is counted, as the type names it: "total", "category.done", "open." and a user id …' }),
    previous: Type.Union([Type.Number(), Type.Null()], { description: 'null: the previous run had no such figure' }),
    current: Type.Union([Type.Number(), Type.Null()], { description: 'null: this run has no such figure' }),
    delta: Type.Union([Type.Number(), Type.Null()], { description: 'current − previous; null when either is missing' }),
  },
  { additionalProperties: false },
);

export const getReportRunComparison = handler(
  {
    params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
    response: {
      200: Type.Object(
        {
          run: Type.Ref('AiReportRun'),
          previous: Type.Union([Type.Ref('AiReportRun'), Type.Null()], { description: 'the last successful run of the same report started before it; null: none' }),
          figures: Type.Array(Figure),
        },
        { additionalProperties: false, description: 'The run beside the one before it, figure by figure' },
      ),
    },
    problems: ['UNPROCESSABLE'],
  },
  async (ctx, request) => {
    const runs = ctx.data('AiReportRun');
    const run = await runs.read(request.params.id);
    if (run.status !== 'succeeded') throw httpError('UNPROCESSABLE', 'a failed run has no figures to compare');
    const previous = await previousRun(ctx, run);
    const type = reportType(run.type);
    const figuresOf = (r: Row | undefined) => (r && type ? type.figures(r.result ?? {}) : {});
    const now = figuresOf(run);
    const before = figuresOf(previous);
    const names = [...new Set([...Object.keys(now), ...Object.keys(before)])];
    const figures = names.map((figure) => {
      const current = now[figure] ?? null;
      const prev = before[figure] ?? null;
      return { figure, previous: prev, current, delta: current !== null && prev !== null ? Math.round((current - prev) * 100) / 100 : null };
    });
    return { run: runs.toDto(run), previous: previous ? runs.toDto(previous) : null, figures };
  },
);

/** The last successful run of the same report before `run` (by start, then id: UUIDv7 ids follow time). */
async function previousRun(ctx: ModuleContext, run: Row): Promise<Row | undefined> {
  const at = new Date(run.startedAt).toISOString();
  const key = (r: Row) => `${new Date(r.startedAt).toISOString()} ${r.id}`;
  const candidates = await ctx.data('AiReportRun').find({ reportId: run.reportId, status: 'succeeded', startedAt: { $lte: at } }, { limit: 20, orderBy: '-startedAt' });
  return candidates.filter((r) => key(r) < key(run)).sort((a, b) => (key(a) < key(b) ? 1 : -1))[0];
}

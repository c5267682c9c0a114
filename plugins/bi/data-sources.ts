// External data sources of a BI application: another PostgreSQL database
// (URL, password, schema), read only through the kernel (ctx.externalDb), whose
// tables join the application's semantic model. The password is a secret field:
// encrypted at rest, never in an answer. A source is tested whenever it is
// saved: created, its connection changed (URL, password, schema, TLS) or
// refreshed, the test connects, checks the schema and introspects its tables
// into the row (`tables`), and a failing test refuses the save with 422 naming
// the reason and the field to fix. The target policy is the kernel's: no
// loopback or private address unless configured (EXTERNAL_DB_ALLOW_PRIVATE,
// EXTERNAL_DB_ALLOW_HOSTS). Who may add, change or remove sources is the
// manifest's grants (owners and editors of the application); every member may
// use its tables in analytics.
import { etag, ExternalDbError, handler, httpError, SSL_MODES, Type, type EntityHooks, type ExternalDbErrorCode, type ModuleContext, type Row, type SslMode } from '../../core/plugin-api.ts';
import { LIMITS, SOURCE_LIMITS } from './limits.ts';
import { SOURCE_NAME, sourceTablesOf } from './external-model.ts';

const ENTITY = 'BiDataSource';
/** transaction states the hook reads: a dry run of a create, a refresh, a failed test being recorded */
const DRY_RUN = 'bi:data-source:dry-run';
const REFRESH = 'bi:data-source:refresh';
const RECORD = 'bi:data-source:record';
const CONNECTION = ['url', 'password', 'schemaName', 'sslMode'];

/** What each failure is called, and which field of the source fixes it. */
const FAILURES: Record<ExternalDbErrorCode, { path: string; what: string }> = {
  INVALID_TARGET: { path: '/url', what: 'invalid URL' },
  REFUSED_TARGET: { path: '/url', what: 'refused target' },
  UNREACHABLE: { path: '/url', what: 'unreachable' },
  TLS_FAILED: { path: '/sslMode', what: 'TLS failed' },
  AUTH_FAILED: { path: '/password', what: 'authentication failed' },
  NO_DATABASE: { path: '/url', what: 'no such database' },
  NO_SCHEMA: { path: '/schemaName', what: 'no such schema' },
  TIMEOUT: { path: '/url', what: 'timeout' },
  READ_ONLY: { path: '/url', what: 'write refused' },
  QUERY_FAILED: { path: '/url', what: 'the database refused the query' },
};

const sourceFailures = new WeakSet<object>();

/** An external database's failure as a problem: 422 naming the reason, at `at` (default: the source's field to fix); anything else unchanged. */
export function sourceProblem(err: unknown, at?: string, source?: string): unknown {
  if (!(err instanceof ExternalDbError)) return err;
  const { path, what } = FAILURES[err.code];
  const message = `${what}: ${err.message}`;
  // a query of analytics: what the user can do about it
  const hint = !source
    ? ''
    : err.code === 'TIMEOUT'
      ? ': narrow the query (filters, a date range, fewer dimensions)'
      : err.code === 'QUERY_FAILED'
        ? ': refresh the data source if its tables changed'
        : '';
  const detail = source ? `data source "${source}": ${message}${hint}` : `the data source failed its test: ${message}`;
  const problem = httpError('UNPROCESSABLE', detail, { errors: [{ path: at ?? path, message }] });
  sourceFailures.add(problem);
  return problem;
}

/** A password or sslmode written into the URL moves to its own field: the password is then kept encrypted, and the URL never holds one. */
function withUrlParts(input: Record<string, unknown>): Record<string, unknown> {
  if (typeof input.url !== 'string' || !/^postgres(ql)?:\/\//.test(input.url)) return input;
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return input;
  }
  const sslmode = url.searchParams.get('sslmode');
  const movesSsl = sslmode !== null && (SSL_MODES as readonly string[]).includes(sslmode);
  if (!url.password && !movesSsl) return input;
  const out = { ...input };
  if (url.password) {
    // the password field, when given too, is the one meant
    if (out.password === undefined) out.password = safeDecode(url.password);
    url.password = '';
  }
  if (movesSsl) {
    if (out.sslMode === undefined) out.sslMode = sslmode;
    url.searchParams.delete('sslmode');
  }
  out.url = url.href;
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

interface Connection {
  url: string;
  password: string | null;
  schemaName: string;
  sslMode: SslMode;
}

/** The source's connection (URL, password, TLS), for ctx.externalDb. */
export const targetOf = (c: Connection) => ({ url: c.url, password: c.password, sslMode: c.sslMode });

/** Connects, checks the schema and introspects its tables: the fields a successful test sets. */
async function tested(ctx: ModuleContext, c: Connection): Promise<Row> {
  try {
    const found = await ctx.externalDb(targetOf(c)).describe(c.schemaName, { timeoutMs: LIMITS().timeoutMs, maxTables: SOURCE_LIMITS.maxTables });
    return {
      tables: sourceTablesOf(found.tables, SOURCE_LIMITS.maxColumns),
      serverVersion: found.serverVersion.slice(0, 100),
      status: 'ok',
      lastFailure: null,
      testedAt: ctx.now().toISOString(),
    };
  } catch (err) {
    throw sourceProblem(err);
  }
}

/** The stored password of a source, plain (to connect with, never to show). */
export async function storedPassword(ctx: ModuleContext, id: string): Promise<string | null> {
  return ((await ctx.data(ENTITY).reveal(id, ['password']))?.password as string | null | undefined) ?? null;
}

export const dataSourceHooks: EntityHooks = {
  problems: { create: ['UNPROCESSABLE'], update: ['UNPROCESSABLE'] },
  // before the write, once the old row is locked (an update's caller may change it: the kernel checked that first)
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'delete' || !input) return;
    const given = withUrlParts(input);
    const state = ctx.transactionState;
    if (state?.has(DRY_RUN) || state?.has(RECORD)) return given;
    const refresh = before !== null && state?.get(REFRESH) === before.id;
    const changed = CONNECTION.some((f) => given[f] !== undefined && (f === 'password' || given[f] !== before?.[f]));
    if (op !== 'create' && !refresh && !changed) return given;
    // the body's shape was checked already (the route's schema); module code's writes are tested as they come
    const connection: Connection = {
      url: String(given.url ?? before?.url ?? ''),
      schemaName: String(given.schemaName ?? before?.schemaName ?? 'public'),
      sslMode: (given.sslMode ?? before?.sslMode ?? 'require') as SslMode,
      password: given.password !== undefined ? (given.password as string | null) : before ? await storedPassword(ctx, before.id as string) : null,
    };
    return { ...given, ...(await tested(ctx, connection)) };
  },
};

const Id = Type.String({ format: 'uuid' });
const SourceBody = Type.Object(
  {
    name: Type.String({
      pattern: SOURCE_NAME.source,
      description: "its tables are `<name>.<table>` in the application's model: a lower-case letter, then lower-case letters, digits and _ (at most 40); unique in the application",
    }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])),
    url: Type.String({
      maxLength: 1000,
      pattern: '^postgres(ql)?://',
      description: 'postgres://user@host:5432/database; a password written here is moved to password, an sslmode to sslMode',
      examples: ['postgres://reader@db.example.com:5432/warehouse'],
    }),
    password: Type.Optional(Type.Union([Type.String({ maxLength: 1000, writeOnly: true }), Type.Null()], { description: 'write-only: stored encrypted, never returned' })),
    schemaName: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: '^[^\\u0000]+$', description: 'the schema whose tables the application reads (default public)' })),
    sslMode: Type.Optional(
      Type.Unsafe<SslMode>({
        type: 'string',
        enum: [...SSL_MODES],
        description: 'disable: no TLS; require (default): TLS without checking the certificate; verify-full: TLS with a certificate valid for the host',
      }),
    ),
  },
  { additionalProperties: false },
);
const Source = (description: string, headers: ('ETag' | 'Location')[]) => Type.Ref('BiDataSource', { description, headers });

/** Thrown to roll a dry run back once the kernel accepted the write. */
class DryRunPassed extends Error {}

/**
 * POST /api/bi/apps/:appId/data-sources: the kernel first checks the body and
 * the caller's right to add sources to this application in a dry run of the
 * insert, rolled back, so a caller who may not add one never makes the server
 * connect anywhere; then the insert runs again with the test (its hook).
 */
export const createDataSource = handler(
  {
    params: Type.Object({ appId: Id }, { additionalProperties: false }),
    body: SourceBody,
    response: { 201: Source('The data source, tested, with its tables; Location names it', ['Location', 'ETag']) },
    problems: ['UNPROCESSABLE'],
  },
  async (ctx, request, reply) => {
    const { appId } = request.params;
    await ctx.data('BiApp').read(appId);
    const create = (tx: ModuleContext) => tx.data(ENTITY).create(request.body, { internal: { appId } });
    try {
      await ctx.transaction(async (tx) => {
        tx.transactionState!.set(DRY_RUN, true);
        await create(tx);
        throw new DryRunPassed();
      });
    } catch (err) {
      if (!(err instanceof DryRunPassed)) throw err;
    }
    const row = await ctx.transaction(create);
    reply
      .code(201)
      .header('location', `/api/bi/apps/${appId}/data-sources/${row.id}`)
      .header('etag', etag(row.version as number));
    return ctx.data(ENTITY).toDto(row);
  },
);

/**
 * POST /api/bi/apps/:appId/data-sources/:sourceId/refresh: tests the source
 * again and introspects its tables anew (a table added to the database since).
 * A failing test answers 422 and is recorded on the source (status failed,
 * lastFailure), which keeps the tables of its last good test.
 */
export const refreshDataSource = handler(
  {
    params: Type.Object({ appId: Id, sourceId: Id }, { additionalProperties: false }),
    response: { 200: Source('The data source, tested again, with its tables as they are now', ['ETag']) },
    problems: ['UNPROCESSABLE'],
  },
  async (ctx, request, reply) => {
    const { appId, sourceId } = request.params;
    const [found] = await ctx.data(ENTITY).find({ id: sourceId, appId }, { limit: 1 });
    if (!found) throw httpError('NOT_FOUND', `${ENTITY} ${sourceId} does not exist`);
    const update = (state: string, set: Row) =>
      ctx.transaction(async (tx) => {
        tx.transactionState!.set(state, sourceId);
        return tx.data(ENTITY).update(sourceId, {}, { set, auditAction: 'refresh' });
      });
    let row: Row;
    try {
      row = await update(REFRESH, {});
    } catch (err) {
      if (!sourceFailures.has(err as object)) throw err;
      const why = (err as { errors?: { message: string }[] }).errors?.[0]?.message ?? (err as Error).message;
      await update(RECORD, { status: 'failed', lastFailure: why.slice(0, 1000), testedAt: ctx.now().toISOString() });
      throw err;
    }
    reply.header('etag', etag(row.version as number));
    return ctx.data(ENTITY).toDto(row);
  },
);

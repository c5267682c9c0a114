// Which database errors mean "the database cannot take this right now" rather
// than "this request is wrong": a refused or dropped connection, a server
// shutting down or starting, a full server, a pool that hands out no connection
// in time, a transaction rolled back for a deadlock (once the kernel's own tries
// of it ran out: crud/crud-service.ts, inTransaction). Those answer 503 with
// Retry-After, never 500.

/**
 * SQLSTATE classes and codes of an unreachable or restarting server, and of a
 * transaction the server rolled back to let another go on (40001 serialization
 * failure, 40P01 deadlock): all worth the same request again a moment later.
 */
const UNAVAILABLE_STATES = /^(08|57P0[1-4]|53300|53400|40001|40P01)/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);
// pg and pg-pool say these in words only, with no code
const NETWORK_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client was closed and is not queryable|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command/i;

/** Seconds a client should wait before it tries again. */
export const RETRY_AFTER_SECONDS = 5;

type ErrorLike = { name?: unknown; message?: unknown; code?: unknown; sqlState?: unknown; cause?: unknown };

/** An error and the causes it wraps (MikroORM wraps the driver's), outermost first, a few deep. */
function* causes(err: unknown): Generator<ErrorLike> {
  for (let e = err as ErrorLike | undefined, depth = 0; e && depth < 4; e = e.cause as ErrorLike | undefined, depth++) yield e;
}

const codeOf = (e: ErrorLike) => (typeof e.sqlState === 'string' ? e.sqlState : typeof e.code === 'string' ? e.code : '');

/** The error among err and its causes that carries PostgreSQL's SQLSTATE (and its detail), with that state. */
export function databaseErrorOf(err: unknown): { state: string; error: ErrorLike & { detail?: unknown } } | undefined {
  for (const e of causes(err)) if (/^[0-9A-Z]{5}$/.test(codeOf(e)) && !NETWORK_CODES.has(codeOf(e))) return { state: codeOf(e), error: e };
  return undefined;
}

/** The SQLSTATE of a database error, wherever in its causes the driver put it. */
export const sqlStateOf = (err: unknown): string | undefined => databaseErrorOf(err)?.state;

/**
 * A transaction PostgreSQL rolled back to let another go on: it lost a deadlock
 * (40P01) or a serializable conflict (40001). Run again from its start, it
 * usually succeeds, so the kernel tries it again before answering 503.
 */
export function isTransactionConflict(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state === '40P01' || state === '40001';
}

export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of causes(err)) {
    const state = codeOf(e);
    if (UNAVAILABLE_STATES.test(state) || NETWORK_CODES.has(state)) return true;
    if (typeof e.message === 'string' && NETWORK_MESSAGES.test(e.message)) return true;
    if (e.name === 'ConnectionException') return true;
  }
  return false;
}

// RFC 9457 problem details for every error, from one handler. Known errors
// keep their code; database constraint errors become 409/400; anything else is
// a 500 whose body leaks no stack, SQL or message.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ERRORS, titleOf, type ErrorCode, type FieldError } from '../errors.ts';
import { databaseErrorOf, isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '../db/failures.ts';
import { RESPONSE_HEADERS } from './headers.ts';
import { uniqueViolationFields } from '../db/unique-violation.ts';
import { fieldErrors } from './validation-messages.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const FieldErrors = Type.Array(Type.Object({ path: Type.String({ description: 'JSON pointer into the request part' }), message: Type.String() }, { additionalProperties: false }));
const Code = Type.Unsafe<string>({ type: 'string', enum: Object.keys(ERRORS), description: 'stable machine-readable code' });
const BulkFailure = Type.Object(
  {
    op: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
    index: Type.Integer({ minimum: 0, description: 'position in its list of the request' }),
    id: Type.Optional(Type.String({ format: 'uuid' })),
    status: Type.Integer({ description: 'the status this row alone would have answered' }),
    problem: Type.Object({ status: Type.Integer(), code: Code, title: Type.String(), detail: Type.Optional(Type.String()), errors: Type.Optional(FieldErrors) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String({ description: 'the request path' })),
    code: Code,
    requestId: Type.String(),
    errors: Type.Optional(FieldErrors),
    failures: Type.Optional(Type.Array(BulkFailure, { description: 'BULK_FAILED: each row of a bulk request that failed (nothing was written)' })),
  },
  { $id: 'Problem', title: 'Problem details (RFC 9457)', additionalProperties: false },
);

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_FAILED',
  FST_ERR_CTP_INVALID_JSON_BODY: 'VALIDATION_FAILED',
  FST_ERR_CTP_EMPTY_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  // router errors, raised before any route matches (see frameworkErrors below)
  FST_ERR_BAD_URL: 'VALIDATION_FAILED',
  FST_ERR_MAX_PARAM_LENGTH: 'VALIDATION_FAILED',
};
const BY_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  417: 'EXPECTATION_FAILED',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
};

export interface Mapped {
  code: ErrorCode;
  detail?: string;
  errors?: FieldError[];
}

function fromValidation(err: FastifyError): Mapped {
  const part = err.validationContext ?? 'body';
  const { errors, more } = fieldErrors(err.validation ?? []);
  const listed = errors.map((e) => `${e.path} ${e.message}`).join('; ');
  return { code: 'VALIDATION_FAILED', detail: `invalid ${part}: ${listed}${more ? ` (and ${more} more)` : ''}`, errors };
}

/** Constraint violations by SQLSTATE: raw statements (data/) raise the driver's error, MikroORM wraps it in a named exception. */
const BY_SQLSTATE: Record<string, Mapped> = {
  // restrict_violation: PostgreSQL 17+ (and PGlite) report ON DELETE RESTRICT with its own SQLSTATE
  23001: { code: 'CONFLICT', detail: 'the row is referenced by other rows' },
  23505: { code: 'CONFLICT', detail: 'a row with the same unique value already exists' },
  23503: { code: 'CONFLICT', detail: 'the row is referenced by other rows, or references a row that no longer exists' },
  23502: { code: 'VALIDATION_FAILED', detail: 'a required value is missing' },
  // numeric_value_out_of_range: a value (say a computed total) its column cannot hold
  22003: { code: 'VALIDATION_FAILED', detail: 'a number is out of the range its field holds' },
};

/** A unique clash names its field(s), so a client can point at the input to change. */
function uniqueClash(err: { detail?: unknown }): Mapped {
  const fields = uniqueViolationFields(err);
  if (!fields.length) return BY_SQLSTATE[23505];
  const names = fields.join(', ');
  const message = fields.length === 1 ? 'is already used by another row' : `is already used by another row together with the same ${names}`;
  return {
    code: 'CONFLICT',
    detail: `another row has the same ${names}${fields.length > 1 ? ' (as a combination)' : ''}`,
    errors: fields.map((f) => ({ path: `/${f}`, message })),
  };
}

function fromDatabase(err: Error): Mapped | undefined {
  const db = databaseErrorOf(err); // MikroORM's wrapper or a module's own may hold the driver's error as its cause
  if (db?.state === '23505') return uniqueClash(db.error);
  if (db && BY_SQLSTATE[db.state]) return BY_SQLSTATE[db.state];
  if (err.name === 'OptimisticLockError') return { code: 'CONFLICT', detail: 'the row was changed by someone else meanwhile; reload it and try again' };
  return undefined;
}

/** The code, detail and field errors an error answers with (INTERNAL for anything unforeseen). */
export function mapError(err: FastifyError & { errors?: FieldError[] }): Mapped {
  if (err.validation) return fromValidation(err);
  if (err.code && err.code in ERRORS) return { code: err.code as ErrorCode, detail: err.message, errors: err.errors };
  if (err.code && err.code in FASTIFY_CODES) return { code: FASTIFY_CODES[err.code], detail: err.message };
  const db = fromDatabase(err);
  if (db) return db;
  if (isDatabaseUnavailable(err)) return { code: 'DATABASE_UNAVAILABLE', detail: 'the database cannot take this request right now; retry after the seconds Retry-After names' };
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return { code: BY_STATUS[err.statusCode] ?? 'VALIDATION_FAILED', detail: err.message };
  return { code: 'INTERNAL' };
}

const typeUri = (code: ErrorCode) => `https://plinth.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`;

/** The problem document of a mapped error; instance is the request path, when there is a request. */
export function problemBody(m: Mapped, requestId: string, instance?: string): Record<string, unknown> {
  const status = ERRORS[m.code][0];
  return {
    type: typeUri(m.code),
    title: titleOf(m.code),
    status,
    detail: m.code === 'INTERNAL' ? ERRORS.INTERNAL[2] : m.detail,
    ...(instance === undefined ? {} : { instance }),
    code: m.code,
    requestId,
    ...(m.errors?.length ? { errors: m.errors } : {}),
  };
}

function sendProblem(request: FastifyRequest, reply: FastifyReply, m: Mapped): FastifyReply {
  return reply
    .code(ERRORS[m.code][0])
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody(m, String(request.id), request.url.split('?')[0]));
}

/** Logs a database error without its SQL or parameters (they may hold secrets). */
function safeErrorLog(err: Error & { code?: string; sqlState?: string }) {
  const msg = err.name.endsWith('Exception') ? err.message.split(' - ').pop() : err.message;
  return { name: err.name, code: err.code ?? err.sqlState, message: msg?.slice(0, 500), stack: err.name.endsWith('Exception') ? undefined : err.stack };
}

function handleError(err: FastifyError & { headers?: Record<string, string> }, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = mapError(err);
  if (mapped.code === 'INTERNAL') request.log.error({ err: safeErrorLog(err) }, 'unhandled error');
  if (mapped.code === 'DATABASE_UNAVAILABLE') {
    request.log.warn({ err: safeErrorLog(err) }, 'database unavailable');
    reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  }
  if (err.headers) reply.headers(err.headers);
  // Fastify closes the connection after any body parser error, lest unread body
  // bytes be read as the next request; a body read to its end (bad JSON) leaves
  // the connection as clean as any other 400
  if (err.code?.startsWith('FST_ERR_CTP_') && request.raw.complete) reply.removeHeader('connection');
  return sendProblem(request, reply, mapped);
}

/**
 * Fastify's `frameworkErrors` server option: without it the router answers a
 * malformed URL (bad percent-encoding) or an over-long path parameter itself,
 * as plain JSON; it can only be given to Fastify() when the app is built.
 */
export const frameworkErrors = handleError;

export function installProblemHandling(app: FastifyInstance): void {
  app.addSchema(ProblemSchema);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    // a person following a stale link to a console page gets a page, not JSON
    if (request.method === 'GET' && !request.url.startsWith('/api') && /text\/html/.test(request.headers.accept ?? '')) return reply.code(404).type('text/html; charset=utf-8').send(NOT_FOUND_PAGE);
    return sendProblem(request, reply, { code: 'NOT_FOUND', detail: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
}

const NOT_FOUND_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found · Plinth</title>' +
  '<link rel="stylesheet" href="/console/assets/console.css"></head><body><main id="main" class="bare"><h1>Not found</h1><p>There is no such page.</p><p><a href="/">Go to the start page</a></p></main></body></html>';

/** Statuses whose answers say when to try again. */
const RETRY_STATUSES = new Set([429, 503]);

/**
 * Response schemas for the problem codes a route can answer, as problem+json,
 * one per status; each description names the codes it carries, and nothing more.
 */
export function problemResponses(codes: ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    if (!codes.includes(code)) continue;
    const status = ERRORS[code][0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: list.map((code) => `${titleOf(code)} (${code})`).join(' / '),
        ...(RETRY_STATUSES.has(status) ? { headers: { 'Retry-After': RESPONSE_HEADERS['Retry-After'] } } : {}),
        content: { [PROBLEM_CONTENT_TYPE]: { schema: Type.Ref('Problem') } },
      },
    ]),
  );
}

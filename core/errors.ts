// Every coded error the kernel answers with, declared once. The central error
// handler renders them as RFC 9457 problem details; tests assert the code.
import createError from '@fastify/error';

export const ERRORS = {
  // params, query, headers or body not matching the route's schema, malformed JSON, a missing required value or a number out of its column's range; errors name the fields
  VALIDATION_FAILED: [400, 'Request validation failed', '%s'],
  // no, an invalid, expired or revoked access token (or an unknown refresh token) on a route that needs one
  UNAUTHENTICATED: [401, 'Authentication required', '%s'],
  // POST /api/auth/login with an unknown tenant or e-mail or a wrong password (the answer does not say which)
  INVALID_CREDENTIALS: [401, 'Invalid credentials', 'Tenant, e-mail or password is wrong'],
  // a refresh with a token already rotated: the whole session (its token family) is ended
  TOKEN_REUSED: [401, 'Refresh token reused', 'This refresh token was already used; its whole family is revoked. Log in again.'],
  // the caller's roles do not grant the action on the subject (a route's access check, a bulk section, a row or field it may not change, a field a query may not read)
  FORBIDDEN: [403, 'Forbidden', '%s'],
  // an authenticated caller that holds no role at all
  ROLE_REQUIRED: [403, 'Role required', 'The caller holds no role'],
  // a route for the tenant's administrators (role admin) called by someone else
  ADMIN_REQUIRED: [403, 'Administrator required', 'Only administrators may do this'],
  // X-Company-Id names a company the caller is no member of
  COMPANY_FORBIDDEN: [403, 'Company not allowed', 'X-Company-Id names a company the caller does not belong to'],
  // a route on company-scoped data called by a user who belongs to no company
  COMPANY_REQUIRED: [403, 'Company context required', 'The caller belongs to no company; this route works on company data'],
  // the caller's tenant is not active (suspended): its requests, logins and refreshes are refused
  TENANT_UNAVAILABLE: [403, 'Tenant unavailable', '%s'],
  // a platform route (/api/platform/...) called from a tenant other than the platform operators'
  PLATFORM_ONLY: [403, 'Platform operators only', 'Only platform operators may do this'],
  // no such route, or no row with that id the caller may read (rows out of scope answer as absent)
  NOT_FOUND: [404, 'Not found', '%s'],
  // a method the path has no route for (the Allow header lists those it has)
  METHOD_NOT_ALLOWED: [405, 'Method not allowed', '%s'],
  // a framework error with status 406: a multipart field declared as JSON that is not JSON
  NOT_ACCEPTABLE: [406, 'Not acceptable', '%s'],
  // the request line, headers or body did not arrive within the server's request timeout
  REQUEST_TIMEOUT: [408, 'Request timeout', '%s'],
  // a unique value already used, a row other rows still reference, a row changed meanwhile, or a state a module refuses (a second conversion)
  CONFLICT: [409, 'Conflict', '%s'],
  // a write to a row (or to a child of a row) whose state the manifest's transitions lock (lockedIn)
  STATE_LOCKED: [409, 'Locked by its state', '%s'],
  // If-Match (ifMatch) names a version that is no longer the row's: it was changed since it was read
  PRECONDITION_FAILED: [412, 'Precondition failed', '%s'],
  // a JSON body over BODY_LIMIT, an uploaded file over UPLOAD_MAX_BYTES, or a multipart field or chunk extension too long
  PAYLOAD_TOO_LARGE: [413, 'Payload too large', '%s'],
  // a body in a content type the route does not take (multipart on a JSON route, JSON on an upload route)
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type', '%s'],
  // an Expect header other than 100-continue
  EXPECTATION_FAILED: [417, 'Expectation failed', '%s'],
  // a state the manifest's transitions do not allow from the row's current one (or as the initial state), or a reserved state only module code may set
  INVALID_TRANSITION: [422, 'Invalid transition', '%s'],
  // a well-formed request a module's rule refuses (a value that does not fit other rows; errors name the fields), or an analytics query past its time limit
  UNPROCESSABLE: [422, 'Unprocessable content', '%s'],
  // POST <collection>/bulk in which a row failed: nothing was written, and each failure is listed with its row
  BULK_FAILED: [422, 'Bulk request failed', '%s'],
  // more than RATE_LIMIT_MAX requests in the window, too many logins from one address, or an account locked by failed logins (Retry-After)
  RATE_LIMITED: [429, 'Too many requests', '%s'],
  // the request line and headers exceed what the server reads
  HEADERS_TOO_LARGE: [431, 'Request header fields too large', '%s'],
  // an unforeseen error: logged with its request id, never shown to the client
  INTERNAL: [500, 'Internal server error', 'An unexpected error occurred; quote the requestId when reporting it'],
  // the server is shutting down (retry on a new connection), or /health/ready finds a pool that serves no connection
  SERVICE_UNAVAILABLE: [503, 'Service unavailable', '%s'],
  // no pooled connection within DB_ACQUIRE_TIMEOUT_MS, the database not answering, or a tenant moving between databases (Retry-After)
  DATABASE_UNAVAILABLE: [503, 'Database unavailable', '%s'],
  // its schema could not be brought to the loaded modules (GET /api/platform/tenants shows why)
  TENANT_MIGRATION_FAILED: [503, 'Tenant unavailable: its migration failed', '%s'],
  // its schema is still being brought to the loaded modules, in the background after a start (Retry-After)
  TENANT_MIGRATING: [503, 'Tenant migrating', '%s'],
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  path: string;
  message: string;
}

const constructors = Object.fromEntries(Object.entries(ERRORS).map(([code, [status, , message]]) => [code, createError(code, message, status)])) as Record<ErrorCode, ReturnType<typeof createError>>;

export type HttpError = Error & { code: ErrorCode; statusCode: number; errors?: FieldError[]; headers?: Record<string, string> };

/** httpError('NOT_FOUND', 'Product 123 does not exist') */
export function httpError(code: ErrorCode, detail?: string, extra?: { errors?: FieldError[]; headers?: Record<string, string> }): HttpError {
  const err = (detail === undefined ? new constructors[code]() : new constructors[code](detail)) as HttpError;
  if (extra?.errors) err.errors = extra.errors;
  if (extra?.headers) err.headers = extra.headers;
  return err;
}

export const titleOf = (code: ErrorCode) => ERRORS[code][1];

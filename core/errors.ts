// Every coded error the kernel answers with, declared once. The central error
// handler renders them as RFC 9457 problem details; tests assert the code.
import createError from '@fastify/error';

export const ERRORS = {
  VALIDATION_FAILED: [400, 'Request validation failed', '%s'],
  UNAUTHENTICATED: [401, 'Authentication required', '%s'],
  INVALID_CREDENTIALS: [401, 'Invalid credentials', 'Tenant, e-mail or password is wrong'],
  TOKEN_REUSED: [401, 'Refresh token reused', 'This refresh token was already used; its whole family is revoked. Log in again.'],
  FORBIDDEN: [403, 'Forbidden', '%s'],
  ROLE_REQUIRED: [403, 'Role required', 'The caller holds no role'],
  ADMIN_REQUIRED: [403, 'Administrator required', 'Only administrators may do this'],
  COMPANY_FORBIDDEN: [403, 'Company not allowed', 'X-Company-Id names a company the caller does not belong to'],
  COMPANY_REQUIRED: [403, 'Company context required', 'The caller belongs to no company; this route works on company data'],
  TENANT_UNAVAILABLE: [403, 'Tenant unavailable', '%s'],
  PLATFORM_ONLY: [403, 'Platform operators only', 'Only platform operators may do this'],
  NOT_FOUND: [404, 'Not found', '%s'],
  METHOD_NOT_ALLOWED: [405, 'Method not allowed', '%s'],
  NOT_ACCEPTABLE: [406, 'Not acceptable', '%s'],
  REQUEST_TIMEOUT: [408, 'Request timeout', '%s'],
  CONFLICT: [409, 'Conflict', '%s'],
  STATE_LOCKED: [409, 'Locked by its state', '%s'],
  PRECONDITION_FAILED: [412, 'Precondition failed', '%s'],
  PAYLOAD_TOO_LARGE: [413, 'Payload too large', '%s'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type', '%s'],
  EXPECTATION_FAILED: [417, 'Expectation failed', '%s'],
  INVALID_TRANSITION: [422, 'Invalid transition', '%s'],
  // a well-formed request a module's rule refuses (a value that does not fit other rows); errors name the fields
  UNPROCESSABLE: [422, 'Unprocessable content', '%s'],
  BULK_FAILED: [422, 'Bulk request failed', '%s'],
  RATE_LIMITED: [429, 'Too many requests', '%s'],
  HEADERS_TOO_LARGE: [431, 'Request header fields too large', '%s'],
  INTERNAL: [500, 'Internal server error', 'An unexpected error occurred; quote the requestId when reporting it'],
  SERVICE_UNAVAILABLE: [503, 'Service unavailable', '%s'],
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

// Why an external PostgreSQL database (core/db/external-db.ts) could not be used.
export type ExternalDbErrorCode = 'INVALID_TARGET' | 'REFUSED_TARGET' | 'UNREACHABLE' | 'TLS_FAILED' | 'AUTH_FAILED' | 'NO_DATABASE' | 'NO_SCHEMA' | 'TIMEOUT' | 'READ_ONLY' | 'QUERY_FAILED';

/** `code` is stable; the message says what the server or the policy said. */
export class ExternalDbError extends Error {
  /** why: a target the policy refuses, one not reachable, TLS, credentials, a missing database or schema, the time limit, a write, a failed query */
  readonly code: ExternalDbErrorCode;
  constructor(code: ExternalDbErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ExternalDbError';
    this.code = code;
  }
}

// The reusable checks routes compose: authenticate → requireRole → requireAdmin
// (the seed's order for admin-protected routes), each failing with its own code.
import type { FastifyRequest } from 'fastify';
import { httpError } from '../errors.ts';
import { ADMIN_ROLE } from '../access/role-directory.ts';
import type { Claims, TokenService } from './tokens.ts';

// The scheme name is case-insensitive (RFC 9110 §11.1).
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;

export function authenticate(request: FastifyRequest, tokens: TokenService): Claims {
  const header = request.headers.authorization;
  if (!header) throw httpError('UNAUTHENTICATED', 'send Authorization: Bearer <access token>');
  const m = BEARER.exec(header);
  if (!m) throw httpError('UNAUTHENTICATED', 'the Authorization header is not a bearer token');
  try {
    return tokens.verifyAccess(m[1]);
  } catch {
    throw httpError('UNAUTHENTICATED', 'the access token is invalid or expired');
  }
}

export function requireRole(roles: string[]): void {
  if (!roles.length) throw httpError('ROLE_REQUIRED');
}

export function requireAdmin(roles: string[]): void {
  if (!roles.includes(ADMIN_ROLE)) throw httpError('ADMIN_REQUIRED');
}

// Access tokens are short-lived HS256 JWTs naming the tenant, the user, the
// session (refresh-token family) and the issue time in milliseconds, which
// revocations compare against. They name no roles or companies: each request
// reads the user's current ones (access/memberships.ts), so a right taken away
// stops at once. Verification results are
// cached by fast-jwt, so the hot path pays for a signature check once per token.
import { createHash, randomBytes } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';

export interface Claims {
  sub: string;
  tid: string;
  /** session: the refresh-token family the token was issued for */
  sid?: string;
  /** issued at, in milliseconds (iat has whole seconds only) */
  ims?: number;
  iat?: number;
  exp?: number;
}

const ISSUER = 'plinth';

export class TokenService {
  readonly accessTtlSeconds: number;
  readonly refreshTtlSeconds: number;
  #sign: (payload: Claims) => string;
  #verify: (token: string) => Claims;

  constructor(secret: string, accessTtlSeconds: number, refreshTtlSeconds: number) {
    this.accessTtlSeconds = accessTtlSeconds;
    this.refreshTtlSeconds = refreshTtlSeconds;
    this.#sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: accessTtlSeconds * 1000, iss: ISSUER }) as never;
    this.#verify = createVerifier({ key: secret, algorithms: ['HS256'], allowedIss: ISSUER, cache: 10_000 }) as never;
  }

  /** issuedAt: when the state the claims describe was read (revocations cut off by it) */
  signAccess(claims: Claims, issuedAt = Date.now()): string {
    return this.#sign({ ...claims, ims: issuedAt });
  }

  /** Throws on a bad signature, a wrong issuer or an expired token. */
  verifyAccess(token: string): Claims {
    const c = this.#verify(token);
    if (typeof c.sub !== 'string' || typeof c.tid !== 'string') throw new Error('malformed claims');
    // a token from before ims existed counts from the start of its second
    if (typeof c.ims !== 'number') c.ims = (c.iat ?? 0) * 1000;
    return c;
  }

  /** Opaque refresh token "<tenant>.<random>"; only its SHA-256 is stored. */
  newRefreshToken(tenantId: string): { token: string; hash: string } {
    const token = `${tenantId}.${randomBytes(32).toString('base64url')}`;
    return { token, hash: hashRefreshToken(token) };
  }
}

export const hashRefreshToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function tenantOfRefreshToken(token: string): string | undefined {
  const dot = token.indexOf('.');
  return dot > 0 ? token.slice(0, dot) : undefined;
}

// API keys and client tokens, as strings: made, parsed, hashed and signed.
// A key reads `plk_<tenant>_<lookup>_<secret>`: the prefix lets secret
// scanners spot a leaked one, the tenant and lookup id find its client with
// one indexed read, and only a SHA-256 of the 256-bit secret is stored (a
// slow hash buys nothing against a secret this long). A client token reads
// `plct_<claims>.<signature>`: base64url JSON claims, HMAC-SHA256 with the
// client's own token key, so a forged or altered token fails the signature.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PREFIX = 'plk';
const TOKEN_PREFIX = 'plct';
const KEY = /^plk_([a-z][a-z0-9-]{1,39})_([0-9a-f]{16})_([0-9a-f]{64})$/;
const TOKEN = /^plct_([A-Za-z0-9_-]{1,512})\.([A-Za-z0-9_-]{43})$/;

export interface NewKey {
  /** the whole key: shown once, never stored */
  key: string;
  lookup: string;
  hash: string;
  lastFour: string;
}

export function newApiKey(tenantId: string): NewKey {
  const lookup = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('hex');
  const key = `${KEY_PREFIX}_${tenantId}_${lookup}_${secret}`;
  return { key, lookup, hash: hashSecret(secret), lastFour: key.slice(-4) };
}

export function parseApiKey(key: string): { tenantId: string; lookup: string; secret: string } | null {
  const m = KEY.exec(key);
  return m ? { tenantId: m[1], lookup: m[2], secret: m[3] } : null;
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Constant-time comparison of two hex digests. */
export function sameHash(stored: unknown, computed: string): boolean {
  if (typeof stored !== 'string' || stored.length !== computed.length) return false;
  return timingSafeEqual(Buffer.from(stored), Buffer.from(computed));
}

export const newTokenKey = () => randomBytes(32).toString('hex');

export interface TokenClaims {
  /** tenant */
  t: string;
  /** client id */
  c: string;
  /** expiry, seconds since the epoch */
  exp: number;
}

const sign = (key: string, body: string) => createHmac('sha256', key).update(body).digest('base64url');

export function signToken(key: string, claims: TokenClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${TOKEN_PREFIX}_${body}.${sign(key, body)}`;
}

/** The claims a token states, unverified (they name the key to check it with); null when it is no client token. */
export function readToken(token: string): { claims: TokenClaims; body: string; signature: string } | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const c = claims as TokenClaims;
  if (!c || typeof c.t !== 'string' || typeof c.c !== 'string' || !Number.isInteger(c.exp)) return null;
  return { claims: c, body: m[1], signature: m[2] };
}

export function validSignature(key: unknown, body: string, signature: string): boolean {
  if (typeof key !== 'string') return false;
  const expected = Buffer.from(sign(key, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

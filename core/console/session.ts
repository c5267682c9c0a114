// The console's session: the API's own tokens, kept in httpOnly cookies the page
// scripts cannot read. The access token is sent on every call the console makes;
// the refresh token rotates exactly as an API client's does (auth-routes.ts), so
// a session ends, is revoked and expires the same way in the console and the API.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';

export const COOKIES = {
  access: 'plinth_access',
  refresh: 'plinth_refresh',
  /** the company context chosen in the switcher (X-Company-Id) */
  company: 'plinth_company',
  /** the language chosen in the switcher (Accept-Language) */
  language: 'plinth_language',
} as const;

export interface TokenPair {
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
  refreshExpiresIn: number;
}

/** httpOnly and SameSite=Lax always; Secure when the page came over HTTPS (behind a proxy: TRUST_PROXY). */
export function cookieOptions(request: FastifyRequest, maxAgeSeconds?: number): CookieSerializeOptions {
  return { path: '/', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }) };
}

export function saveTokens(request: FastifyRequest, reply: FastifyReply, tokens: TokenPair): void {
  // the refresh token outlives the access token: an expired access cookie is renewed from it
  reply.setCookie(COOKIES.access, tokens.accessToken, cookieOptions(request, tokens.expiresIn));
  reply.setCookie(COOKIES.refresh, tokens.refreshToken, cookieOptions(request, tokens.refreshExpiresIn));
}

export function clearSession(request: FastifyRequest, reply: FastifyReply): void {
  for (const name of [COOKIES.access, COOKIES.refresh, COOKIES.company]) reply.clearCookie(name, cookieOptions(request));
}

/** Whether the browser holds a session at all (it may still have expired). */
export const hasSession = (request: FastifyRequest) => Boolean(request.cookies[COOKIES.access] || request.cookies[COOKIES.refresh]);

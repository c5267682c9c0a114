// Logging in and out of the console, and the company and language switchers.
// The login posts to the API's own POST /api/auth/login, so throttling, lockout
// and a suspended tenant behave as for any client; the tokens it answers go
// into httpOnly cookies (session.ts). Every form carries a CSRF token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kernel } from '../kernel.ts';
import type { Problem } from './api-client.ts';
import { COOKIES, clearSession, cookieOptions, hasSession, saveTokens, type TokenPair } from './session.ts';
import type { FormData } from './fields.ts';
import { sayFrom } from './texts.ts';
import { entryOf, opensFor, type MenuEntry } from '../context/menu-access.ts';

const YEAR = 365 * 24 * 3600;
const text = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : (v ?? '')).trim();

/** Where to go after a form: a path of this site only (no //host, no scheme), else home. */
function localPath(target: string | undefined): string {
  return target && /^\/(?![/\\])[^\s]*$/.test(target) ? target : '/';
}

/** The API's refusals of a login, as the form says them: keys of the console's texts */
const LOGIN_MESSAGES: Record<string, string> = {
  INVALID_CREDENTIALS: 'login.wrong',
  RATE_LIMITED: 'login.tooMany',
  TENANT_UNAVAILABLE: 'login.suspended',
  TENANT_MIGRATION_FAILED: 'login.repairing',
  TENANT_MIGRATING: 'login.migrating',
  DATABASE_UNAVAILABLE: 'login.noDatabase',
};
// before login no tenant is known, so the login page speaks the built-in English
const say = sayFrom();

/**
 * Where a login lands: `next`, unless it is the page of a menu entry that does
 * not open for the user (its route would refuse them): then home, which is
 * their first page.
 */
async function landing(app: FastifyInstance, request: FastifyRequest, menu: readonly MenuEntry[], next: string, accessToken: string): Promise<string> {
  const entry = entryOf(menu, next.split('?')[0]);
  if (!entry) return next;
  const res = await app.inject({ method: 'GET', url: '/api/auth/me', remoteAddress: request.ip, headers: { authorization: `Bearer ${accessToken}` } });
  if (res.statusCode !== 200) return '/';
  const me = res.json() as { isAdmin: boolean; permissions: string[] };
  return opensFor(entry, { isAdmin: me.isAdmin, codes: new Set(me.permissions) }) ? next : '/';
}

export function registerSessionPages(app: FastifyInstance, kernel: Kernel): void {
  const loginPage = (reply: FastifyReply, data: Record<string, unknown>, status = 200) =>
    reply
      .code(status)
      .header('cache-control', 'no-store')
      .view('login', { title: say('login.pageTitle'), csrf: reply.generateCsrf(), ...data }, { layout: 'layout.hbs' });

  app.get('/login', async (request, reply) => {
    const { next, tenant } = request.query as { next?: string; tenant?: string };
    if (hasSession(request) && !next) return reply.redirect('/', 303);
    return loginPage(reply, { next: localPath(next), tenant: tenant ?? (kernel.config.demoData ? 'demo' : ''), email: '' });
  });

  app.post('/login', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form = (request.body ?? {}) as FormData;
    const login = { tenant: text(form.tenant), email: text(form.email), password: Array.isArray(form.password) ? form.password[0] : (form.password ?? '') };
    const next = localPath(text(form.next));
    const errors: Record<string, string> = {};
    if (!login.tenant) errors.tenant = say('login.enterTenant');
    if (!login.email) errors.email = say('login.enterEmail');
    if (!login.password) errors.password = say('login.enterPassword');
    if (!Object.keys(errors).length) {
      const res = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: request.ip, payload: login });
      if (res.statusCode === 200) {
        const tokens = res.json() as TokenPair;
        saveTokens(request, reply, tokens);
        reply.clearCookie(COOKIES.company, cookieOptions(request));
        return reply.redirect(await landing(app, request, kernel.services.menu, next, tokens.accessToken), 303);
      }
      const problem = res.json() as Problem;
      for (const e of problem.errors ?? []) errors[e.path.replace(/^\//, '')] = say('login.fieldError', { field: e.path.replace(/^\//, ''), message: e.message });
      if (!problem.errors?.length) errors.form = LOGIN_MESSAGES[problem.code] ? say(LOGIN_MESSAGES[problem.code]) : problem.title;
      return loginPage(reply, { next, tenant: login.tenant, email: login.email, errors }, res.statusCode);
    }
    return loginPage(reply, { next, tenant: login.tenant, email: login.email, errors }, 400);
  });

  app.post('/logout', { preHandler: app.csrfProtection }, async (request, reply) => {
    const refreshToken = request.cookies[COOKIES.refresh];
    // ends the session's refresh-token family and its access tokens, as the API's logout does
    if (refreshToken) await app.inject({ method: 'POST', url: '/api/auth/logout', remoteAddress: request.ip, payload: { refreshToken } });
    clearSession(request, reply);
    return reply.redirect('/login', 303);
  });

  // the switchers: a choice kept in a cookie, sent to the API as X-Company-Id / Accept-Language
  const choose = (name: string, valid: (v: string) => boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const form = (request.body ?? {}) as FormData;
    const value = text(form.value);
    if (value && valid(value)) reply.setCookie(name, value, cookieOptions(request, YEAR));
    else reply.clearCookie(name, cookieOptions(request));
    return reply.redirect(localPath(text(form.back)), 303);
  };
  // the API checks the company on every call (403 COMPANY_FORBIDDEN, then the console falls back)
  app.post(
    '/console/company',
    { preHandler: app.csrfProtection },
    choose(COOKIES.company, (v) => /^[0-9a-f-]{36}$/i.test(v)),
  );
  app.post(
    '/console/language',
    { preHandler: app.csrfProtection },
    choose(COOKIES.language, (v) => kernel.config.consoleLanguages.includes(v)),
  );
}

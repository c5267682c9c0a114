// A browser's side of the console over app.inject: a cookie jar, the CSRF
// token of the last page, and forms posted as a browser posts them.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export class ConsoleSession {
  readonly #app: FastifyInstance;
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(app: FastifyInstance) {
    this.#app = app;
  }

  #remember(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = c.value === '' || c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() < Date.now());
      if (gone) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(res.body);
    if (token) this.csrf = token[1];
    return res;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.#remember(await this.#app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader, accept: 'text/html' } }));
  }

  /** Posts a form; the page's CSRF token goes with it unless the form names its own _csrf. */
  async post(url: string, form: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    if (!('_csrf' in form)) body.append('_csrf', this.csrf);
    for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    const res = await this.#app.inject({ method: 'POST', url, payload: body.toString(), headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' } });
    return this.#remember(res);
  }

  /** Logs in through the form; the answer is the login's redirect (or the form again). */
  async login(tenant: string, email: string, password: string, next = '/'): Promise<LightMyRequestResponse> {
    await this.get('/login');
    return this.post('/login', { tenant, email, password, next });
  }
}

/** The hrefs of the left-hand menu of a page. */
export function menuOf(html: string): string[] {
  const nav = /<nav class="menu"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '';
  return [...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
}

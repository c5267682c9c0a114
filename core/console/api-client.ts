// The console is a client of the HTTP API, in process: every page reads and
// writes through app.inject with the user's own access token, so the console
// passes the same authentication, scope compiler, validation, hooks and events
// as any API client, and can never show or change more than the API would.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { COOKIES, clearSession, saveTokens, type TokenPair } from './session.ts';

export interface Problem {
  status: number;
  code: string;
  title: string;
  detail?: string;
  errors?: { path: string; message: string }[];
}

export interface Answer<T = unknown> {
  status: number;
  ok: boolean;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  /** the body's bytes as sent (a file) */
  raw?: Buffer;
}

/** The session is gone (never logged in, expired, revoked): the page sends the browser to the login. */
export class LoginRequired extends Error {}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export class ConsoleApi {
  readonly #app: FastifyInstance;
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;
  #access: string | undefined;
  #company: string | undefined;

  constructor(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    this.#app = app;
    this.#request = request;
    this.#reply = reply;
    this.#access = request.cookies[COOKIES.access];
    this.#company = request.cookies[COOKIES.company];
  }

  get<T = unknown>(url: string, headers: Record<string, string> = {}): Promise<Answer<T>> {
    return this.call<T>('GET', url, undefined, headers);
  }

  async call<T = unknown>(method: Method, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    let answer = await this.#send<T>(method, url, body, headers);
    if (answer.status === 401 && (await this.#refresh())) answer = await this.#send<T>(method, url, body, headers);
    if (answer.status === 401) {
      clearSession(this.#request, this.#reply);
      throw new LoginRequired();
    }
    // a company the user has left since choosing it: fall back to their primary company
    if (answer.status === 403 && (answer.body as Problem).code === 'COMPANY_FORBIDDEN' && this.#company) {
      this.#company = undefined;
      this.#reply.clearCookie(COOKIES.company, { path: '/' });
      answer = await this.#send<T>(method, url, body, headers);
    }
    return answer;
  }

  /**
   * A file upload (multipart/form-data) streamed to an API route as it arrives. Sent
   * once: the page's load has renewed the session already, and a stream cannot be sent again.
   */
  async upload<T = unknown>(url: string, body: NodeJS.ReadableStream, headers: Record<string, string>): Promise<Answer<T>> {
    const answer = await this.#send<T>('POST', url, body, headers, true);
    if (answer.status === 401) {
      clearSession(this.#request, this.#reply);
      throw new LoginRequired();
    }
    return answer;
  }

  async #send<T>(method: Method, url: string, body: unknown, extra: Record<string, string>, stream = false): Promise<Answer<T>> {
    if (!this.#access) return { status: 401, ok: false, body: {} as T, headers: {} };
    const language = this.#request.cookies[COOKIES.language] ?? this.#request.headers['accept-language'];
    const res = await this.#app.inject({
      method,
      url,
      // the browser's address, so rate limits and logs see the user and not the console
      remoteAddress: this.#request.ip,
      headers: {
        authorization: `Bearer ${this.#access}`,
        ...(this.#company ? { 'x-company-id': this.#company } : {}),
        ...(language ? { 'accept-language': language } : {}),
        ...(body === undefined || stream ? {} : { 'content-type': 'application/json' }),
        'x-request-id': this.#request.id,
        ...extra,
      },
      ...(body === undefined ? {} : { payload: stream ? (body as NodeJS.ReadableStream) : JSON.stringify(body) }),
    });
    const json = /json/.test(String(res.headers['content-type'] ?? ''));
    return { status: res.statusCode, ok: res.statusCode < 300, body: (json && res.body ? res.json() : res.body || null) as T, headers: res.headers, raw: res.rawPayload };
  }

  #refreshing: Promise<boolean> | undefined;

  /** Renews the tokens from the refresh cookie once, however many calls of this request met a 401 at once (a second use of the token would end the session). */
  #refresh(): Promise<boolean> {
    this.#refreshing ??= this.#renew();
    return this.#refreshing;
  }

  async #renew(): Promise<boolean> {
    const refreshToken = this.#request.cookies[COOKIES.refresh];
    if (!refreshToken) return false;
    const res = await this.#app.inject({ method: 'POST', url: '/api/auth/refresh', remoteAddress: this.#request.ip, payload: { refreshToken } });
    if (res.statusCode !== 200) return false;
    const tokens = res.json() as TokenPair;
    saveTokens(this.#request, this.#reply, tokens);
    // a second call in this request must not spend the rotated token again
    this.#request.cookies[COOKIES.refresh] = tokens.refreshToken;
    this.#access = tokens.accessToken;
    return true;
  }
}

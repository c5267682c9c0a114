// Request helpers the catalog tests share (not a test file: tap runs *.test.ts only).
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { TAP } from 'tap';
import type { TestContext } from '../../helper.ts';

export type Method = NonNullable<InjectOptions['method']>;
export const UNKNOWN_ID = '01900000-0000-7000-8000-000000000000';

/** The JSON body; throws (failing the test) unless the status is the expected one. */
export function expectStatus(res: LightMyRequestResponse, status: number, what: string): any {
  if (res.statusCode !== status) throw new Error(`${what}: expected ${status}, got ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? undefined : res.json();
}

/** Asserts an RFC 9457 problem answer by status and code (never by message text). */
export function expectProblem(t: Pick<TAP, 'equal' | 'match'>, res: LightMyRequestResponse, status: number, code: string, what = '') {
  t.equal(res.statusCode, status, `${what} status ${status}`.trim());
  t.match(res.headers['content-type'], /^application\/problem\+json/, `${what} problem+json`.trim());
  t.equal(res.json().code, code, `${what} code ${code}`.trim());
}

/** A problem answer naming exactly these fields (JSON pointers in its `errors`). */
export function expectFieldProblem(t: Pick<TAP, 'equal' | 'match' | 'same'>, res: LightMyRequestResponse, status: number, code: string, paths: string[], what = '') {
  expectProblem(t, res, status, code, what);
  t.same(
    res.json().errors?.map((e: { path: string }) => e.path),
    paths,
    `${what}: names ${paths.join(', ')}`,
  );
}

export function catalogApi(ctx: TestContext, token: string) {
  let seq = 0;
  /** A request as `token`; a string payload goes out as raw JSON text. */
  const api = (method: Method, url: string, payload?: object | string, headers: Record<string, string> = {}) => {
    const raw = typeof payload === 'string';
    return ctx.as(token, { method, url, headers: raw ? { 'content-type': 'application/json', ...headers } : headers, ...(payload === undefined ? {} : { payload }) });
  };
  return {
    api,
    /** Creates a product (a fresh SKU and name unless given) and returns its body. */
    product: async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      expectStatus(await api('POST', '/api/products', { sku: `P-${++seq}`, name: `Product ${seq}`, price: '1.00', ...body }, headers), 201, 'create product'),
    /** Creates a category and returns its body. */
    category: async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      expectStatus(await api('POST', '/api/categories', { name: `category ${++seq}`, ...body }, headers), 201, 'create category'),
    next: () => ++seq,
  };
}

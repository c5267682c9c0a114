// Sends fuzz requests, checks each answer against the contract (oracle.ts) and
// keeps the world's pools in step with what succeeded. A breach does not stop
// the run: each distinct one (operation × kind) is kept with its first request
// and reported once at the end, so one defect cannot hide the next.
import { appendFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import type { ApiOperation } from '../api/describe.ts';
import { readPath } from '../api/dataset.ts';
import { contractBreach, cut } from '../api/oracle.ts';
import type { FuzzRequest } from './requests.ts';
import type { World } from './world.ts';

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const show = (req: FuzzRequest, res: LightMyRequestResponse) =>
  `${req.method} ${cut(req.path, 160)}${req.query ? `?${cut(req.query, 300)}` : ''} ` +
  `caller=${req.caller}${req.caller === 'forged' ? `(${cut(req.token ?? '', 60)})` : ''} headers=${cut(JSON.stringify(req.headers), 300)} ` +
  `body=${req.body ? `${JSON.stringify(req.body.type)} ${JSON.stringify(cut(req.body.text, 400))}` : '-'}` +
  `\n    -> ${res.statusCode} ${res.headers['content-type']} ${cut(res.body, 600)}`;

export class Recorder {
  requests = 0;
  readonly stats = new Map<string, Map<number, number>>();
  readonly breaches = new Map<string, { example: string; count: number }>();
  readonly world: World;
  readonly seed: number;

  constructor(world: World, seed: number) {
    this.world = world;
    this.seed = seed;
  }

  async send(name: string, req: FuzzRequest, op?: ApiOperation): Promise<LightMyRequestResponse> {
    // a forged caller's "token" is the whole Authorization header
    const headers: Record<string, string> = { ...req.headers, ...(req.token ? { authorization: req.caller === 'forged' ? req.token : `Bearer ${req.token}` } : {}) };
    if (req.body?.type) headers['content-type'] = req.body.type;
    const url = `${req.path}${req.query ? `?${req.query}` : ''}`;
    const res = await this.world.ctx.app.inject({
      method: req.method as 'GET',
      url,
      headers,
      ...(req.remoteAddress ? { remoteAddress: req.remoteAddress } : {}),
      ...(req.body ? { payload: req.body.text } : {}),
    });
    this.count(name, res.statusCode);
    if (process.env.FUZZ_LOG) appendFileSync(process.env.FUZZ_LOG, `${name} [${req.fault}] ${show(req, res)}\n`);
    const sent = `${req.method} ${url} ${decode(url)} ${JSON.stringify(headers)} ${req.body?.text ?? ''}`;
    const breach = contractBreach(res, sent) ?? (op ? this.#expected(op, req, res) : undefined);
    if (breach) this.note(name, breach, show(req, res));
    if (op) await this.#follow(op, req, res);
    return res;
  }

  /** One part broken, so the answer is known: no valid token is a 401; a non-operator on the platform area a 403. And tenants never see each other. */
  #expected(op: ApiOperation, req: FuzzRequest, res: LightMyRequestResponse): string | undefined {
    const { markers } = this.world;
    const other = req.caller === 'otherTenant' ? markers.a : ['admin', 'viewer', 'noRole'].includes(req.caller) ? markers.b : undefined;
    if (other && res.body.includes(other) && !`${req.path} ${req.query} ${req.body?.text ?? ''}`.includes(other)) return `another tenant's rows in the answer (marker ${other})`;
    if (req.fault !== 'auth' || op.auth === 'public') return undefined;
    const code = res.statusCode >= 400 ? (res.json() as { code?: string }).code : undefined;
    if ((req.caller === 'none' || req.caller === 'forged') && code !== 'UNAUTHENTICATED') return `a request without a valid token answered ${res.statusCode} ${code ?? ''}, not 401 UNAUTHENTICATED`;
    if (op.auth === 'platform' && req.caller !== 'none' && req.caller !== 'forged' && code !== 'PLATFORM_ONLY')
      return `a non-operator on the platform area answered ${res.statusCode} ${code ?? ''}, not 403 PLATFORM_ONLY`;
    return undefined;
  }

  /** The pools follow what the fuzz's own writes did. */
  async #follow(op: ApiOperation, req: FuzzRequest, res: LightMyRequestResponse): Promise<void> {
    const w = this.world;
    // a logout ends the caller's access tokens too: the world's callers log in again
    if (op.id === 'authLogout' && res.statusCode < 300) await w.renew(req.caller);
    if (op.auth === 'platform' && op.method === 'POST' && !op.pathParams.length && res.statusCode === 201) w.tenantIds.push(res.json().id);
    if (op.id === 'authRefresh' && res.statusCode === 200) w.refreshTokens.push(res.json().refreshToken);
    if (op.id === 'authLogin' && res.statusCode === 200) w.refreshTokens.push(res.json().refreshToken);
    if ((op.id === 'authRefresh' || op.id === 'authLogout') && res.statusCode < 300) {
      const used = req.body && (JSON.parse(req.body.text) as { refreshToken?: string }).refreshToken;
      if (used) w.refreshTokens.splice(w.refreshTokens.indexOf(used), 1);
    }
    if (w.refreshTokens.length > 50) w.refreshTokens.splice(0, w.refreshTokens.length - 50);
    if (!op.entity) return;
    const home = req.caller === 'admin' && [undefined, w.a.companyId].includes(req.headers['x-company-id']?.toLowerCase());
    if (res.statusCode === 201 && home && (op.kind === 'create' || op.kind === 'custom')) {
      const row = res.json() as Record<string, unknown>;
      if (typeof row.id !== 'string') return;
      const params = Object.fromEntries(op.pathParams.map((p) => [p, req.path.split('/')[op.path.split('/').indexOf(`{${p}}`)]]));
      const rows = w.pool.get(op.entity) ?? [];
      rows.push({ entity: op.entity, id: row.id, version: 1, body: {}, pathValues: readPath(w.api, op.entity, row.id, { ...row, ...params }) });
      w.pool.set(op.entity, rows);
    }
    if (res.statusCode === 204 && op.kind === 'delete')
      w.pool.set(
        op.entity,
        (w.pool.get(op.entity) ?? []).filter((r) => !req.path.endsWith(r.id)),
      );
  }

  /** One more request sent, and its status (0: no answer). */
  count(name: string, status: number): void {
    this.requests++;
    const counts = this.stats.get(name) ?? new Map<number, number>();
    this.stats.set(name, counts.set(status, (counts.get(status) ?? 0) + 1));
  }

  note(name: string, breach: string, example: string): void {
    const key = `${name}: ${breach.replace(/[:(].*$/s, '').trim()}`;
    const seen = this.breaches.get(key);
    if (seen) seen.count++;
    else this.breaches.set(key, { example: `${breach}\n    ${example}`, count: 1 });
  }

  statuses(name: string): string {
    return JSON.stringify(Object.fromEntries([...(this.stats.get(name) ?? [])].sort(([x], [y]) => x - y)));
  }

  report(t: Test): void {
    for (const [key, { example, count }] of this.breaches) {
      t.fail(`${key} (${count}x; rerun with FUZZ_SEED=${this.seed}, FUZZ_LOG=<file> logs every request)\n  ${example}`);
    }
  }
}

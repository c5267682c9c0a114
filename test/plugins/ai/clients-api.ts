// A world for the AI client tests: a kernel on a ManualClock, a tenant, users
// with and without the AI codes, and shortcuts to create clients, get tokens
// and call routes as a user or as a client.
import { ManualClock } from '../../../core/clock.ts';
import { build, type TestContext, type TestTenant } from '../../helper.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import type { LightMyRequestResponse } from 'fastify';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const START = new Date('2030-01-07T09:00:00.000Z');
export const MINUTE = 60_000;

export interface ClientsWorld {
  ctx: TestContext;
  clock: ManualClock;
  tenant: TestTenant;
  /** erp:ai:view */
  alice: { id: string; token: string };
  bob: { id: string; token: string };
  /** no AI code */
  nobody: { id: string; token: string };
  admin(method: string, url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  asUser(token: string, method: string, url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  /** a client of the user; its key and a token */
  client(userToken: string, body?: Record<string, unknown>): Promise<{ id: string; apiKey: string; token: string; body: any }>;
  tokenFor(apiKey: string): Promise<LightMyRequestResponse>;
  asClient(token: string, method: string, url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  /** the event types recorded for the tenant, oldest first */
  events(type?: string): Promise<{ type: string; entityId: string; payload: any }[]>;
  /** runs the module's presence sweep for the tenant, as the job runner would */
  sweep(): Promise<void>;
}

export async function clientsWorld(t: Teardown): Promise<ClientsWorld> {
  const clock = new ManualClock(START);
  const ctx = await build(t, { config: { clock } });
  const tenant = await ctx.tenant();
  const alice = await ctx.user(tenant, { codes: ['erp:ai:view', 'erp:pm:view'] });
  const bob = await ctx.user(tenant, { codes: ['erp:ai:view'] });
  const nobody = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  const asUser = (token: string, method: string, url: string, payload?: unknown) => ctx.as(token, { method: method as never, url, ...(payload === undefined ? {} : { payload: payload as never }) });
  const asClient = (token: string, method: string, url: string, payload?: unknown) =>
    ctx.app.inject({ method: method as never, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as never }) });
  const tokenFor = (apiKey: string) => ctx.app.inject({ method: 'POST', url: '/api/ai/client/token', headers: { 'x-api-key': apiKey } });
  const plugin = await import('../../../plugins/ai/index.ts');
  return {
    ctx,
    clock,
    tenant,
    alice,
    bob,
    nobody,
    asUser,
    asClient,
    tokenFor,
    admin: (method, url, payload) => asUser(tenant.adminToken, method, url, payload),
    async client(userToken, body = {}) {
      const res = await asUser(userToken, 'POST', '/api/ai/clients', { name: 'Desktop', ...body });
      if (res.statusCode !== 201) throw new Error(`create client: ${res.statusCode} ${res.body}`);
      const { apiKey, ...client } = res.json();
      const tok = await tokenFor(apiKey);
      if (tok.statusCode !== 200) throw new Error(`token: ${tok.statusCode} ${tok.body}`);
      return { id: client.id, apiKey, token: tok.json().token, body: res.json() };
    },
    async events(type) {
      const conn = ctx.kernel.dbs.main.em.getConnection();
      const rows = await conn.execute(`select type, entity_id as "entityId", payload from "${ctx.kernel.config.registrySchema}".events where tenant_id = ? order by id`, [tenant.id]);
      return (rows as { type: string; entityId: string; payload: any }[]).filter((r) => (type ? r.type === type : r.type.startsWith('ai.')));
    },
    async sweep() {
      const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM });
      await plugin.jobs!['presence-sweep'].handle(sys, {}, { id: 'test', attempt: 1, attempts: 1 });
    },
  };
}

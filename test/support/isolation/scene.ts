// The isolation matrix's cast: a victim tenant V with real rows of every entity
// in its company A, an intruder tenant X, a company B of V with its own
// administrator, users of A missing one route's codes or holding no role at
// all, a user holding every code but no admin role, and tokens forged from real
// ones. Intruders get rows of their own (mirror datasets), so their write
// bodies are valid where they stand and only the victim's ids are foreign.
import { build, PASSWORD, type TestContext, type TestTenant } from '../../helper.ts';
import type { Test } from 'tap';
import { loadApi, type Api } from '../api/describe.ts';
import { buildDataset, readUrl, type Dataset } from '../api/dataset.ts';
import { newMarker } from '../api/examples.ts';
import { forgedTokens } from '../api/tokens.ts';
import { ResponseWatch } from '../api/responses.ts';

export interface Scene {
  ctx: TestContext;
  api: Api;
  /** every 2xx answer of the scene and the matrix, held to the document */
  answers: ResponseWatch;
  V: TestTenant;
  X: TestTenant;
  companyB: string;
  victim: Dataset;
  mirrorB: Dataset;
  mirrorX: Dataset;
  tokens: { vAdmin: string; bAdmin: string; xAdmin: string; noRole: string; allCodes: string };
  /** a token of a user of A lacking exactly the codes that grant one action on one subject */
  lacking(action: string, subject: string): string;
  forged: Record<string, string>;
  /** the victim's administrator, and its dataset user (made an administrator too) */
  vAdminId: string;
  victimUser: { id: string; email: string; password: string };
  victimRefreshToken: string;
  /** what other tenants must never see, and what other companies of V must never see */
  needles: { tenant: string[]; company: string[] };
}

async function userToken(ctx: TestContext, tenant: TestTenant, email: string): Promise<string> {
  const res = await ctx.login(tenant.id, email, PASSWORD);
  if (res.statusCode !== 200) throw new Error(`login ${email}: ${res.body}`);
  return res.json().accessToken;
}

export async function buildScene(t: Test, seed: number): Promise<Scene> {
  const ctx = await build(t);
  const api = await loadApi(ctx.app, ctx.kernel);
  const answers = new ResponseWatch(api).watch(ctx.app);
  const V = await ctx.tenant();
  const X = await ctx.tenant();
  const as = (token: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => ctx.as(token, { method, url, ...(payload ? { payload } : {}) });
  const vAdminId = (await as(V.adminToken, 'GET', '/api/auth/me')).json().id as string;
  const adminRole = (await as(V.adminToken, 'GET', '/api/roles?search=admin')).json().items.find((r: { name: string }) => r.name === 'admin').id as string;
  const companyB = await ctx.company(V, 'B');

  // an administrator of V who belongs to company B only
  const b = await ctx.user(V, { codes: [], companies: [companyB] });
  await as(V.adminToken, 'PUT', `/api/users/${b.id}/roles`, { roleIds: [adminRole] });
  const bAdmin = await userToken(ctx, V, b.email);

  const victim = await buildDataset(ctx.app, api, { token: V.adminToken, marker: newMarker(seed, 'vx'), seed });
  const mirrorB = await buildDataset(ctx.app, api, { token: bAdmin, company: companyB, marker: newMarker(seed, 'mb'), seed: seed + 1 });
  const mirrorX = await buildDataset(ctx.app, api, { token: X.adminToken, marker: newMarker(seed, 'mx'), seed: seed + 2 });
  // the victim's own user becomes an administrator: the target of anyone who would take one over
  const victimUser = victim.first('User')!;
  await as(V.adminToken, 'PUT', `/api/users/${victimUser.id}/roles`, { roleIds: [adminRole] });

  const noRoleUser = await as(V.adminToken, 'POST', '/api/users', { email: `norole@${V.id}.test`, name: 'No role', password: PASSWORD, primaryCompanyId: V.companyId });
  const noRole = await userToken(ctx, V, noRoleUser.json().email);
  const allCodes = (await ctx.user(V, { codes: api.codes })).token;
  const lackingTokens = new Map<string, string>();
  for (const op of api.ops) {
    if (!op.can) continue;
    const missing = api.codesGranting(op.can.action, op.can.subject).sort().join(' ');
    if (!lackingTokens.has(missing)) lackingTokens.set(missing, (await ctx.user(V, { codes: api.codes.filter((c) => !missing.split(' ').includes(c)) })).token);
  }
  const victimRefreshToken = (await ctx.login(V.id, V.adminEmail, PASSWORD)).json().refreshToken as string;

  const companyRows = victim.rows.filter((r) => api.model(r.entity)?.scope === 'company');
  // write-only values carry the marker as well ("Wo-<marker>..."): the tenant needle covers them, and no one sees them at all
  const needles = {
    tenant: [V.id, V.companyId, vAdminId, V.adminEmail, victim.marker, ...victim.rows.map((r) => r.id)],
    company: [V.companyId, `${victim.marker}c`, ...companyRows.map((r) => r.id)],
  };
  // every row must still read back as its owner sees it: a precondition of what follows
  for (const row of victim.rows) if ((await as(V.adminToken, 'GET', readUrl(api, row))).statusCode !== 200) throw new Error(`victim row ${row.entity} unreadable`);
  return {
    ctx,
    api,
    answers,
    V,
    X,
    companyB,
    victim,
    mirrorB,
    mirrorX,
    vAdminId,
    victimRefreshToken,
    needles,
    victimUser: { id: victimUser.id, email: String(victimUser.body.email), password: String(victimUser.body.password) },
    tokens: { vAdmin: V.adminToken, bAdmin, xAdmin: X.adminToken, noRole, allCodes },
    lacking: (action, subject) => lackingTokens.get(api.codesGranting(action, subject).sort().join(' '))!,
    forged: forgedTokens(V.adminToken, X.adminToken, noRole),
  };
}

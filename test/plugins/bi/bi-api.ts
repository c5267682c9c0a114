// Request helpers the BI tests share (not a test file: tap runs *.test.ts only):
// users with BI codes, applications shared in each role, sheets and widgets.
import type { TestContext, TestTenant } from '../../helper.ts';
import { apiAs, expectStatus, type Api } from '../core/core-api.ts';

export { expectProblem, expectStatus, UNKNOWN_ID } from '../core/core-api.ts';

export const BI_USER = ['erp:bi:view'];
export const BI_ADMIN = ['erp:bi:admin'];
export const APP_ROLES = ['owner', 'editor', 'viewer'] as const;
export type AppRole = (typeof APP_ROLES)[number];

export interface BiUser {
  id: string;
  token: string;
  api: Api;
}

let seq = 0;

export function biApi(ctx: TestContext, tenant: TestTenant) {
  const user = async (codes = BI_USER, companies?: string[]): Promise<BiUser> => {
    const u = await ctx.user(tenant, { codes, ...(companies ? { companies } : {}) });
    return { id: u.id, token: u.token, api: apiAs(ctx, u.token) };
  };
  const app = async (as: BiUser, body: Record<string, unknown> = {}) => expectStatus(await as.api('POST', '/api/bi/apps', { name: `App ${++seq}`, ...body }), 201, 'create app');
  const share = async (owner: BiUser, appId: string, userId: string, role: AppRole) =>
    expectStatus(await owner.api('POST', `/api/bi/apps/${appId}/members`, { userId, role }), 201, `share as ${role}`);
  const sheet = async (as: BiUser, appId: string, body: Record<string, unknown> = {}) =>
    expectStatus(await as.api('POST', `/api/bi/apps/${appId}/sheets`, { name: `Sheet ${++seq}`, ...body }), 201, 'create sheet');
  const widget = async (as: BiUser, sheetId: string, body: Record<string, unknown>) => expectStatus(await as.api('POST', `/api/bi/sheets/${sheetId}/widgets`, body), 201, 'create widget');
  /** An application owned by a fresh user, with one user in each other role and an outsider (all holding erp:bi:view). */
  const team = async () => {
    const owner = await user();
    const a = await app(owner);
    const editor = await user();
    const viewer = await user();
    await share(owner, a.id, editor.id, 'editor');
    await share(owner, a.id, viewer.id, 'viewer');
    return { app: a, owner, editor, viewer, outsider: await user() };
  };
  return { user, app, share, sheet, widget, team };
}

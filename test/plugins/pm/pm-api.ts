// Request helpers the PM tests share (not a test file: tap runs *.test.ts only):
// users with project-management codes, projects with members in each role, tasks.
import type { TestContext, TestTenant } from '../../helper.ts';
import { apiAs, expectStatus, type Api } from '../core/core-api.ts';

export { expectFieldProblem, expectProblem, expectStatus, UNKNOWN_ID } from '../core/core-api.ts';

/** erp:pm:view alone: its grants include the user directory (name, e-mail) for members and assignees. */
const PM_USER = ['erp:pm:view'];
export const PM_ADMIN = ['erp:pm:admin'];
export const ROLES = ['owner', 'manager', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export interface PmUser {
  id: string;
  token: string;
  api: Api;
}

let seq = 0;
const nextKey = (prefix = 'P') => `${prefix}${++seq}${Math.floor(Math.random() * 1e5)}`.slice(0, 10);

export function pmApi(ctx: TestContext, tenant: TestTenant) {
  const user = async (codes = PM_USER): Promise<PmUser> => {
    const u = await ctx.user(tenant, { codes });
    return { id: u.id, token: u.token, api: apiAs(ctx, u.token) };
  };
  const project = async (as: PmUser, body: Record<string, unknown> = {}) =>
    expectStatus(await as.api('POST', '/api/pm/projects', { key: nextKey(), name: `Project ${++seq}`, ...body }), 201, 'create project');
  const member = async (owner: PmUser, projectId: string, userId: string, role: Role) =>
    expectStatus(await owner.api('POST', `/api/pm/projects/${projectId}/members`, { userId, role }), 201, `add ${role}`);
  const task = async (as: PmUser, body: Record<string, unknown> = {}) => expectStatus(await as.api('POST', '/api/pm/tasks', { title: `Task ${++seq}`, ...body }), 201, 'create task');
  const statuses = async (as: PmUser, projectId: string) => expectStatus(await as.api('GET', `/api/pm/status?projectId=${projectId}`), 200, 'statuses').items as Record<string, any>[];
  /** A project owned by a fresh user, with one user in each other role and an outsider. */
  const team = async () => {
    const owner = await user();
    const p = await project(owner);
    const byRole: Record<Role, PmUser> = { owner } as Record<Role, PmUser>;
    for (const role of ROLES.slice(1)) {
      byRole[role] = await user();
      await member(owner, p.id, byRole[role].id, role);
    }
    return { project: p, ...byRole, outsider: await user() };
  };
  return { user, project, member, task, statuses, team };
}

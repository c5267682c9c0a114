// The assistant tests' tenant (not a test file: tap runs *.test.ts only): named
// users to @mention (two Annas for an ambiguous one), projects the caller is a
// member of (two "Marketing" ones) and one of someone else's (#SEC), all made
// through the API as a client would.
import type { TestContext, TestTenant } from '../../helper.ts';
import { apiAs, expectStatus, type Api } from '../core/core-api.ts';

export { expectProblem, expectStatus, UNKNOWN_ID } from '../core/core-api.ts';

const AI_USER = ['erp:ai:view', 'erp:pm:view'];

export interface Person {
  id: string;
  name: string;
  email: string;
  token: string;
  api: Api;
}

const PEOPLE = ['Maria Rossi', 'Mario Bianchi', 'Hans Müller', 'Anna Keller', 'Anna Schmidt', 'Jörg Weber', 'Li Wei'];
const PROJECTS = [
  { key: 'WEB', name: 'Website relaunch' },
  { key: 'API', name: 'Public API' },
  { key: 'MOB', name: 'Mobile app' },
  { key: 'MKT', name: 'Marketing 2027' },
  { key: 'MKE', name: 'Marketing Europe' },
];

export async function assistantTenant(ctx: TestContext, tenant: TestTenant) {
  const admin = apiAs(ctx, tenant.adminToken);
  const person = async (name: string, codes = AI_USER): Promise<Person> => {
    const u = await ctx.user(tenant, { codes });
    const email = `${name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/ /g, '.')}@${tenant.id}.test`;
    expectStatus(await admin('PATCH', `/api/users/${u.id}`, { name, email }), 200, `name ${name}`);
    return { id: u.id, name, email, token: u.token, api: apiAs(ctx, u.token) };
  };
  const caller = await person('Carla Caller');
  const people: Record<string, Person> = {};
  for (const name of PEOPLE) people[name] = await person(name);
  const projects: Record<string, { id: string; key: string; name: string }> = {};
  for (const p of PROJECTS) projects[p.key] = expectStatus(await caller.api('POST', '/api/pm/projects', p), 201, `project ${p.key}`);
  const stranger = await person('Sam Stranger');
  projects.SEC = expectStatus(await stranger.api('POST', '/api/pm/projects', { key: 'SEC', name: 'Secret plans' }), 201, 'project SEC');
  return { admin, caller, people, projects, stranger, person };
}

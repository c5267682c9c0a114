// Factories of the PM social tests (comments, activity, notifications): a
// tenant with a project whose members hold each project role, a user outside
// it, and requests as each of them. With `workers`, the kernel delivers
// events to subscribers and runs jobs, on a registry of the file's own (so
// it never works other files' backlogs).
import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { build, type TestContext, type TestTenant } from '../../helper.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export type Call = (method: string, url: string, payload?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;

export interface Person {
  id: string;
  email: string;
  token: string;
  call: Call;
}

export interface World {
  ctx: TestContext;
  tenant: TestTenant;
  admin: Call;
  owner: Person;
  member: Person;
  viewer: Person;
  /** holds erp:pm:view, but is no member of the project */
  outsider: Person;
  projectId: string;
  /** a task of the project, made by the admin */
  task(body?: Record<string, unknown>): Promise<Record<string, any>>;
}

const log = { error: (o: unknown, m?: string) => console.error(m, o), warn: () => {} };

export function caller(ctx: TestContext, token: string): Call {
  return (method, url, payload, headers = {}) => ctx.as(token, { method: method as InjectOptions['method'], url, payload: payload as InjectOptions['payload'], headers });
}

/** A 2xx answer's body, or a thrown error naming the answer. */
export async function ok(res: Promise<LightMyRequestResponse> | LightMyRequestResponse): Promise<Record<string, any>> {
  const r = await res;
  if (r.statusCode >= 300) throw new Error(`${r.statusCode}: ${r.body}`);
  return r.statusCode === 204 ? {} : r.json();
}

export async function socialWorld(t: Teardown, opts: { workers?: boolean } = {}): Promise<World> {
  const ctx = await build(
    t,
    opts.workers
      ? {
          config: {
            registrySchema: `pm_social_${randomBytes(4).toString('hex')}`,
            workers: true,
            events: { enabled: true, pollMs: 20, batchSize: 500, perTenant: 100, tenantConcurrency: 5, retentionDays: 7, retryDelaySeconds: 1 },
          },
        }
      : {},
  );
  if (opts.workers) await ctx.kernel.startWorkers(log);
  const tenant = await ctx.tenant();
  const admin = caller(ctx, tenant.adminToken);
  const person = async (): Promise<Person> => {
    const u = await ctx.user(tenant, { codes: ['erp:pm:view'] });
    return { ...u, call: caller(ctx, u.token) };
  };
  const [owner, member, viewer, outsider] = [await person(), await person(), await person(), await person()];
  const project = await ok(admin('POST', '/api/pm/projects', { key: `S${randomBytes(3).toString('hex').toUpperCase()}`, name: 'Social' }));
  for (const [p, role] of [
    [owner, 'owner'],
    [member, 'member'],
    [viewer, 'viewer'],
  ] as const) {
    await ok(admin('POST', `/api/pm/projects/${project.id}/members`, { userId: p.id, role }));
  }
  return {
    ctx,
    tenant,
    admin,
    owner,
    member,
    viewer,
    outsider,
    projectId: project.id,
    task: (body = {}) => ok(admin('POST', '/api/pm/tasks', { projectId: project.id, title: 'Write the docs', ...body })),
  };
}

/** The local part of a user's e-mail: what `@name` mentions them by. */
export const handle = (p: Person) => p.email.split('@')[0];

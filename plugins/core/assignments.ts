// Which roles a user holds and which companies they belong to: read by anyone
// who may read the user, replaced as a whole by administrators (the routes are
// admin: true). Roles and companies reach a user's token at their next login
// or refresh; the tenant always keeps an active administrator.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LockMode, type EntityManager } from '@mikro-orm/core';
import type { Kernel } from '../../core/kernel.ts';
import { crudContext, httpError, pick, rolesChanged } from '../../core/plugin-api.ts';
import { entity, serviceOf } from './services.ts';
import { assertAdminLeft } from './admin-guard.ts';

type Row = Record<string, any>;
const MAX = 1000;
const page = <T>(items: T[]) => ({ items, page: 1, size: MAX, total: items.length });

/** The user (404 unless the caller may read them) and the request's context. */
async function target(request: FastifyRequest, kernel: Kernel) {
  const ctx = crudContext(request, kernel);
  const user = await serviceOf(kernel, 'User').read(ctx, (request.params as { id: string }).id);
  return { ctx, user };
}

export async function rolesOf(em: EntityManager, kernel: Kernel, userId: string) {
  const links = await em.find(entity(kernel, 'UserRole'), { userId }) as Row[];
  const roles = links.length ? await em.find(entity(kernel, 'Role'), { id: { $in: links.map((l) => l.roleId) } }, { orderBy: { name: 'asc' } }) as Row[] : [];
  return page(roles.map((r) => ({ id: r.id as string, name: r.name as string })));
}

async function companiesOf(em: EntityManager, kernel: Kernel, userId: string, prefs: string[]) {
  const links = await em.find(entity(kernel, 'UserCompany'), { userId }) as Row[];
  const companies = links.length ? await em.find(entity(kernel, 'Company'), { id: { $in: links.map((l) => l.companyId) } }, { orderBy: { code: 'asc' } }) as Row[] : [];
  return page(companies.map((c) => ({ id: c.id as string, code: c.code as string, name: pick(c.name, prefs).text, isActive: c.isActive as boolean })));
}

/** 400 naming each id that is no row of `name`. */
async function requireRows(em: EntityManager, kernel: Kernel, name: string, field: string, ids: string[]): Promise<Row[]> {
  const rows = ids.length ? await em.find(entity(kernel, name), { id: { $in: ids } }) as Row[] : [];
  const found = new Set(rows.map((r) => r.id));
  const errors = ids.flatMap((id, i) => (found.has(id) ? [] : [{ path: `/${field}/${i}`, message: `no ${name} with id ${id}` }]));
  if (errors.length) throw httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
  return rows;
}

/** Replaces the link rows of `userId` in `link` by one per id. */
async function replaceLinks(em: EntityManager, kernel: Kernel, link: string, key: string, userId: string, ids: string[]): Promise<void> {
  await em.nativeDelete(entity(kernel, link), { userId });
  for (const id of ids) em.create(entity(kernel, link), { userId, [key]: id } as never);
  await em.flush();
}

export async function listUserRoles(request: FastifyRequest, _reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { ctx, user } = await target(request, kernel);
  return rolesOf(ctx.em, kernel, user.id);
}

export async function setUserRoles(request: FastifyRequest, _reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { ctx, user } = await target(request, kernel);
  const { roleIds } = request.body as { roleIds: string[] };
  const result = await ctx.em.transactional(async (em) => {
    // the user's row first, as every user write locks it: role changes of one user go in turn
    const locked = await em.findOne(entity(kernel, 'User'), { id: user.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!locked) throw httpError('NOT_FOUND', `User ${user.id} does not exist`);
    await requireRows(em, kernel, 'Role', 'roleIds', roleIds);
    await replaceLinks(em, kernel, 'UserRole', 'roleId', user.id, roleIds);
    await assertAdminLeft(em, kernel, request.tenant!.schema);
    return rolesOf(em, kernel, user.id);
  });
  await rolesChanged(request);
  return result;
}

export async function listUserCompanies(request: FastifyRequest, _reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { ctx, user } = await target(request, kernel);
  return companiesOf(ctx.em, kernel, user.id, ctx.read.prefs);
}

export async function setUserCompanies(request: FastifyRequest, _reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { ctx, user } = await target(request, kernel);
  const { companyIds } = request.body as { companyIds: string[] };
  return ctx.em.transactional(async (em) => {
    await requireRows(em, kernel, 'Company', 'companyIds', companyIds);
    await replaceLinks(em, kernel, 'UserCompany', 'companyId', user.id, companyIds);
    return companiesOf(em, kernel, user.id, ctx.read.prefs);
  });
}

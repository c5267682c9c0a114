// The identity model of manifests/core.json as the kernel uses it: who a user
// is, which roles and companies they hold, and their refresh-token families.
import type { EntityManager } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { Kernel } from '../kernel.ts';
import type { Claims } from './tokens.ts';
import { hashRefreshToken } from './tokens.ts';

type Row = Record<string, any>;

export class Identity {
  #k: Kernel;
  constructor(kernel: Kernel) { this.#k = kernel; }

  #e(name: string) { return this.#k.model(name).schema; }

  async userByEmail(em: EntityManager, email: string): Promise<Row | null> {
    return em.findOne(this.#e('User'), { email: email.trim().toLowerCase() }) as Promise<Row | null>;
  }

  async userById(em: EntityManager, id: string): Promise<Row | null> {
    return em.findOne(this.#e('User'), { id }) as Promise<Row | null>;
  }

  async rolesOf(em: EntityManager, userId: string): Promise<Row[]> {
    const links = await em.find(this.#e('UserRole'), { userId }) as Row[];
    if (!links.length) return [];
    return em.find(this.#e('Role'), { id: { $in: links.map((l) => l.roleId) } }, { orderBy: { name: 'asc' } }) as Promise<Row[]>;
  }

  async companiesOf(em: EntityManager, userId: string): Promise<Row[]> {
    const links = await em.find(this.#e('UserCompany'), { userId }) as Row[];
    if (!links.length) return [];
    return em.find(this.#e('Company'), { id: { $in: links.map((l) => l.companyId) }, isActive: true }, { orderBy: { code: 'asc' } }) as Promise<Row[]>;
  }

  async claimsFor(em: EntityManager, tenantId: string, user: Row): Promise<Claims> {
    const [roles, companies] = await Promise.all([this.rolesOf(em, user.id), this.companiesOf(em, user.id)]);
    const cid = companies.map((c) => c.id as string);
    const pc = cid.includes(user.primaryCompanyId) ? user.primaryCompanyId : (cid[0] ?? null);
    return { sub: user.id, tid: tenantId, rol: roles.map((r) => r.name as string), cid, pc };
  }

  async storeRefreshToken(em: EntityManager, userId: string, hash: string, family: string | null): Promise<void> {
    em.create(this.#e('RefreshToken'), {
      userId, tokenHash: hash, family: family ?? uuidv7(),
      expiresAt: new Date(Date.now() + this.#k.config.refreshTokenTtlSeconds * 1000),
    } as never);
    await em.flush();
  }

  async findRefreshToken(em: EntityManager, token: string): Promise<Row | null> {
    return em.findOne(this.#e('RefreshToken'), { tokenHash: hashRefreshToken(token) }) as Promise<Row | null>;
  }

  /** Marks one token used; false if a concurrent request used it first. */
  async consumeRefreshToken(em: EntityManager, id: string): Promise<boolean> {
    return (await em.nativeUpdate(this.#e('RefreshToken'), { id, revokedAt: null }, { revokedAt: new Date() })) === 1;
  }

  async revokeFamily(em: EntityManager, family: string): Promise<void> {
    await em.nativeUpdate(this.#e('RefreshToken'), { family, revokedAt: null }, { revokedAt: new Date() });
  }

  async revokeAllOf(em: EntityManager, userId: string): Promise<void> {
    await em.nativeUpdate(this.#e('RefreshToken'), { userId, revokedAt: null }, { revokedAt: new Date() });
  }
}

// The identity model of manifests/core.json as the kernel uses it: who a user
// is, which roles and companies they hold, and their refresh-token families.
import type { EntityManager } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config.ts';
import type { EntityModel } from '../model/entity-model.ts';

/** What the identity model needs of the kernel: the core entities and the token lifetime. */
export interface IdentityDeps {
  config: Pick<Config, 'refreshTokenTtlSeconds'>;
  model(name: string): EntityModel;
}
import type { Claims } from './tokens.ts';
import { hashRefreshToken } from './tokens.ts';

type Row = Record<string, any>;

export class Identity {
  #k: IdentityDeps;
  constructor(kernel: IdentityDeps) {
    this.#k = kernel;
  }

  #e(name: string) {
    return this.#k.model(name).ormEntity;
  }

  async userByEmail(em: EntityManager, email: string): Promise<Row | null> {
    return em.findOne(this.#e('User'), { email: email.trim().toLowerCase() }) as Promise<Row | null>;
  }

  async userById(em: EntityManager, id: string): Promise<Row | null> {
    return em.findOne(this.#e('User'), { id }) as Promise<Row | null>;
  }

  async companiesOf(em: EntityManager, userId: string): Promise<Row[]> {
    const links = (await em.find(this.#e('UserCompany'), { userId })) as Row[];
    if (!links.length) return [];
    return em.find(this.#e('Company'), { id: { $in: links.map((l) => l.companyId) }, isActive: true }, { orderBy: { code: 'asc' } }) as Promise<Row[]>;
  }

  /** Who the token names: the user of the tenant (their rights are read per request). */
  claimsFor(tenantId: string, user: Row): Claims {
    return { sub: user.id, tid: tenantId };
  }

  /** Stores a new refresh token (of a new family unless one is given); answers its family. */
  /** A new session's family id: a UUIDv7 whose time is when its login began (see sessionStartedAt). */
  newFamily(startedAt: number): string {
    return uuidv7({ msecs: startedAt });
  }

  async storeRefreshToken(em: EntityManager, userId: string, hash: string, family: string | null): Promise<string> {
    const f = family ?? uuidv7();
    em.create(this.#e('RefreshToken'), {
      userId,
      tokenHash: hash,
      family: f,
      expiresAt: new Date(Date.now() + this.#k.config.refreshTokenTtlSeconds * 1000),
    } as never);
    await em.flush();
    return f;
  }

  /**
   * Consumes a refresh token and stores its successor in one transaction; false
   * if a concurrent request consumed it first. A loser's conditional update
   * waits on the winner's row lock, so by the time it learns it lost, the
   * winner's successor is committed and the loser's family revocation sees it.
   */
  async rotateRefreshToken(em: EntityManager, stored: Row, hash: string): Promise<boolean> {
    return em.transactional(async (tem) => {
      if (!(await this.consumeRefreshToken(tem, stored.id))) return false;
      await this.storeRefreshToken(tem, stored.userId, hash, stored.family);
      return true;
    });
  }

  async findRefreshToken(em: EntityManager, token: string): Promise<Row | null> {
    return em.findOne(this.#e('RefreshToken'), { tokenHash: hashRefreshToken(token) }) as Promise<Row | null>;
  }

  /** Marks one token used; false if a concurrent request used it first. */
  async consumeRefreshToken(em: EntityManager, id: string): Promise<boolean> {
    return (await em.nativeUpdate(this.#e('RefreshToken'), { id, revokedAt: null }, { revokedAt: new Date() })) === 1;
  }

  /**
   * Whether a token was rotated: its family holds a later one (ids are UUIDv7,
   * so later means greater; rotation stores the successor in the transaction
   * that consumes the token). A revoked token without one was the newest of a
   * session ended by a logout or a revocation, not one used twice.
   */
  async wasRotated(em: EntityManager, stored: Row): Promise<boolean> {
    return (await em.count(this.#e('RefreshToken'), { family: stored.family, id: { $gt: stored.id } })) > 0;
  }

  async revokeFamily(em: EntityManager, family: string): Promise<void> {
    await em.nativeUpdate(this.#e('RefreshToken'), { family, revokedAt: null }, { revokedAt: new Date() });
  }

  async revokeAllOf(em: EntityManager, userId: string): Promise<void> {
    await em.nativeUpdate(this.#e('RefreshToken'), { userId, revokedAt: null }, { revokedAt: new Date() });
  }
}

/** When a session's login began: the millisecond time a UUIDv7 family id carries. */
export const sessionStartedAt = (family: string) => parseInt(family.replace(/-/g, '').slice(0, 12), 16);

// Access tokens revoked before they expire. Two kinds of entry: per user (every
// token of (tenant, user) issued before a cut-off instant: logout everywhere,
// password change, deactivation, deletion) and per session (every token of one
// refresh-token family: logout, reuse of a rotated refresh token).
//
// Each process keeps the list in memory, so the check on every request is a map
// lookup; the table in the registry schema lets a restarted process know, and
// NOTIFY tells the other processes at once (their listener reloads the table
// after a reconnect and periodically). Entries older than the access-token
// lifetime are pruned: every token they name has expired by then.
import type { Databases } from '../db/databases.ts';
import type { PgListener } from '../db/pg-listener.ts';
import type { Claims } from './tokens.ts';
import { ensurePlatformTables, platformConnection } from './platform-tables.ts';

type Kind = 'user' | 'session';
interface Entry {
  kind: Kind;
  tenant: string;
  subject: string;
  at: number;
}

// a token signed just after its session was revoked (a refresh racing the
// revocation) outlives the revocation by that much, at most
const GRACE_MS = 60_000;
const PRUNE_EVERY_MS = 60_000;

// tenant → subject → instant; nested rather than one concatenated key: the
// claim strings come from fast-jwt's cache with their hashes computed, a
// concatenation would be a new string to hash on every request
type Entries = Map<string, Map<string, number>>;

export class Revocations {
  #dbs: Databases;
  #schema: string;
  #table: string;
  #horizonMs: number;
  /** tenant → user → cut-off (ms): tokens issued before it are revoked */
  #users: Entries = new Map();
  /** tenant → family → when it was revoked: every token of the session is */
  #sessions: Entries = new Map();
  #prunedAt = 0;

  constructor(dbs: Databases, schema: string, accessTtlSeconds: number) {
    this.#dbs = dbs;
    this.#schema = schema;
    this.#table = `"${schema}".revocations`;
    this.#horizonMs = accessTtlSeconds * 1000 + GRACE_MS;
  }

  get channel(): string {
    return `plinth_revocations_${this.#schema}`;
  }

  async ensure(): Promise<void> {
    await ensurePlatformTables(this.#dbs, `plinth:revocations:${this.#schema}`, [
      `create table if not exists ${this.#table} (
        tenant_id text not null,
        kind text not null check (kind in ('user', 'session')),
        subject text not null,
        cutoff timestamptz not null,
        primary key (tenant_id, kind, subject))`,
    ]);
    await this.reload();
  }

  listenOn(listener: PgListener): void {
    listener.on(this.channel, (payload) => this.#applyPayload(payload));
    listener.onReload(() => this.reload());
  }

  /** The hot path: after the JWT verify, one or two map lookups. */
  isRevoked(c: Pick<Claims, 'tid' | 'sub' | 'ims' | 'sid'>): boolean {
    const cutoff = this.#users.get(c.tid)?.get(c.sub);
    if (cutoff !== undefined && (c.ims ?? 0) < cutoff) return true;
    return c.sid !== undefined && this.#sessions.get(c.tid)?.has(c.sid) === true;
  }

  /** Every access token of the user issued until now stops working. */
  revokeUser(tenantId: string, userId: string): Promise<void> {
    return this.#record({ kind: 'user', tenant: tenantId, subject: userId, at: Date.now() });
  }

  /** Every access token of the session (refresh-token family) stops working. */
  revokeSession(tenantId: string, family: string): Promise<void> {
    return this.#record({ kind: 'session', tenant: tenantId, subject: family, at: Date.now() });
  }

  /** Merges the table into memory (never drops a newer entry a notification brought) and prunes. */
  async reload(): Promise<void> {
    const since = new Date(Date.now() - this.#horizonMs);
    const rows = (await platformConnection(this.#dbs).execute(`select tenant_id as "tenant", kind, subject, cutoff from ${this.#table} where cutoff >= ?`, [since])) as {
      tenant: string;
      kind: Kind;
      subject: string;
      cutoff: Date | string;
    }[];
    for (const r of rows) this.#apply({ kind: r.kind, tenant: r.tenant, subject: r.subject, at: new Date(r.cutoff).getTime() });
    await this.#prune(true);
  }

  async #record(e: Entry): Promise<void> {
    this.#apply(e);
    const conn = platformConnection(this.#dbs);
    await conn.execute(
      `insert into ${this.#table} (tenant_id, kind, subject, cutoff) values (?, ?, ?, ?)
       on conflict (tenant_id, kind, subject) do update set cutoff = greatest(${this.#table}.cutoff, excluded.cutoff)`,
      [e.tenant, e.kind, e.subject, new Date(e.at)],
    );
    // after the insert committed: a process that misses this reloads the row
    await conn.execute('select pg_notify(?, ?)', [this.channel, JSON.stringify([e.kind, e.tenant, e.subject, e.at])]);
    await this.#prune(false);
  }

  #applyPayload(payload: string): void {
    let v: unknown;
    try {
      v = JSON.parse(payload);
    } catch {
      return;
    }
    if (!Array.isArray(v) || v.length !== 4) return;
    const [kind, tenant, subject, at] = v;
    if ((kind !== 'user' && kind !== 'session') || typeof tenant !== 'string' || typeof subject !== 'string' || typeof at !== 'number') return;
    this.#apply({ kind, tenant, subject, at });
  }

  #apply(e: Entry): void {
    const entries = e.kind === 'user' ? this.#users : this.#sessions;
    let tenant = entries.get(e.tenant);
    if (!tenant) entries.set(e.tenant, (tenant = new Map()));
    if ((tenant.get(e.subject) ?? -Infinity) < e.at) tenant.set(e.subject, e.at);
  }

  /** Drops expired entries from memory and, at most once a minute (or when asked), from the table. */
  async #prune(always: boolean): Promise<void> {
    const now = Date.now();
    const oldest = now - this.#horizonMs;
    for (const entries of [this.#users, this.#sessions]) {
      for (const [id, tenant] of entries) {
        for (const [subject, at] of tenant) if (at < oldest) tenant.delete(subject);
        if (!tenant.size) entries.delete(id);
      }
    }
    if (!always && now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    await platformConnection(this.#dbs).execute(`delete from ${this.#table} where cutoff < ?`, [new Date(oldest)]);
  }
}

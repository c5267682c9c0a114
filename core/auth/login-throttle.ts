// Failed logins counted per account, in a table every process shares (login is
// the slow path: a query here is nothing next to scrypt). Two counters:
//   (tenant, e-mail, address): a few failures lock that address out of that
//     account for a while;
//   (tenant, e-mail) over all addresses: many failures lock the account for
//     every address that has not logged in to it successfully lately, so a
//     guessing attacker cannot lock the owner out from their usual address.
// Failures count while each follows the previous within the lock time; a lock
// lasts that long after the last failure counted. A locked attempt is refused
// before the password is checked. Unknown tenants and e-mails count alike, so
// the answers tell nothing about which accounts exist.
import type { Databases } from '../db/databases.ts';
import { ensurePlatformTables, platformConnection } from './platform-tables.ts';

export interface LoginThrottleSettings {
  /** failures per (tenant, e-mail, address) that lock the address out */
  addressMaxFailures: number;
  /** failures per (tenant, e-mail) over all addresses that lock untrusted addresses out */
  accountMaxFailures: number;
  /** counting window between failures, and how long a lock lasts */
  lockMs: number;
}

interface Row {
  address: string;
  failures: number;
  lastFailure: Date | string | null;
  trustedUntil: Date | string | null;
}

/** The address column of the account-wide counter (no client address looks like this). */
const ACCOUNT = '*';
const PRUNE_EVERY_MS = 60_000;
const time = (v: Date | string | null) => (v === null ? 0 : new Date(v).getTime());

export class LoginThrottle {
  #dbs: Databases;
  #schema: string;
  #table: string;
  #s: LoginThrottleSettings;
  #trustMs: number;
  #prunedAt = 0;

  /** trustMs: how long after a successful login its address is exempt from the account-wide lock */
  constructor(dbs: Databases, schema: string, settings: LoginThrottleSettings, trustMs: number) {
    this.#dbs = dbs;
    this.#schema = schema;
    this.#table = `"${schema}".login_attempts`;
    this.#s = settings;
    this.#trustMs = trustMs;
  }

  async ensure(): Promise<void> {
    await ensurePlatformTables(this.#dbs, `plinth:login-attempts:${this.#schema}`, [
      `create table if not exists ${this.#table} (
        tenant_id text not null,
        email text not null,
        address text not null,
        failures integer not null default 0,
        last_failure timestamptz,
        trusted_until timestamptz,
        primary key (tenant_id, email, address))`,
    ]);
  }

  /** Milliseconds until this address may try this account again; 0: now. */
  async lockedFor(tenantId: string, email: string, address: string): Promise<number> {
    const rows = (await platformConnection(this.#dbs).execute(
      `select address, failures, last_failure as "lastFailure", trusted_until as "trustedUntil" from ${this.#table}
       where tenant_id = ? and email = ? and address in (?, ?)`,
      [tenantId, email, address, ACCOUNT],
    )) as Row[];
    const now = Date.now();
    const own = rows.find((r) => r.address === address);
    const all = rows.find((r) => r.address === ACCOUNT);
    const until = (r: Row | undefined, max: number) => (r && r.failures >= max ? time(r.lastFailure) + this.#s.lockMs : 0);
    const ownUntil = until(own, this.#s.addressMaxFailures);
    const trusted = own !== undefined && time(own.trustedUntil) > now;
    const allUntil = trusted ? 0 : until(all, this.#s.accountMaxFailures);
    return Math.max(0, ownUntil - now, allUntil - now);
  }

  /** Counts a failure against the address and the account. */
  async failed(tenantId: string, email: string, address: string): Promise<void> {
    const now = Date.now();
    const stale = new Date(now - this.#s.lockMs);
    await platformConnection(this.#dbs).execute(
      `insert into ${this.#table} as a (tenant_id, email, address, failures, last_failure) values (?, ?, ?, 1, ?), (?, ?, ?, 1, ?)
       on conflict (tenant_id, email, address) do update set
         failures = case when a.last_failure is null or a.last_failure < ? then 1 else a.failures + 1 end,
         last_failure = excluded.last_failure`,
      [tenantId, email, address, new Date(now), tenantId, email, ACCOUNT, new Date(now), stale],
    );
    await this.#prune(now);
  }

  /** Clears the address's counter and trusts it against the account-wide lock. */
  async succeeded(tenantId: string, email: string, address: string): Promise<void> {
    const now = Date.now();
    await platformConnection(this.#dbs).execute(
      `insert into ${this.#table} as a (tenant_id, email, address, failures, trusted_until) values (?, ?, ?, 0, ?)
       on conflict (tenant_id, email, address) do update set failures = 0, last_failure = null, trusted_until = excluded.trusted_until`,
      [tenantId, email, address, new Date(now + this.#trustMs)],
    );
    await this.#prune(now);
  }

  /** At most once a minute: rows that neither count, lock nor trust anything any more. */
  async #prune(now: number): Promise<void> {
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    await platformConnection(this.#dbs).execute(`delete from ${this.#table} where (last_failure is null or last_failure < ?) and (trusted_until is null or trusted_until < ?)`, [
      new Date(now - this.#s.lockMs),
      new Date(now),
    ]);
  }
}

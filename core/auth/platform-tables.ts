// Tables of the auth layer that every process shares: they live in the
// registry schema of the main database (created by TenantRegistry.ensure()).
import type { Databases } from '../db/databases.ts';

/** Runs create-if-missing DDL once; the advisory lock keeps parallel starts from racing. */
export async function ensurePlatformTables(dbs: Databases, lockName: string, statements: string[]): Promise<void> {
  await dbs.main.em.fork().transactional(async (tem) => {
    const ctx = tem.getTransactionContext();
    await tem.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [lockName], 'all', ctx);
    for (const sql of statements) await tem.getConnection().execute(sql, [], 'run', ctx);
  });
}

export const platformConnection = (dbs: Databases) => dbs.main.em.getConnection();

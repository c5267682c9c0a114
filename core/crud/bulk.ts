// Bulk writes: creates, then updates, then deletes of one entity in one
// transaction, each through CrudService as a single write would go (scopes,
// field rules, hooks, events, audit, If-Match as `version`). All or nothing:
// each row runs under a savepoint, so one row's failure (even one the database
// raised) leaves the others able to run and report theirs; when any failed,
// the whole transaction rolls back and every failure is reported.
import { etag, inTransaction, type Bound, type CrudContext, type CrudService } from './crud-service.ts';
import { run, type Row } from '../data/sql.ts';

export type BulkOp = 'create' | 'update' | 'delete';

export interface BulkInput {
  create?: Record<string, unknown>[];
  update?: ({ id: string; version?: number } & Record<string, unknown>)[];
  delete?: { id: string; version?: number }[];
}

export interface BulkResult {
  created: Row[];
  updated: Row[];
  deleted: { id: string }[];
}

/** A row that failed: which list and index, its id (update, delete), and what was thrown. */
export interface BulkFailure {
  op: BulkOp;
  index: number;
  id?: string;
  error: unknown;
}

/** Thrown (after the rollback) when some row failed; nothing was written. */
export class BulkFailed extends Error {
  readonly failures: BulkFailure[];
  constructor(failures: BulkFailure[]) {
    super(`${failures.length} row(s) failed; nothing was written`);
    this.failures = failures;
  }
}

/**
 * Runs a bulk request. `isRowError` says whether an error belongs to its row
 * (a 4xx answer); anything else (a lost connection, a bug) is rethrown at once.
 */
export async function runBulk(service: CrudService, ctx: CrudContext, input: BulkInput, bound: Bound | undefined, isRowError: (err: unknown) => boolean): Promise<BulkResult> {
  const result = await inTransaction(ctx, async (tx) => {
    // inside: a try the kernel runs again (a lost deadlock) starts with none
    const failures: BulkFailure[] = [];
    const out: BulkResult = { created: [], updated: [], deleted: [] };
    const each = async <T>(op: BulkOp, index: number, id: string | undefined, fn: () => Promise<T>): Promise<T | undefined> => {
      await run(tx.em, 'savepoint bulk_row', []);
      try {
        const value = await fn();
        await run(tx.em, 'release savepoint bulk_row', []);
        return value;
      } catch (err) {
        if (!isRowError(err)) throw err;
        await run(tx.em, 'rollback to savepoint bulk_row', []);
        await run(tx.em, 'release savepoint bulk_row', []);
        failures.push({ op, index, ...(id ? { id } : {}), error: err });
        return undefined;
      }
    };
    for (const [i, body] of (input.create ?? []).entries()) {
      const row = await each('create', i, undefined, () => service.create(tx, body, {}, bound ?? {}));
      if (row) out.created.push(row);
    }
    for (const [i, { id, version, ...body }] of (input.update ?? []).entries()) {
      const row = await each('update', i, id, () => service.update(tx, id, body, { ifMatch: ifMatch(version), replace: false }, bound));
      if (row) out.updated.push(row);
    }
    for (const [i, { id, version }] of (input.delete ?? []).entries()) {
      if (await each('delete', i, id, async () => (await service.remove(tx, id, ifMatch(version), bound), true))) out.deleted.push({ id });
    }
    // a failure rolls everything back: throwing out of the transaction does it
    if (failures.length) throw new BulkFailed(failures);
    return out;
  });
  return result;
}

const ifMatch = (version: number | undefined) => (version === undefined ? undefined : etag(version));

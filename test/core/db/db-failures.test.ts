// Which database errors are worth the same request again a moment later (503
// DATABASE_UNAVAILABLE with Retry-After) and which say the request is wrong.
import t from 'tap';
import { isDatabaseUnavailable, sqlStateOf } from '../../../core/db/failures.ts';
import { mapError } from '../../../core/http/problem.ts';

const pgError = (code: string, message = 'from PostgreSQL') => Object.assign(new Error(message), { code });

t.test('retryable: the server unreachable or restarting, a transaction rolled back to let another go on', async (t) => {
  for (const code of ['08006', '57P01', '57P03', '53300', '40001', '40P01', 'ECONNRESET', 'ECONNREFUSED']) {
    t.ok(isDatabaseUnavailable(pgError(code)), code);
  }
  t.ok(isDatabaseUnavailable(new Error('wrapped', { cause: pgError('40P01', 'deadlock detected') })), 'a cause counts too');
  t.same(mapError(pgError('40P01', 'deadlock detected') as never).code, 'DATABASE_UNAVAILABLE', 'a deadlock victim answers 503, not 500');
});

t.test('not retryable: the request itself', async (t) => {
  for (const code of ['23505', '23503', '22003', '42P01', '42703', '25006']) t.notOk(isDatabaseUnavailable(pgError(code)), code);
  t.notOk(isDatabaseUnavailable(new Error('something else')));
});

t.test('the SQLSTATE of an error, wherever in its causes', async (t) => {
  t.equal(sqlStateOf(pgError('23505')), '23505');
  t.equal(sqlStateOf(Object.assign(new Error('mikro-orm'), { sqlState: '55P03' })), '55P03', 'MikroORM names it sqlState');
  t.equal(sqlStateOf(new Error('wrapped', { cause: new Error('again', { cause: pgError('40P01') }) })), '40P01', 'from a cause');
  t.equal(sqlStateOf(pgError('ECONNRESET')), undefined, 'a network code is no SQLSTATE');
  t.equal(sqlStateOf(new Error('plain')), undefined);
  t.equal(sqlStateOf(undefined), undefined);
});

t.test('a constraint violation maps to its problem wherever in the causes the driver put it', async (t) => {
  const clash = Object.assign(pgError('23505', 'duplicate key value violates unique constraint'), { detail: 'Key (company_id, sku)=(c1, X-1) already exists.' });
  for (const [label, err] of [
    ['the driver error itself', clash],
    ['wrapped by a module', new Error('could not save', { cause: clash })],
    ['wrapped twice', new Error('outer', { cause: new Error('inner', { cause: clash }) })],
  ] as const) {
    const m = mapError(err as never);
    t.equal(m.code, 'CONFLICT', label);
    t.same(m.errors, [{ path: '/sku', message: 'is already used by another row' }], `${label}: names the field, not the company or the value`);
  }
  t.equal(mapError(new Error('wrapped', { cause: pgError('23503') }) as never).code, 'CONFLICT', 'a foreign key violation under a wrapper');
  t.equal(mapError(new Error('wrapped', { cause: pgError('22003') }) as never).code, 'VALIDATION_FAILED', 'a number out of range under a wrapper');
  t.equal(mapError(new Error('wrapped', { cause: pgError('42P01') }) as never).code, 'INTERNAL', 'a state no request causes stays internal');
  t.equal(sqlStateOf(pgError('EPIPE')), undefined, 'a five-letter network code is no SQLSTATE either');
  t.equal(mapError(pgError('EPIPE') as never).code, 'DATABASE_UNAVAILABLE');
});

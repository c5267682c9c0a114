// Concurrent reuse of one refresh token: exactly one request wins, the others
// are reuse, and reuse kills the whole family, the winner's successor included,
// whatever the timing. Real concurrency on PostgreSQL; PGlite serialises the
// requests, and the outcome must be the same there.
import t from 'tap';
import { build, PASSWORD, type TestContext } from '../../helper.ts';

type Tokens = { accessToken: string; refreshToken: string };

const refresh = (ctx: TestContext, refreshToken: string) => ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken } });

const ctx = await build(t);
const tenant = await ctx.tenant();

for (const parallel of [2, 10]) {
  t.test(`${parallel} parallel refreshes with one token leave no live token in the family`, async (t) => {
    // several rounds: the race only shows when the losers' family revocation
    // overtakes the winner's insert of its successor
    for (let round = 0; round < 5; round++) {
      const login = await ctx.login(tenant.id, tenant.adminEmail, PASSWORD);
      t.equal(login.statusCode, 200, login.body);
      const first: Tokens = login.json();
      const results = await Promise.all(Array.from({ length: parallel }, () => refresh(ctx, first.refreshToken)));
      const winners = results.filter((r) => r.statusCode === 200);
      t.equal(winners.length, 1, `round ${round}: one winner`);
      for (const r of results.filter((r) => r.statusCode !== 200)) {
        t.equal(r.statusCode, 401, `round ${round}: a loser is 401`);
        t.equal(r.json().code, 'TOKEN_REUSED', `round ${round}: a loser is reuse`);
      }
      const won: Tokens = winners[0].json();
      const after = await refresh(ctx, won.refreshToken);
      t.equal(after.statusCode, 401, `round ${round}: the winner's new refresh token is revoked`);
      t.equal(after.json().code, 'UNAUTHENTICATED', `round ${round}: and reported as revoked (it was never used)`);
      const me = await ctx.as(won.accessToken, { method: 'GET', url: '/api/auth/me' });
      t.equal(me.statusCode, 401, `round ${round}: the winner's access token is revoked too`);
      t.equal(me.json().code, 'UNAUTHENTICATED', `round ${round}: as unauthenticated`);
    }
  });
}

t.test('a single refresh still rotates normally', async (t) => {
  const first: Tokens = (await ctx.login(tenant.id, tenant.adminEmail, PASSWORD)).json();
  const second = await refresh(ctx, first.refreshToken);
  t.equal(second.statusCode, 200, second.body);
  const third = await refresh(ctx, second.json().refreshToken);
  t.equal(third.statusCode, 200, 'the successor rotates again');
  t.equal((await ctx.as(third.json().accessToken, { method: 'GET', url: '/api/auth/me' })).statusCode, 200);
});

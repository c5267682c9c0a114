// Isolation matrix, generated from the OpenAPI document and the manifests:
// every operation that needs a token × every kind of caller who must not get
// at the victim's rows (no token, forged tokens, another tenant, another
// company of the same tenant, a user missing the route's codes or any role, a
// user manager against an administrator). Each answer has the status and code
// the route's guards say; no answer shows the victim's ids or texts; the
// victim's row answers exactly as an unknown id does; and writes leave every
// victim row as it was (read back by its owner); every 2xx answer, to every
// caller, keeps to its response schema in the document (support/api/responses.ts).
// MATRIX_SEED overrides the seed.
import t from 'tap';
import { PASSWORD } from '../helper.ts';
import { readUrl, type DataRow } from '../support/api/dataset.ts';
import { buildScene } from '../support/isolation/scene.ts';
import { variants } from '../support/isolation/variants.ts';
import { meets, probe, random } from '../support/isolation/probe.ts';
import { uniqueProbe } from '../support/isolation/unique.ts';

const SEED = Number(process.env.MATRIX_SEED ?? 20_261_123);

t.test('isolation matrix', async (t) => {
  const s = await buildScene(t, SEED);
  const rand = random(SEED);
  const owner = (url: string) => s.ctx.as(s.tokens.vAdmin, { method: 'GET', url });
  // a row as its owner reads it; a problem by status and code (its requestId differs every time)
  const state = async (row: DataRow) => {
    const res = await owner(readUrl(s.api, row));
    return res.statusCode === 200 ? res.body : `${res.statusCode} ${res.json().code}`;
  };
  const rowsNow = async () => {
    const out = new Map<string, string>();
    for (const r of s.victim.rows) out.set(r.id, await state(r));
    return out;
  };
  // how many rows the owner sees in each plain list: an intruder's write that landed in the victim's data shows here
  const lists = s.api.ops.filter((o) => o.kind === 'list' && !o.pathParams.length);
  const totalsNow = async () => {
    const out: Record<string, number> = {};
    for (const o of lists) out[o.id] = (await owner(o.path)).json().total;
    return out;
  };
  const before = await rowsNow();
  const totals = await totalsNow();
  // each write is compared with the rows as they were just before it, so a change is blamed on who made it
  const current = new Map(before);
  const all = variants(s);
  const ops = s.api.ops.filter((o) => o.auth !== 'public').sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
  let probes = 0;
  const perVariant = new Map<string, number>();
  t.comment(`seed ${SEED}: ${ops.length} operations, ${all.length} kinds of caller`);

  for (const op of ops) {
    await t.test(`${op.method} ${op.path}`, async (t) => {
      for (const v of all.filter((x) => x.applies(op))) {
        const p = await probe(s.ctx.app, s, op, v, rand);
        probes++;
        perVariant.set(v.name, (perVariant.get(v.name) ?? 0) + 1);
        const e = p.expected;
        if (e.kind === 'problem') t.same({ status: p.victim.status, code: p.victim.code }, { status: e.status, code: e.code }, `${v.name} (${p.request})`);
        else t.ok(meets(p.victim, e), `${v.name}: ${e.kind === 'refused' ? 'refused' : 'no server error'}, got ${p.victim.status} ${p.victim.code ?? ''} (${p.request})`);
        for (const problem of p.problems) t.fail(`${v.name}: ${problem} (${p.request})`);
        if (op.method === 'GET') continue;
        for (const row of s.victim.rows.filter((r) => p.request.includes(r.id))) {
          const now = await state(row);
          if (now !== current.get(row.id)) t.fail(`${v.name}: changed the victim's ${row.entity}: ${current.get(row.id)} -> ${now}`);
          current.set(row.id, now);
        }
        // a caller who shares the victim's tenant-wide data (company B's administrator, on a tenant-scoped entity)
        // rightly adds rows there (a run of their own report): the owner's tenant-wide lists count them from here on
        if (v.foreign && op.entity && !v.foreign(s, op.entity)) {
          for (const o of lists) if (o.entity && s.api.model(o.entity)?.scope === 'tenant') totals[o.id] = (await owner(o.path)).json().total;
        }
      }
      // what a write did to rows it did not name (a cascade, a recomputed sum)
      if (op.method === 'GET') return;
      for (const [id, now] of await rowsNow()) {
        if (now !== current.get(id)) t.fail(`a caller above changed the victim's ${s.victim.rows.find((r) => r.id === id)!.entity} ${id} as a side effect: ${current.get(id)} -> ${now}`);
        current.set(id, now);
      }
    });
  }
  t.comment(`${probes} probes (each a request for the victim's rows and one for unknown ones): ${[...perVariant].map(([n, c]) => `${n} ${c}`).join('; ')}`);

  // last: these rows carry the victim's unique values, which later answers to the same caller would rightly show
  t.test('unique values of the victim are free in another tenant and another company', async (t) => {
    for (const op of ops) {
      for (const v of all.filter((x) => x.applies(op))) {
        const unique = await uniqueProbe(s.ctx.app, s, op, v, SEED + probes++);
        if (unique) t.same(unique.victim, unique.fresh, `${v.name}: ${unique.fields.join(', ')} (${unique.request})`);
      }
    }
  });

  t.test('afterwards the victim has every row as it was, and no row more', async (t) => {
    const after = await rowsNow();
    for (const row of s.victim.rows) t.equal(after.get(row.id), before.get(row.id), `${row.entity} ${row.id}`);
    // not even its owner reads a write-only value back
    const secrets = s.victim.rows.flatMap((r) => Object.values(r.body).filter((x): x is string => typeof x === 'string' && x.startsWith('Wo-')));
    t.ok(secrets.length > 0, `${secrets.length} write-only values were written`);
    for (const secret of secrets)
      t.notOk(
        [...after.values()].some((body) => body.includes(secret)),
        `${secret} is in no answer to its owner`,
      );
    t.same(await totalsNow(), totals, "the owner's lists hold as many rows as before");
  });

  t.test("afterwards the victim's accounts and sessions still work", async (t) => {
    t.equal((await s.ctx.login(s.V.id, s.V.adminEmail, PASSWORD)).statusCode, 200, 'the administrator logs in');
    t.equal((await s.ctx.login(s.V.id, s.victimUser.email, s.victimUser.password)).statusCode, 200, "the victim's user logs in with their password");
    // another tenant's refresh token, re-addressed to the victim's tenant, is nobody's
    const xToken = (await s.ctx.login(s.X.id, s.X.adminEmail, PASSWORD)).json().refreshToken as string;
    const moved = await s.ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: `${s.V.id}${xToken.slice(xToken.indexOf('.'))}` } });
    t.same({ status: moved.statusCode, code: moved.json().code }, { status: 401, code: 'UNAUTHENTICATED' }, 'a refresh token moved to another tenant');
    const refresh = await s.ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: s.victimRefreshToken } });
    t.equal(refresh.statusCode, 200, "the victim's refresh token still refreshes");
    t.equal((await owner('/api/auth/me')).statusCode, 200, "the victim's access token still works");
  });

  t.test('every 2xx answer above, to every caller, is one the document promises', async (t) => s.answers.report(t));
});

// Kernel capabilities the CRM module stands on, without HTTP: exact decimal
// formulas, and the loader's checks of formulas, sums, state machines, the
// audit log and nested route paths (each fault names file and JSON pointer).
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { Formula, formatRounded, parseDecimal } from '../../../core/decimal.ts';
import { loadManifests } from '../../../core/manifest/loader.ts';
import { ManifestError } from '../../../core/manifest/errors.ts';
import { copyManifests, editManifest, entityOf, type Json } from '../../fixtures/kernels.ts';

t.test('formulas: exact rationals, one rounding half away from zero', async (t) => {
  const values: Record<string, string | null> = { q: '3', p: '0.35', d: '0.05', n: null };
  const run = (src: string, scale = 2) => {
    const v = new Formula(src).evaluate((f) => values[f]);
    return v && formatRounded(v, scale);
  };
  t.equal(run('q * p * (1 - d)'), '1.00', '0.9975');
  t.equal(run('q * p * (1 - d)', 4), '0.9975');
  t.equal(run('1.005 * 1'), '1.01', 'half-up where a float says 1.00');
  t.equal(run('0 - 1.005'), '-1.01', 'half away from zero');
  t.equal(run('-0.001'), '0.00', 'no negative zero');
  t.equal(run('0.1 + 0.2', 20), '0.30000000000000000000');
  t.equal(run('1 / 3', 6), '0.333333');
  t.equal(run('q * n'), null, 'null in, null out');
  t.same(new Formula('a * (b - c) / 2').fields, ['a', 'b', 'c']);
  for (const bad of ['a *', '(a', 'a b', 'a % b', '']) t.throws(() => new Formula(bad), bad);
  t.same(parseDecimal('-12.50'), { n: -1250n, d: 100n });
});

async function refused(t: Test, dir: string, pointer: string): Promise<void> {
  const err = await loadManifests(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ManifestError)) {
    t.fail(`expected a ManifestError, got ${String(err)}`);
    return;
  }
  t.equal(err.file, join(dir, 'crm.json'));
  t.equal(err.pointer, pointer, 'pointer');
}

const faults: [string, (m: Json) => void, string][] = [
  [
    'a formula on a text field',
    (m) => {
      entityOf(m, 'QuoteLine').fields.sku.formula = 'quantity';
    },
    '/entities/6/fields/sku',
  ],
  [
    'a formula that does not parse',
    (m) => {
      entityOf(m, 'QuoteLine').fields.netAmount.formula = 'quantity *';
    },
    '/entities/6/fields/netAmount/formula',
  ],
  [
    'a formula naming no number field',
    (m) => {
      entityOf(m, 'QuoteLine').fields.netAmount.formula = 'quantity * description';
    },
    '/entities/6/fields/netAmount/formula',
  ],
  [
    'a formula using a later computed field',
    (m) => {
      entityOf(m, 'QuoteLine').fields.netAmount.formula = 'lineTotal * 1';
    },
    '/entities/6/fields/netAmount/formula',
  ],
  [
    'a sum over no entity',
    (m) => {
      entityOf(m, 'Quote').fields.total.sum.entity = 'Nope';
    },
    '/entities/5/fields/total/sum/entity',
  ],
  [
    'a sum by a field not pointing here',
    (m) => {
      entityOf(m, 'Quote').fields.total.sum.by = 'position';
    },
    '/entities/5/fields/total/sum/by',
  ],
  [
    'a sum of no decimal',
    (m) => {
      entityOf(m, 'Quote').fields.total.sum.field = 'description';
    },
    '/entities/5/fields/total/sum/field',
  ],
  [
    'a sequence on a text field',
    (m) => {
      entityOf(m, 'QuoteLine').fields.sku.sequence = {};
    },
    '/entities/6/fields/sku/sequence',
  ],
  [
    'a sequence per no field',
    (m) => {
      entityOf(m, 'QuoteLine').fields.position.sequence = { per: 'nope' };
    },
    '/entities/6/fields/position/sequence/per',
  ],
  [
    'transitions on no enum',
    (m) => {
      entityOf(m, 'Quote').transitions.field = 'number';
    },
    '/entities/5/transitions/field',
  ],
  [
    'a move to an unknown state',
    (m) => {
      entityOf(m, 'Quote').transitions.moves.draft = ['sent', 'won'];
    },
    '/entities/5/transitions/moves/draft',
  ],
  [
    'an unknown initial state',
    (m) => {
      entityOf(m, 'Quote').transitions.initial = ['open'];
    },
    '/entities/5/transitions/initial',
  ],
  [
    'an unknown locked state',
    (m) => {
      entityOf(m, 'Quote').transitions.lockedIn = ['signed'];
    },
    '/entities/5/transitions/lockedIn',
  ],
  [
    'audit without a log',
    (m) => {
      delete m.auditLog;
    },
    '/entities/0/audit',
  ],
  [
    'a log entity lacking a field',
    (m) => {
      delete entityOf(m, 'ActivityLog').fields.changes;
    },
    '/auditLog',
  ],
  [
    'a log of no entity',
    (m) => {
      m.auditLog = 'Nope';
    },
    '/auditLog',
  ],
  [
    'a path parameter naming no ref',
    (m) => {
      m.routes.find((r: Json) => r.entity === 'QuoteLine').path = '/api/crm/quotes/:quote/lines';
    },
    '/routes/6/path',
  ],
];
for (const [what, mutate, pointer] of faults) {
  t.test(`refused: ${what}`, async (t) => {
    const dir = copyManifests(t);
    editManifest(dir, 'crm.json', mutate);
    await refused(t, dir, pointer);
  });
}

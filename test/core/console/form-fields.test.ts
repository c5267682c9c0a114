// The generic form's inputs from GET /api/meta's fields: an enum's options with
// the labels the API gives, a money field with its currency, a box and a
// select starting at the manifest's default, a required company reference at
// the user's current company, and a cron field as presets.
import t from 'tap';
import { defaultsOf, fieldInput as drawn } from '../../../core/console/form-fields.ts';
import type { MetaEntity, MetaField } from '../../../core/console/fields.ts';

const field = (f: Partial<MetaField> & Pick<MetaField, 'name' | 'type'>): MetaField => ({
  label: f.name,
  widget: '',
  required: false,
  readOnly: false,
  writeOnly: false,
  translatable: false,
  filter: false,
  sort: false,
  search: false,
  ...f,
});
const entity = (fields: MetaField[]): MetaEntity =>
  ({ name: 'Thing', module: 'x', label: 'Thing', scope: 'tenant', path: '/api/things', actions: ['read', 'create'], listColumns: [], defaultSort: 'id', fields }) as unknown as MetaEntity;
/** an input's descriptor, as the field partial reads it */
const fieldInput = (...args: Parameters<typeof drawn>) => drawn(...args) as Record<string, any>;
const ctx = { mode: 'create' as const, offered: ['en'], chosen: '' };

t.test("an enum's options: labels from the API, else the value", async (t) => {
  const status = field({ name: 'status', type: 'enum', values: ['open', 'won'] });
  t.same(fieldInput(status, { status: 'won' }, ctx).options, [
    { value: 'open', label: 'open', selected: false },
    { value: 'won', label: 'won', selected: true },
  ]);
  const labelled = { ...status, valueLabels: { open: 'Offen', won: 'Gewonnen' } };
  t.same(
    fieldInput(labelled, {}, ctx).options?.map((o: { label: string }) => o.label),
    ['Offen', 'Gewonnen'],
  );
});

t.test('a money field shows the currency of its row', async (t) => {
  const amount = field({ name: 'amount', type: 'decimal' });
  const quote = entity([amount, field({ name: 'currency', type: 'string', label: 'Currency' })]);
  t.match(fieldInput(amount, { amount: '10.00', currency: 'EUR' }, { ...ctx, entity: quote }), { widget: 'decimal', currency: 'EUR' });
  t.match(fieldInput(amount, {}, { ...ctx, entity: quote }), { currencyField: 'Currency' }, 'no currency yet: which field holds it');
  t.match(fieldInput({ ...amount, currency: 'currency' } as MetaField, { currency: 'NOK' }, ctx), { currency: 'NOK' }, "meta's currency hint");
  t.notOk('currency' in fieldInput(amount, { amount: '1' }, { ...ctx, entity: entity([amount]) }), 'an entity without one: a plain number');
  t.notOk('currency' in fieldInput(field({ name: 'probability', type: 'integer' }), { currency: 'EUR' }, { ...ctx, entity: quote }), 'an integer is money only when meta says so');
});

t.test("a new form starts at the manifest's defaults and the current company", async (t) => {
  const account = entity([
    field({ name: 'companyId', type: 'ref', entity: 'Company', required: true }),
    field({ name: 'security', type: 'enum', values: ['none', 'tls'], default: 'tls' }),
    field({ name: 'isActive', type: 'boolean', default: true }),
    field({ name: 'archived', type: 'boolean', default: false }),
    field({ name: 'primaryCompanyId', type: 'ref', entity: 'Company' }),
  ]);
  const values = defaultsOf(account, { companyId: 'c-1' });
  t.same(values, { companyId: 'c-1', security: 'tls', isActive: 'true', archived: 'false' }, 'an optional company reference stays empty');
  t.same(defaultsOf(account), { security: 'tls', isActive: 'true', archived: 'false' }, 'without a current company, none');
  t.equal(fieldInput(account.fields[2], values, ctx).checked, true);
  t.equal(fieldInput(account.fields[3], values, ctx).checked, false);
  t.equal(fieldInput(account.fields[1], values, ctx).options?.find((o: { selected: boolean; value: string }) => o.selected)?.value, 'tls');
});

t.test('a cron field: presets from the stored cron, or as the user sent them', async (t) => {
  const schedule = field({ name: 'schedule', type: 'string', widget: 'cron' });
  t.match(fieldInput(schedule, { schedule: '0 8 * * 1' }, ctx), {
    widget: 'cron',
    names: { preset: 'schedule:preset', cron: 'schedule' },
    time: '08:00',
    cron: '',
  });
  const weekly = fieldInput(schedule, { schedule: '0 8 * * 1' }, ctx) as { presets: { value: string; selected: boolean }[]; weekdays: { value: string; selected: boolean }[] };
  t.equal(weekly.presets.find((p) => p.selected)?.value, 'weekly');
  t.equal(weekly.weekdays.find((d) => d.selected)?.value, '1');
  t.match(fieldInput(schedule, { schedule: '*/5 * * * *' }, ctx), { cron: '*/5 * * * *' }, 'any other cron is custom');
  const sent = fieldInput(schedule, { 'schedule:preset': 'monthly', 'schedule:time': '09:15', 'schedule:monthday': '40', schedule: '' }, ctx) as {
    presets: { value: string; selected: boolean }[];
    monthday: string;
  };
  t.equal(sent.presets.find((p) => p.selected)?.value, 'monthly', 'what the user chose stays');
  t.equal(sent.monthday, '40');
  t.equal(fieldInput(field({ name: 'note', type: 'string' }), {}, ctx).widget, 'text', 'only the cron hint makes one');
});

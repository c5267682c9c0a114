// A schedule's cron in words, from the presets' own patterns only; the presets'
// inputs back to a cron, and their faults as text keys.
import t from 'tap';
import { cronOfInputs, cronWords, presetOf } from '../../../core/console/cron-words.ts';

const say = (key: string, values?: Record<string, unknown>) => (values ? `${key} ${JSON.stringify(values)}` : key);

t.test('the presets in words', async (t) => {
  t.equal(cronWords(null, say), 'cron.onDemand');
  t.equal(cronWords('  ', say), 'cron.onDemand');
  t.equal(cronWords('0 8 * * *', say), 'cron.daily {"time":"08:00"}');
  t.equal(cronWords('30 17 * * 1', say), 'cron.weekly {"day":"cron.day.1","time":"17:30"}');
  t.equal(cronWords('0 8 * * 7', say), 'cron.weekly {"day":"cron.day.0","time":"08:00"}', 'Sunday is 0 or 7');
  t.equal(cronWords('5 0 15 * *', say), 'cron.monthly {"day":15,"time":"00:05"}');
});

t.test('any other cron shows as written', async (t) => {
  for (const cron of ['*/5 * * * *', '0 8 * * 1-5', '0 8 1 1 *', '0 0 8 * * 1', '0 8 * * MON', '0 25 * * *', '0 8 32 * *', '0 8 1 * 1']) t.equal(cronWords(cron, say), cron, cron);
});

t.test('a cron as its preset, for the form', async (t) => {
  t.match(presetOf('0 8 * * 1'), { preset: 'weekly', time: '08:00', weekday: 1 });
  t.match(presetOf('15 6 28 * *'), { preset: 'monthly', time: '06:15', monthday: 28 });
  t.match(presetOf('0 8 * * 1-5'), { preset: 'custom', cron: '0 8 * * 1-5' });
  t.match(presetOf(undefined), { preset: 'none', cron: '' });
});

t.test('the preset inputs as a cron, and what is wrong with them', async (t) => {
  t.same(cronOfInputs({ preset: 'none', cron: '0 8 * * *' }), { cron: '' });
  t.same(cronOfInputs({ preset: 'daily', time: '07:05' }), { cron: '5 7 * * *' });
  t.same(cronOfInputs({ preset: 'weekly', time: '08:00', weekday: '1' }), { cron: '0 8 * * 1' });
  t.same(cronOfInputs({ preset: 'monthly', time: '23:59', monthday: '31' }), { cron: '59 23 31 * *' });
  t.same(cronOfInputs({ preset: 'custom', cron: ' 0 8 * * 1-5 ' }), { cron: '0 8 * * 1-5' });
  t.same(cronOfInputs({ cron: '0 9 * * *' }), { cron: '0 9 * * *' }, 'without a preset the cron input stands');
  t.same(cronOfInputs({ preset: 'custom', cron: '' }), { error: 'cron.customMissing' });
  t.same(cronOfInputs({ preset: 'daily', time: '24:00' }), { error: 'cron.badTime' });
  t.same(cronOfInputs({ preset: 'daily', time: '' }), { error: 'cron.badTime' });
  t.same(cronOfInputs({ preset: 'weekly', time: '08:00', weekday: '7' }), { error: 'cron.badWeekday' });
  t.same(cronOfInputs({ preset: 'monthly', time: '08:00', monthday: '0' }), { error: 'cron.badMonthday' });
  for (const preset of ['daily', 'weekly', 'monthly'] as const) {
    const made = cronOfInputs({ preset, time: '08:30', weekday: '3', monthday: '12' });
    t.match(presetOf('cron' in made ? made.cron : ''), { preset, time: '08:30' }, `${preset} reads back as itself`);
  }
});

// Language negotiation: which languages a request prefers (Accept-Language),
// which one a plain-string write is stored under (Content-Language), and which
// stored text a read picks.
import t from 'tap';
import { languagePreference, parseAcceptLanguage, pick, writeLanguage } from '../../core/i18n.ts';

t.test('languagePreference: by quality, each tag then its primary subtag, the fallback last', async (t) => {
  t.same(languagePreference('de-CH, fr;q=0.8, en;q=0.9', 'it'), ['de-ch', 'de', 'en', 'fr', 'it']);
  // equal weights keep the header's order
  t.same(languagePreference('fr;q=0.5, en;q=0.5', 'de'), ['fr', 'en', 'de']);
  t.same(languagePreference('en;q=0.3, en-GB', 'de'), ['en-gb', 'en', 'de'], 'a repeated language appears once, at its best place');
  t.same(languagePreference('de, en', 'de'), ['de', 'en'], 'the fallback is not repeated');
  t.same(languagePreference('EN-us', 'de'), ['en-us', 'en', 'de'], 'tags are lower-cased');
  t.same(languagePreference('en; Q = 0.5 , fr', 'de'), ['fr', 'en', 'de'], 'spaces and upper-case Q accepted');
  t.same(languagePreference('en;q=1.000, fr;q=0.999', 'de'), ['en', 'fr', 'de'], 'three decimals');
});

t.test('languagePreference: no header, wildcards and refused languages', async (t) => {
  t.same(languagePreference(undefined, 'de'), ['de']);
  t.same(languagePreference('', 'de'), ['de']);
  t.same(languagePreference('*', 'de'), ['de'], '"*" names no language: the fallback');
  t.same(languagePreference('fr, *;q=0.5', 'de'), ['fr', 'de']);
  t.same(languagePreference('fr, en;q=0', 'de'), ['fr', 'de'], 'q=0 means "not this one"');
  t.same(languagePreference('fr, en;q=0.000', 'de'), ['fr', 'de']);
});

t.test('languagePreference: a malformed entry is dropped, never ranked first', async (t) => {
  // each of these weights is outside RFC 9110's qvalue grammar
  for (const q of ['2', '1.5', '1.0001', '0.1234', 'abc', '', '-1', '0x1', '1e0', 'Infinity']) {
    t.same(languagePreference(`fr;q=0.5, en;q=${q}`, 'de'), ['fr', 'de'], `q=${q}`);
  }
  for (const tag of ['de_DE', 'en us', '123', 'toolonglanguage', 'en-', '-en', 'en--us', '<script>', 'é']) {
    t.same(languagePreference(`${tag}, fr;q=0.5`, 'de'), ['fr', 'de'], JSON.stringify(tag));
  }
  t.same(languagePreference(',,; ;q=1, fr', 'de'), ['fr', 'de'], 'empty entries');
  t.same(languagePreference('en;level=1', 'de'), ['en', 'de'], 'other parameters ignored');
});

t.test('parseAcceptLanguage reads at most 20 entries', async (t) => {
  // bounds the work one header can cause; the 21st entry is the best one here
  const header = [...Array.from({ length: 20 }, (_, i) => `x${String.fromCharCode(97 + i)};q=0.1`), 'fr'].join(',');
  const tags = parseAcceptLanguage(header);
  t.equal(tags.length, 20);
  t.notOk(tags.includes('fr'));
});

t.test('writeLanguage: the first Content-Language tag, else the fallback', async (t) => {
  t.equal(writeLanguage('de-CH', 'en'), 'de-ch');
  t.equal(writeLanguage(' FR , en', 'de'), 'fr');
  t.equal(writeLanguage(undefined, 'en'), 'en');
  for (const bad of ['', ' ', '*', 'de_DE', 'de;q=1', ', de', 'x'.repeat(9)]) t.equal(writeLanguage(bad, 'en'), 'en', JSON.stringify(bad));
});

t.test('pick: the first preferred language held, else any, reporting which', async (t) => {
  const value = { de: 'Haus', en: 'House', fr: 'Maison' };
  t.same(pick(value, ['fr', 'en']), { text: 'Maison', lang: 'fr' });
  t.same(pick(value, ['it', 'en']), { text: 'House', lang: 'en' });
  t.same(pick(value, ['it']), { text: 'Haus', lang: 'de' }, 'none preferred: the alphabetically first, so stable');
  t.same(pick({ fr: 'Maison', de: 'Haus' }, []), { text: 'Haus', lang: 'de' });
  t.same(pick({ en: '' }, ['en']), { text: '', lang: 'en' }, 'an empty text is still a text');
  t.same(pick({ en: null, de: 'Haus' } as never, ['en']), { text: 'Haus', lang: 'de' }, 'a non-string entry is skipped');
  for (const none of [null, undefined, {}, 'House']) t.same(pick(none as never, ['en']), { text: null, lang: null }, JSON.stringify(none));
});

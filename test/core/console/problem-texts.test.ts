// Problems in words: every code the API answers has a sentence, and every
// validator fault the API words (http/validation-messages.ts, run here on Ajv's
// own errors) becomes a sentence naming the field by its label, never a route,
// a method, a validator phrase, SQL or a code.
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { ERRORS, type ErrorCode } from '../../../core/errors.ts';
import { fieldErrors } from '../../../core/http/validation-messages.ts';
import { isDate, isDateTime } from '../../../core/http/date-formats.ts';
import { CONSOLE_TEXTS, sayFrom } from '../../../core/console/texts.ts';
import type { Problem } from '../../../core/console/api-client.ts';
import { fieldSentence, formProblem, isShowable, labelsOf, parseFieldMessage, problemAlert, problemReason, problemSentence, statusSentence } from '../../../core/console/problem-texts.ts';

const say = sayFrom();
const OWN = JSON.parse(readFileSync(new URL('../../../core/console/problem-texts.en.json', import.meta.url), 'utf8')) as Record<string, string>;
/** What no sentence may hold: routes, methods, validator phrases, SQL, placeholders left unfilled. */
const FORBIDDEN = ['/api/', 'POST', 'GET', 'PATCH', 'DELETE', 'must ', 'SQL', 'additional properties', '{', '}'];
const clean = (t: Test, text: string, what: string) => {
  for (const bad of FORBIDDEN) t.notOk(text.includes(bad), `${what}: "${text}" holds no "${bad}"`);
  t.notOk(/\b[A-Z]+_[A-Z_]+\b/.test(text), `${what}: "${text}" holds no code`);
};

t.test('every code the kernel declares has a sentence of its own, and each is clean', async (t) => {
  for (const [code, [status]] of Object.entries(ERRORS) as [ErrorCode, (typeof ERRORS)[ErrorCode]][]) {
    t.ok(OWN[`problem.${code}`], `problem.${code} has a text`);
    const text = problemSentence({ status, code, detail: 'no route POST /api/x' }, say);
    t.equal(text, OWN[`problem.${code}`], code);
    clean(t, text, code);
  }
  for (const text of Object.values(OWN)) t.notOk(/\bmust\b/.test(text), `no text says "must": ${text}`);
});

t.test('the texts are console texts, and translated ones win', async (t) => {
  for (const key of Object.keys(OWN)) t.equal(CONSOLE_TEXTS[key], OWN[key], key);
  const german = sayFrom({ 'problem.NOT_FOUND': 'Diesen Datensatz gibt es nicht.', 'fieldError.required': '{field} fehlt.' });
  t.equal(problemSentence({ status: 404, code: 'NOT_FOUND' }, german), 'Diesen Datensatz gibt es nicht.');
  t.equal(fieldSentence({ path: '/name', message: 'is required' }, german, () => 'Name').message, 'Name fehlt.');
});

t.test('a code the console does not know falls back to its status, then to its class', async (t) => {
  t.equal(problemSentence({ status: 409, code: 'LEAD_CONVERTED' }, say), OWN['problem.status.409']);
  t.equal(problemSentence({ status: 418, code: 'TEAPOT' }, say), OWN['problem.status.client']);
  t.equal(problemSentence({ status: 502, code: '' }, say), OWN['problem.status.server']);
  t.equal(statusSentence(429, say), OWN['problem.status.429']);
  t.equal(statusSentence(504, say), OWN['problem.status.server']);
});

t.test("the kernel's conflicts get a sentence by their kind", async (t) => {
  const conflict = (detail: string) => problemSentence({ status: 409, code: 'CONFLICT', detail }, say);
  t.equal(conflict('a row with the same unique value already exists'), OWN['problem.CONFLICT.unique']);
  t.equal(conflict('another row has the same sku'), OWN['problem.CONFLICT.unique']);
  t.equal(conflict('the row is referenced by other rows'), OWN['problem.CONFLICT.referenced']);
  t.equal(conflict('the row was changed by someone else meanwhile; reload it and try again'), OWN['problem.CONFLICT.changed']);
  t.equal(conflict('lead x is already converted'), OWN['problem.CONFLICT']);
});

t.test("a module's reason is shown only when it is fit to show", async (t) => {
  const reason = (code: string, detail: string, errors?: Problem['errors']) => problemReason({ status: 409, code, title: 'Conflict', detail, errors }, say);
  t.equal(
    reason('CONFLICT', 'the last owner of a project cannot be removed or demoted: make another member owner first'),
    'Reason: The last owner of a project cannot be removed or demoted: make another member owner first.',
  );
  t.equal(reason('STATE_LOCKED', 'the project is archived: it and everything in it are read-only until it is unarchived')?.startsWith('Reason: The project is archived'), true);
  t.equal(reason('STATE_LOCKED', 'the report is archived: restore it first (POST /api/ai/reports/{id}/unarchive)'), undefined, 'a route');
  t.equal(reason('CONFLICT', 'comment 0e6b7c1a-1b2c-4d5e-8f90-123456789abc is deleted already'), undefined, 'an id');
  t.equal(reason('CONFLICT', 'a row with the same unique value already exists'), undefined, "the kernel's own words have their sentence");
  t.equal(reason('NOT_FOUND', 'Product 123 does not exist'), undefined, 'not a business rule');
  t.equal(reason('FORBIDDEN', 'not allowed to set Product.price'), undefined);
  t.equal(reason('UNPROCESSABLE', '/due before start', [{ path: '/due', message: 'before start' }]), undefined, 'field errors say it');
  for (const bad of [
    'no route GET /api/crm/leads',
    'duplicate key value violates unique constraint "x_pkey"',
    'body must NOT have additional properties',
    'invalid body: /name must be string',
    'X-Company-Id names a company',
    'FST_ERR_CTP_BODY_TOO_LARGE',
    'ownerId is missing',
    'select * from product where id = 1',
  ]) {
    t.notOk(isShowable(bad), bad);
  }
});

// the console's Ajv, as http/validation.ts builds the body validator
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, verbose: true, strict: false, coerceTypes: false, removeAdditional: false }));
ajv.addFormat('date', { type: 'string', validate: isDate });
ajv.addFormat('date-time', { type: 'string', validate: isDateTime });

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 5 },
    code: { type: 'string', minLength: 3 },
    sku: { type: 'string', pattern: '^[A-Z]+$' },
    stock: { type: 'integer', minimum: 0, maximum: 10 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    price: { type: 'string', pattern: '^(0|[1-9]\\d{0,7})(\\.\\d{1,2})?$' },
    balance: { type: 'string', pattern: '^-?(0|[1-9]\\d{0,9})$' },
    active: { type: 'boolean' },
    unit: { anyOf: [{ type: 'string', enum: ['piece', 'kg'] }, { type: 'null' }] },
    categoryId: { anyOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }] },
    availableFrom: { type: 'string', format: 'date' },
    discontinuedAt: { type: 'string', format: 'date-time' },
    email: { type: 'string', format: 'email' },
    website: { type: 'string', format: 'uri' },
    tags: { type: 'array', minItems: 1, maxItems: 2, uniqueItems: true, items: { type: 'string' } },
    attributes: { type: 'object', maxProperties: 1 },
  },
};
const validate = ajv.compile(schema);

const LABELS = {
  name: 'Name',
  code: 'Code',
  sku: 'SKU',
  stock: 'In stock',
  ratio: 'Ratio',
  price: 'Price',
  balance: 'Balance',
  active: 'Active',
  unit: 'Unit',
  categoryId: 'Category',
  availableFrom: 'Available from',
  discontinuedAt: 'Discontinued at',
  email: 'E-mail',
  website: 'Website',
  tags: 'Tags',
  attributes: 'Attributes',
};
const fields = Object.entries(LABELS).map(([name, label]) => ({ name, label, readOnly: false }));

/** The field errors the API answers for `body`, each in words. */
function said(body: Record<string, unknown>) {
  t.notOk(validate(body), 'the body is refused');
  const { errors } = fieldErrors(validate.errors ?? []);
  return errors.map((e) => ({ api: e, key: parseFieldMessage(e.message)?.[0], said: fieldSentence(e, say, labelsOf(fields)) }));
}

const CASES: [string, Record<string, unknown>, string, string][] = [
  ['required', {}, 'name', 'Name is required.'],
  ['minLength 1', { name: '' }, 'name', 'Name cannot be empty.'],
  ['maxLength', { name: 'toolong' }, 'name', 'Name can have at most 5 characters.'],
  ['minLength', { name: 'a', code: 'ab' }, 'code', 'Code needs at least 3 characters.'],
  ['type string', { name: 5 }, 'name', 'Enter text for Name.'],
  ['type integer', { name: 'a', stock: 1.5 }, 'stock', 'Enter a whole number for In stock.'],
  ['minimum', { name: 'a', stock: -1 }, 'stock', 'In stock has to be at least 0.'],
  ['maximum', { name: 'a', stock: 11 }, 'stock', 'In stock can be at most 10.'],
  ['exclusiveMinimum', { name: 'a', ratio: 0 }, 'ratio', 'Ratio has to be more than 0.'],
  ['exclusiveMaximum', { name: 'a', ratio: 1 }, 'ratio', 'Ratio has to be less than 1.'],
  ['type number', { name: 'a', ratio: 'x' }, 'ratio', 'Enter a number for Ratio.'],
  ['type boolean', { name: 'a', active: 'yes' }, 'active', 'Choose yes or no for Active.'],
  ['pattern', { name: 'a', sku: 'ab' }, 'sku', 'Enter SKU in the expected form.'],
  ['decimal', { name: 'a', price: '1.234' }, 'price', 'Enter a number of zero or more for Price, with at most 8 digits before the point and 2 after it.'],
  ['decimal whole', { name: 'a', balance: '1.5' }, 'balance', 'Enter a whole number of at most 10 digits for Balance.'],
  ['enum', { name: 'a', unit: 'litre' }, 'unit', 'Choose one of the offered values for Unit.'],
  ['format uuid', { name: 'a', categoryId: 'nope' }, 'categoryId', 'Choose a valid entry for Category.'],
  ['format date', { name: 'a', availableFrom: '2026-02-30' }, 'availableFrom', 'Enter a valid date for Available from.'],
  ['format date-time', { name: 'a', discontinuedAt: 'today' }, 'discontinuedAt', 'Enter a valid date and time for Discontinued at.'],
  ['format email', { name: 'a', email: 'nobody' }, 'email', 'Enter a valid e-mail address for E-mail.'],
  ['format uri', { name: 'a', website: 'example' }, 'website', 'Enter a full web address for Website, such as https://example.com.'],
  ['minItems', { name: 'a', tags: [] }, 'tags', 'Tags needs at least 1 entries.'],
  ['maxItems', { name: 'a', tags: ['a', 'b', 'c'] }, 'tags', 'Tags can hold at most 2 entries.'],
  ['uniqueItems', { name: 'a', tags: ['a', 'a'] }, 'tags', 'Tags holds the same entry twice.'],
  ['maxProperties', { name: 'a', attributes: { a: 1, b: 2 } }, 'attributes', 'Attributes can hold at most 1 entries.'],
  ['type array', { name: 'a', tags: 'a' }, 'tags', 'Tags has a value of the wrong kind.'],
];

t.test("each validator fault the API words becomes a sentence with the field's label", async (t) => {
  for (const [what, body, field, sentence] of CASES) {
    const found = said(body).filter((s) => s.said.field === field);
    t.equal(found.length, 1, `${what}: one error on ${field}`);
    t.equal(found[0]?.said.message, sentence, what);
    t.ok(found[0]?.key, `${what}: "${found[0]?.api.message}" is a known phrase`);
    clean(t, found[0]?.said.message ?? '', what);
  }
});

t.test('an unknown field is no field of the form: a sentence for the alert', async (t) => {
  const [s] = said({ name: 'a', bogus: 1 });
  t.equal(s.said.field, null);
  t.equal(s.said.message, 'One value cannot be set here.');
});

t.test("the kernel's and modules' own field messages", async (t) => {
  const one = (message: string, path = '/name') => fieldSentence({ path, message }, say, labelsOf(fields)).message;
  t.equal(one('is already used by another row'), 'Name is already used by another record. Choose another value.');
  t.equal(one('is not a field you may change'), 'You may not change Name.');
  t.equal(one('must be >= 0', '/stock'), 'In stock has to be at least 0.');
  t.equal(one('must be <= 10', '/stock'), 'In stock can be at most 10.');
  t.equal(one('must be a UUID', '/categoryId'), 'Choose a valid entry for Category.');
  t.equal(one('must be a comment id (UUID)', '/categoryId'), 'Choose a valid entry for Category.');
  t.equal(one('no Category with id 0e6b7c1a-1b2c-4d5e-8f90-123456789abc', '/categoryId'), 'The chosen Category no longer exists, or you may not see it.');
  t.equal(one('is required in at least one language'), 'Fill in Name in at least one language.');
  t.equal(one('must not contain a NUL character'), 'Name contains characters that cannot be stored.');
  t.equal(one('a comment stays on its task: only its text changes'), 'Name was not accepted: a comment stays on its task: only its text changes');
  t.equal(one('names no table: GET /api/bi/app-tables lists them'), 'Name has a value that is not accepted.', 'a route is never shown');
  t.equal(one('must be within the years 1900–8999'), 'Name has a value that is not accepted.');
  t.equal(one('is required', '/readOnlyThing'), 'One value is required.');
});

t.test('a form: errors by field, the rest in the alert', async (t) => {
  const problem: Problem = {
    status: 400,
    code: 'VALIDATION_FAILED',
    title: 'Request validation failed',
    detail: 'invalid body: /name must be a string; /bogus is not a known field',
    errors: [
      { path: '/name', message: 'must be a string' },
      { path: '/name', message: 'must be at most 5 characters long' },
      { path: '/bogus', message: 'is not a known field' },
    ],
  };
  const { alert, byField } = formProblem(problem, say, labelsOf(fields));
  t.same([...byField], [['name', ['Enter text for Name.', 'Name can have at most 5 characters.']]]);
  t.same(alert, { title: OWN['problem.VALIDATION_FAILED'], items: ['One value cannot be set here.'] });
  t.same(formProblem(undefined, say, labelsOf(fields)), { alert: null, byField: new Map() });
  const readOnly = labelsOf([{ name: 'id', label: 'Id', readOnly: true }]);
  t.equal(readOnly('id'), undefined, 'a field the form does not show gets no place');
});

t.test('a page without a form: the whole problem in the alert', async (t) => {
  const alert = problemAlert({ status: 404, code: 'NOT_FOUND', title: 'Not found', detail: 'no route GET /api/catalog/products/x' }, say);
  t.same(alert, { title: OWN['problem.NOT_FOUND'], items: [] });
  const locked = problemAlert({ status: 409, code: 'STATE_LOCKED', title: 'Locked by its state', detail: 'project PM is archived: unarchive it first' }, say);
  t.same(locked, { title: OWN['problem.STATE_LOCKED'], detail: 'Reason: Project PM is archived: unarchive it first.', items: [] });
  const bad = problemAlert({ status: 400, code: 'VALIDATION_FAILED', title: 'x', errors: [{ path: '/headers/x-company-id', message: 'must be a UUID' }] }, say);
  t.same(bad.items, ['Choose a valid entry for One value.']);
  for (const text of [alert.title, locked.title, locked.detail!, ...bad.items]) clean(t, text, 'alert');
});

// A form generated from a JSON Schema: an input per property type, nested
// objects as fieldsets, the submitted form parsed back with an error per field,
// and a stored body surviving the form's round trip. Checks structure and text
// keys, not the English of the keys (they may not be in texts.en.json yet).
import t from 'tap';
import { bodyFromForm, formFromBody, humanize, referencesOf, schemaInputs, type JsonSchema, type SchemaInput } from '../../../core/console/schema-form.ts';

const say = (key: string, values?: Record<string, unknown>) => (values ? `${key} ${JSON.stringify(values)}` : key);

const SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'count', 'kind'],
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 20, pattern: '^[a-z ]+$', description: 'what it is called' },
    email: { type: 'string', format: 'email' },
    due: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    projectId: { type: 'string', format: 'uuid', 'x-entity': 'Project' },
    count: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
    ratio: { type: 'number', exclusiveMaximum: 1 },
    active: { type: 'boolean', default: true },
    archived: { type: 'boolean' },
    kind: { enum: ['a', 'b'] },
    level: { anyOf: [{ const: 'low', title: 'Low' }, { const: 'high', title: 'High' }, { type: 'null' }] },
    note: { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }], title: 'Remark' },
    tags: { type: 'array', items: { enum: ['x', 'y', 'z'] }, maxItems: 2 },
    address: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, zip: { type: 'string' } } },
    extra: { type: 'object' },
  },
};

const byName = (inputs: SchemaInput[]) => new Map(inputs.flatMap((i) => [[i.name, i] as const, ...(i.inputs ?? []).map((c) => [c.name, c] as const)]));

t.test('each property type gets its input', async (t) => {
  const { inputs, errors } = schemaInputs(SCHEMA, {}, say, { prefix: 'body', choices: { '/projectId': [{ value: '0193f3a0-0000-7000-8000-000000000001', label: 'Apollo' }] } });
  t.same(errors, []);
  const i = byName(inputs);
  t.match(i.get('body.name'), {
    kind: 'text',
    label: 'Name',
    required: true,
    minLength: 2,
    maxLength: 20,
    pattern: '^[a-z ]+$',
    description: 'what it is called',
    id: 'sf-body-name',
    pointer: '/name',
  });
  t.match(i.get('body.email'), { kind: 'email', required: false });
  t.match(i.get('body.due'), { kind: 'date' });
  t.match(i.get('body.at'), { kind: 'datetime', hint: 'form.utc' });
  t.match(i.get('body.projectId'), { kind: 'select', label: 'Project', placeholder: 'form.none', options: [{ label: 'Apollo', selected: false }] }, 'a uuid with choices is a select');
  t.match(i.get('body.count'), { kind: 'number', step: '1', min: 1, max: 10, value: '3' }, 'the default fills a new form');
  t.match(i.get('body.ratio'), { kind: 'number', step: 'any', max: 1 });
  t.match(i.get('body.active'), { kind: 'checkbox', checked: true });
  t.match(
    i.get('body.archived'),
    {
      kind: 'select',
      options: [
        { value: 'true', label: 'value.yes' },
        { value: 'false', label: 'value.no' },
      ],
    },
    'an optional box without default has three states',
  );
  t.match(i.get('body.kind'), { kind: 'select', required: true, placeholder: 'form.choose', options: [{ value: 'a' }, { value: 'b' }] });
  t.match(
    i.get('body.level'),
    {
      kind: 'select',
      required: false,
      options: [
        { value: 'low', label: 'Low' },
        { value: 'high', label: 'High' },
      ],
    },
    'consts with titles',
  );
  t.match(i.get('body.note'), { kind: 'textarea', label: 'Remark', maxLength: 500 }, 'a union with null is its type');
  t.match(i.get('body.tags'), { kind: 'multiselect', options: [{ value: 'x' }, { value: 'y' }, { value: 'z' }] });
  t.match(i.get('body.address'), { kind: 'fieldset', inputs: [{ name: 'body.address.city', required: true, pointer: '/address/city' }, { name: 'body.address.zip' }] });
  t.match(i.get('body.extra'), { kind: 'json', hint: 'schemaForm.jsonHint' }, 'only a free-form object is raw JSON');
  t.equal(inputs.length, Object.keys(SCHEMA.properties!).length);
  t.equal(byName(schemaInputs(SCHEMA, {}, say).inputs).get('projectId')?.kind, 'text', 'a uuid without choices stays a text input');
  t.equal(byName(schemaInputs(SCHEMA, {}, say).inputs).get('projectId')?.hint, 'schemaForm.uuidHint');
});

const FILLED = {
  'body.name': ' ab c ',
  'body.email': 'a@b.c',
  'body.due': '2026-12-01',
  'body.at': '2026-12-01T08:30',
  'body.projectId': '0193f3a0-0000-7000-8000-000000000001',
  'body.count': '4',
  'body.ratio': '0.5',
  'body.active': ['false', 'true'],
  'body.archived': 'false',
  'body.kind': 'b',
  'body.level': '',
  'body.note': '',
  'body.tags': ['', 'x', 'z'],
  'body.address.city': 'Oslo',
  'body.address.zip': '',
  'body.extra': '{"k": [1, 2]}',
};

t.test('a filled form becomes the body; empty optional inputs are left out', async (t) => {
  const { body, errors } = bodyFromForm(SCHEMA, FILLED, { prefix: 'body' });
  t.same(errors, []);
  t.same(body, {
    name: 'ab c',
    email: 'a@b.c',
    due: '2026-12-01',
    at: '2026-12-01T08:30:00Z',
    projectId: '0193f3a0-0000-7000-8000-000000000001',
    count: 4,
    ratio: 0.5,
    active: true,
    archived: false,
    kind: 'b',
    tags: ['x', 'z'],
    address: { city: 'Oslo' },
    extra: { k: [1, 2] },
  });
});

t.test('each fault is an error at its pointer with a text key', async (t) => {
  const form = {
    'body.name': 'A',
    'body.email': 'nobody',
    'body.due': '2026-13-45',
    'body.at': 'soon',
    'body.projectId': 'not-a-uuid',
    'body.count': '11',
    'body.ratio': '1',
    'body.kind': 'c',
    'body.tags': ['x', 'y', 'z'],
    'body.address.city': '',
    'body.extra': '{oops',
  };
  const { errors } = bodyFromForm(SCHEMA, form, { prefix: 'body', say });
  const keys = Object.fromEntries(errors.map((e) => [e.path, e.key]));
  t.same(keys, {
    '/name': 'schemaForm.tooShort',
    '/email': 'schemaForm.email',
    '/due': 'schemaForm.date',
    '/at': 'schemaForm.dateTime',
    '/projectId': 'schemaForm.uuid',
    '/count': 'schemaForm.tooLarge',
    '/ratio': 'schemaForm.tooLarge',
    '/kind': 'schemaForm.notAChoice',
    '/tags': 'schemaForm.tooMany',
    '/address/city': 'schemaForm.required',
    '/extra': 'form.invalidJson',
  });
  t.match(
    errors.find((e) => e.path === '/count'),
    { values: { max: 10 }, message: 'schemaForm.tooLarge {"max":10}' },
    'the message comes from say',
  );
  const more = bodyFromForm(SCHEMA, { 'body.name': 'ABC', 'body.count': '2.5', 'body.ratio': 'x' }, { prefix: 'body' }).errors;
  t.same(Object.fromEntries(more.map((e) => [e.path, e.key])), {
    '/name': 'schemaForm.pattern',
    '/count': 'schemaForm.notInteger',
    '/ratio': 'schemaForm.notNumber',
    '/kind': 'schemaForm.required',
    '/address/city': 'schemaForm.required',
  });
});

t.test("errors show beside their inputs; one no input takes is the form's", async (t) => {
  const errors = [
    { path: '/count', message: 'too many' },
    { path: '/address/city', message: 'unknown city' },
    { path: '/tags/1', message: 'not allowed' },
    { path: '/other', message: 'is no property' },
  ];
  const { inputs, errors: rest } = schemaInputs(SCHEMA, FILLED, say, { prefix: 'body', errors });
  const i = byName(inputs);
  t.same(i.get('body.count')?.errors, ['too many']);
  t.equal(i.get('body.count')?.describedBy, 'sf-body-count-error');
  t.same(i.get('body.address.city')?.errors, ['unknown city']);
  t.same(i.get('body.tags')?.errors, ['not allowed'], 'an error below an input goes to it');
  t.same(rest, ['/other is no property']);
  t.equal(i.get('body.name')?.value, ' ab c ', 'what the user typed stays');
  t.same(
    i.get('body.tags')?.options?.map((o) => o.selected),
    [true, false, true],
  );
  t.equal(i.get('body.active')?.checked, true);
});

t.test('a stored body survives the round trip through the form', async (t) => {
  const stored = {
    name: 'ab c',
    email: 'a@b.c',
    due: '2026-12-01',
    at: '2026-12-01T08:30:00Z',
    count: 7,
    ratio: 0.25,
    active: false,
    archived: true,
    kind: 'a',
    level: 'high',
    note: 'line one\nline two',
    tags: ['y'],
    address: { city: 'Oslo', zip: '0150' },
    extra: { nested: { deep: true } },
  };
  const form = formFromBody(SCHEMA, stored, 'p');
  t.equal(form['p.at'], '2026-12-01T08:30:00', 'a datetime-local input holds UTC without the zone');
  // a browser sends the checkbox's hidden "false" before the box
  const sent = { ...form, 'p.active': ['false'] };
  const { body, errors } = bodyFromForm(SCHEMA, sent, { prefix: 'p' });
  t.same(errors, []);
  t.same(body, stored);
  const inputs = byName(schemaInputs(SCHEMA, form, say, { prefix: 'p' }).inputs);
  t.equal(inputs.get('p.level')?.options?.find((o) => o.selected)?.value, 'high');
  t.equal(inputs.get('p.count')?.value, '7', 'a stored value wins over the default');
});

t.test('labels, references and schemas that are no object', async (t) => {
  t.equal(humanize('projectId'), 'Project');
  t.equal(humanize('max_items'), 'Max items');
  t.equal(humanize('id'), 'Id');
  t.same(referencesOf(SCHEMA), [{ pointer: '/projectId', entity: 'Project' }]);
  t.same(schemaInputs({ type: 'string' }, {}, say), { inputs: [], errors: [] });
  t.same(bodyFromForm({ type: 'object', properties: {} }, { x: '1' }), { body: {}, errors: [] }, 'names the schema has not are ignored');
  const nested = { type: 'object', properties: { inner: { type: 'object', properties: { a: { type: 'integer' } } } } } as JsonSchema;
  t.same(bodyFromForm(nested, { 'inner.a': '' }).body, {}, 'an empty optional object is left out');
});

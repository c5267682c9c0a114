// What a page shows for the API's problem answers (RFC 9457): a sentence in the
// user's language for the problem's code (else its status), and one per field
// error, with the field's label. The API words its field errors in fixed English
// phrases (http/validation-messages.ts and a few kernel checks); they are read
// back here into a keyword and its limit, so no page shows a validator phrase,
// a route, a method, SQL or a code. Texts: problem-texts.en.json.
import type { Problem } from './api-client.ts';
import { fieldOfPointer } from './fields.ts';
import { CONSOLE_TEXTS, type Say } from './texts.ts';

/** The label of a field of the page (by its name), or undefined when the page has no such field. */
export type LabelOf = (field: string) => string | undefined;

/** A field error in words: `field` is the page's field it belongs beside, null when none of the page's. */
export interface FieldSentence {
  path: string;
  field: string | null;
  message: string;
}

/** What views/partials/problem-alert.hbs shows: `title` the sentence, `detail` a module's own reason, `items` field sentences shown with it. */
export interface ProblemAlert {
  title: string;
  detail?: string;
  items: string[];
}

type Parsed = [key: string, values?: Record<string, unknown>];

const TYPES: Record<string, string> = {
  'a string': 'string',
  'a whole number': 'integer',
  'a plain integer': 'integer',
  'a number': 'number',
  'a plain number': 'number',
  'true or false': 'boolean',
  'an object': 'object',
  'a list': 'array',
};

const FORMATS: [RegExp, string][] = [
  [/^must be a UUID\b/, 'fieldError.format.uuid'],
  [/^must be a (\w+ )?id \(UUID\)$/, 'fieldError.format.uuid'],
  [/^must be a date as /, 'fieldError.format.date'],
  [/^must be a date and time\b/, 'fieldError.format.dateTime'],
  [/^must be a date-time\b/, 'fieldError.format.dateTime'],
  [/^must be an e-mail address$/, 'fieldError.format.email'],
  [/^must be an absolute UR[IL]$/, 'fieldError.format.url'],
  [/^must match format "(date|time)"$/, 'fieldError.format.date'],
  [/^must match format "date-time"$/, 'fieldError.format.dateTime'],
  [/^must match format "uuid"$/, 'fieldError.format.uuid'],
  [/^must match format "email"$/, 'fieldError.format.email'],
  [/^must match format "ur[il]/, 'fieldError.format.url'],
  [/^must match format /, 'fieldError.format'],
];

const DECIMAL = /^must be a (non-negative )?(?:decimal with at most (\d+) places?|whole number)(?: and at most (\d+) digits? before the point| of at most (\d+) digits?| below 1)?, written as /;

/** Fixed phrases: whole message → key. */
const EXACT: Record<string, string> = {
  'is required': 'fieldError.required',
  'is required in at least one language': 'fieldError.requiredLanguage',
  'is not a known field': 'fieldError.additionalProperties',
  'must NOT have additional properties': 'fieldError.additionalProperties',
  'is not allowed here': 'fieldError.notAllowed',
  'must not be empty': 'fieldError.empty',
  'must name at least one field': 'fieldError.nothingToSave',
  'is already used by another row': 'fieldError.unique',
  'is not a field you may change': 'fieldError.notWritable',
  'is not a field you may change here': 'fieldError.notWritable',
  'is not a field you may read': 'fieldError.notReadable',
  'is no IANA time zone (e.g. Europe/Berlin)': 'fieldError.timeZone',
  'is not a configured connection': 'fieldError.enum',
  'must be valid JSON': 'fieldError.json',
};

/** Phrases with a value in them: pattern → key and the placeholders it fills. */
const PATTERNS: [RegExp, (m: RegExpExecArray) => Parsed][] = [
  [/^must have required property '.*'$/, () => ['fieldError.required']],
  [/^is already used by another row together with /, () => ['fieldError.uniqueTogether']],
  [/^must be (?:at most|<=) (\d+) characters? long$|^must NOT have more than (\d+) characters?$/, (m) => ['fieldError.maxLength', { limit: m[1] ?? m[2] }]],
  [/^must be at least (\d+) characters? long$|^must NOT have fewer than (\d+) characters?$/, (m) => ['fieldError.minLength', { limit: m[1] ?? m[2] }]],
  [/^must (?:be at most|be <=|hold at most) (-?[\d.]+)(?: (?:items?|entry|entries))?$/, (m) => [/hold/.test(m[0]) ? 'fieldError.maxItems' : 'fieldError.maximum', { limit: m[1] }]],
  [/^must (?:be at least|be >=|hold at least) (-?[\d.]+)(?: (?:items?|entry|entries))?$/, (m) => [/hold/.test(m[0]) ? 'fieldError.minItems' : 'fieldError.minimum', { limit: m[1] }]],
  [/^must be less than (-?[\d.]+)$|^must be < (-?[\d.]+)$/, (m) => ['fieldError.exclusiveMaximum', { limit: m[1] ?? m[2] }]],
  [/^must be more than (-?[\d.]+)$|^must be > (-?[\d.]+)$/, (m) => ['fieldError.exclusiveMinimum', { limit: m[1] ?? m[2] }]],
  [/^must NOT have more than (\d+) (?:items|properties)$/, (m) => ['fieldError.maxItems', { limit: m[1] }]],
  [/^must NOT have fewer than (\d+) (?:items|properties)$/, (m) => ['fieldError.minItems', { limit: m[1] }]],
  [/^must not hold the same item twice\b|^must NOT have duplicate items\b/, () => ['fieldError.uniqueItems']],
  [/^must be (?:equal to )?one of\b|^must be equal to one of the allowed values$/, () => ['fieldError.enum']],
  [/^must match pattern /, () => ['fieldError.pattern']],
  [/^(?:keys )?must not contain /, () => ['fieldError.unstorable']],
  [/^nests deeper than (\d+) levels$/, (m) => ['fieldError.tooDeep', { limit: m[1] }]],
  [/^no \w+ with id \S+$/, () => ['fieldError.reference']],
  [/^the computed value needs more than (\d+) digits before the point$/, (m) => ['fieldError.computedTooLarge', { digits: m[1] }]],
];

function decimal(m: RegExpExecArray): Parsed {
  const [, nonNegative, places, wholeDigits, digits] = m;
  const sign = nonNegative ? 'NonNegative' : '';
  const whole = wholeDigits ?? digits;
  if (!places) return whole ? [`fieldError.decimalWhole${sign}`, { digits: whole }] : ['fieldError.type.integer'];
  return whole ? [`fieldError.decimal${sign}`, { places, digits: whole }] : ['fieldError.type.number'];
}

/** "must be a string or null", "must be a whole number": the first type named, null aside. */
function typeOf(message: string): Parsed | undefined {
  if (!message.startsWith('must be ')) return undefined;
  const named = message
    .slice('must be '.length)
    .replace('true or false', 'true-or-false')
    .split(/, | or /);
  const types = named.map((n) => TYPES[n.replace('true-or-false', 'true or false')]);
  if (!named.every((n, i) => types[i] || n === 'null')) return undefined;
  const first = types.find(Boolean);
  return first ? [`fieldError.type.${first}`] : undefined;
}

/** The key and placeholders of an API field error's message; a message of none of the known phrases is undefined. */
export function parseFieldMessage(message: string): Parsed | undefined {
  if (EXACT[message]) return [EXACT[message]];
  const d = DECIMAL.exec(message);
  if (d) return decimal(d);
  for (const [re, key] of FORMATS) if (re.test(message)) return [key];
  for (const [re, parse] of PATTERNS) {
    const m = re.exec(message);
    if (m) return parse(m);
  }
  return typeOf(message);
}

// what no page may show: routes and paths, HTTP methods, SQL, validator phrasing, codes, ids and field names
const UNSHOWABLE = [
  /\/\S/,
  /\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b/,
  /\b(sql|sqlstate|constraint|relation|violates|duplicate key|column|select|insert into|where)\b/i,
  /\b(must|should)\b|additional propert|\bschema\b|\bpattern\b|\bformat\b/i,
  /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/,
  /\b[A-Z]\w*-[A-Z]/,
  /[{}[\]<>`$=?&#\\|]/,
  /[0-9a-f]{8}-[0-9a-f]{4}-/i,
  /\b[a-z]+[A-Z]\w*\b/,
  /\b\w+\.\w+/,
];

/** Whether a module's own words (a refusal's detail, a field message) are fit to show a user. */
export function isShowable(text: string | undefined): text is string {
  return !!text && text.length <= 300 && !UNSHOWABLE.some((re) => re.test(text));
}

const has = (key: string) => key in CONSOLE_TEXTS;
/** A module's words as a sentence: first letter up, a full stop at the end. */
const sentence = (text: string) => `${text[0].toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;

/** A field error as a sentence naming the field by its label (the page's, else "One value"). */
export function fieldSentence(error: { path: string; message: string }, say: Say, labelOf: LabelOf = () => undefined): FieldSentence {
  const name = fieldOfPointer(error.path);
  const label = name === null ? undefined : labelOf(name);
  const field = label ?? say('fieldError.someField');
  const parsed = parseFieldMessage(error.message);
  let message: string;
  if (parsed && has(parsed[0])) message = say(parsed[0], { field, ...parsed[1] });
  else if (isShowable(error.message)) message = say('fieldError.moduleRule', { field, reason: error.message });
  else message = say('fieldError.invalid', { field });
  return { path: error.path, field: label === undefined ? null : name, message };
}

/** The sentence of an HTTP status alone (a code the console has no sentence for, or an answer without a problem). */
export function statusSentence(status: number, say: Say): string {
  if (has(`problem.status.${status}`)) return say(`problem.status.${status}`);
  return say(status >= 500 ? 'problem.status.server' : 'problem.status.client');
}

/** The kernel's own words for a conflict (http/problem.ts), each with a sentence of its own. */
const CONFLICT_DETAILS: [RegExp, string][] = [
  [/^a row with the same unique value already exists$|^another row has the same /, 'problem.CONFLICT.unique'],
  [/^the row is referenced by other rows/, 'problem.CONFLICT.referenced'],
  [/^the row was changed by someone else meanwhile/, 'problem.CONFLICT.changed'],
];

/** The sentence of a problem: by its code, a kernel conflict by its kind, else by its status. */
export function problemSentence(problem: Pick<Problem, 'status' | 'code' | 'detail'>, say: Say): string {
  if (problem.code === 'CONFLICT') for (const [re, key] of CONFLICT_DETAILS) if (re.test(problem.detail ?? '')) return say(key);
  const key = `problem.${problem.code}`;
  return problem.code && has(key) ? say(key) : statusSentence(problem.status, say);
}

/** Codes whose detail a module writes for the user (a business rule's refusal), not the kernel for a developer. */
const MODULE_REASONS = new Set(['CONFLICT', 'STATE_LOCKED', 'INVALID_TRANSITION', 'UNPROCESSABLE']);

/** A module's reason for a refusal, worded as it wrote it, when it says something the sentence does not and is fit to show. */
export function problemReason(problem: Problem, say: Say): string | undefined {
  if (!MODULE_REASONS.has(problem.code) || problem.errors?.length) return undefined;
  if (CONFLICT_DETAILS.some(([re]) => re.test(problem.detail ?? ''))) return undefined;
  return isShowable(problem.detail) ? say('problem.reason', { reason: sentence(problem.detail) }) : undefined;
}

/** A page's alert for a problem: its sentence, a module's reason, and every field error as a sentence (a page without a form). */
export function problemAlert(problem: Problem, say: Say, labelOf?: LabelOf): ProblemAlert {
  const detail = problemReason(problem, say);
  return { title: problemSentence(problem, say), ...(detail ? { detail } : {}), items: (problem.errors ?? []).map((e) => fieldSentence(e, say, labelOf).message) };
}

/**
 * A form's problem: the sentences of field errors the form has a field for, by
 * field (shown beside it), and an alert with the rest (none when there is no problem).
 */
export function formProblem(problem: Problem | null | undefined, say: Say, labelOf: LabelOf): { alert: ProblemAlert | null; byField: Map<string, string[]> } {
  const byField = new Map<string, string[]>();
  if (!problem) return { alert: null, byField };
  const items: string[] = [];
  for (const s of (problem.errors ?? []).map((e) => fieldSentence(e, say, labelOf))) {
    if (s.field === null) items.push(s.message);
    else byField.set(s.field, [...(byField.get(s.field) ?? []), s.message]);
  }
  const detail = problemReason(problem, say);
  return { alert: { title: problemSentence(problem, say), ...(detail ? { detail } : {}), items }, byField };
}

/** The labels of the fields a form shows: those the user may write. */
export const labelsOf =
  (fields: readonly { name: string; label: string; readOnly?: boolean }[]): LabelOf =>
  (name) =>
    fields.find((f) => f.name === name && !f.readOnly)?.label;

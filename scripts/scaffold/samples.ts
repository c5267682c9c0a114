// Valid sample values for the generated tests, derived from a field's manifest
// definition: distinct per row (n = 1, 2, 3) so unique fields and filters tell
// rows apart, and within every limit the kernel enforces (length, pattern,
// range, precision). A pattern no candidate matches needs an :example=.
import type { ManifestField } from '../../core/manifest/format.ts';
import { kebab, sentence, words } from './names.ts';

const STRING_MAX = 255;
const INT4 = { min: -2147483648, max: 2147483647 };
const DECIMAL = { precision: 12, scale: 2 };

export const NO_SAMPLE = Symbol('no sample');

function fits(f: ManifestField, s: string): boolean {
  const max = f.maxLength ?? (f.type === 'string' ? STRING_MAX : Infinity);
  if (s.length > max || s.length < (f.minLength ?? (f.required ? 1 : 0))) return false;
  if (f.pattern === undefined) return true;
  try {
    return new RegExp(f.pattern, 'u').test(s);
  } catch {
    return false;
  }
}

/** Variations of an example: the example itself, then its last digit or letter stepped by n. */
function fromExample(example: string, n: number): string[] {
  if (n === 1) return [example];
  const step = example.replace(/(\d)(\D*)$/, (_, d: string, rest: string) => `${(Number(d) + n - 1) % 10}${rest}`);
  const letter = example.replace(/([A-Za-z])([^A-Za-z]*)$/, (_, c: string, rest: string) => {
    const base = c === c.toUpperCase() ? 65 : 97;
    return `${String.fromCharCode(base + ((c.charCodeAt(0) - base + n - 1) % 26))}${rest}`;
  });
  return [step, letter, `${example}${n}`].filter((s) => s !== example);
}

function textSample(name: string, f: ManifestField, n: number, example: unknown): string | typeof NO_SAMPLE {
  const ws = words(name);
  const letters = 'ABC'[n - 1] ?? 'D';
  const candidates = [
    ...(typeof example === 'string' ? fromExample(example, n) : []),
    `${sentence(ws)} ${n}`,
    `${kebab(name)}-${n}`,
    `${kebab(name).toUpperCase()}-${n}`,
    `${ws.join('').toUpperCase()}${n}`,
    `SM${letters}`,
    `S${letters}`,
    letters,
    `sm${letters.toLowerCase()}`,
    letters.toLowerCase(),
    `${n}`,
    `${1000 + n}`,
    `sample${n}@example.com`,
    `https://example.com/${kebab(name)}/${n}`,
  ];
  const padded = f.minLength ? candidates.map((c) => c.padEnd(f.minLength!, '0')) : [];
  return [...candidates, ...padded].find((c) => fits(f, c)) ?? NO_SAMPLE;
}

function integerSample(f: ManifestField, n: number): number {
  const min = Math.max(f.minimum ?? 0, INT4.min);
  const max = Math.min(f.maximum ?? INT4.max, INT4.max);
  const v = Math.ceil(min) + n;
  return v <= max ? v : Math.max(Math.ceil(min), Math.floor(max) - (3 - n));
}

function decimalSample(f: ManifestField, n: number): string {
  const precision = f.precision ?? DECIMAL.precision;
  const scale = f.scale ?? DECIMAL.scale;
  const fraction = scale > 0 ? `.${'5'.padEnd(scale, '0')}` : '';
  if (precision - scale <= 0) return `0.${String(n).padEnd(scale, '0')}`;
  const whole = Math.max(0, Math.ceil(f.minimum ?? 0)) + n;
  let value = `${whole}${fraction}`;
  if (f.maximum !== undefined && Number(value) > f.maximum) value = `${Math.max(0, Math.floor(f.maximum) - (4 - n))}${fraction}`;
  return value;
}

/** The sample of one field for row n; refs are filled by the tests (null here). */
export function sampleValue(name: string, f: ManifestField, n: number, example?: unknown): unknown {
  if (example !== undefined && f.type !== 'string' && f.type !== 'text') return example;
  const pad = (v: number) => String(v).padStart(2, '0');
  switch (f.type) {
    case 'string':
    case 'text':
      return textSample(name, f, n, example);
    case 'integer':
      return integerSample(f, n);
    case 'decimal':
      return decimalSample(f, n);
    case 'boolean':
      return n % 2 === 1;
    case 'date':
      return `2026-${pad(n)}-15`;
    case 'datetime':
      return `2026-${pad(n)}-15T10:30:00.000Z`;
    case 'enum':
      return f.values![(n - 1) % f.values!.length];
    case 'json':
      return { sample: n };
    case 'ref':
      return null;
  }
}

/** A value of the wrong type for the field (bodies are validated without coercion); json takes anything. */
export function invalidValue(f: ManifestField): unknown {
  switch (f.type) {
    case 'json':
      return NO_SAMPLE;
    case 'integer':
      return 'not a number';
    case 'boolean':
      return 'yes';
    default:
      return 12345;
  }
}

/** A JavaScript literal, single-quoted and with bare keys, as the project writes them. */
export function js(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `[${value.map(js).join(', ')}]`;
  const entries = Object.entries(value).map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : js(k)}: ${js(v)}`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}

/** A query-string value as the list route parses it. */
export const queryValue = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

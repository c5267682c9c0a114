// Values the kernel derives on a write: formula fields, sums that must fit
// their column, and the changed fields an audit record and a state lock look at.
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { httpError } from '../errors.ts';
import { formatRounded, type Rational } from '../decimal.ts';
import type { Row } from './row-mapper.ts';

export type Changes = Record<string, { before: unknown; after: unknown }>;

/** Sets every formula field of a row from its other fields, in declaration order. */
export function computeFormulas(model: EntityModel, row: Row): void {
  for (const { field, formula } of model.formulas) {
    const value = formula.evaluate((name) => {
      const v = row[name];
      return v === null || v === undefined ? null : String(v);
    });
    row[field.name] = value === null ? null : fitting(field, formatRounded(value, field.scale ?? 2));
  }
}

/** A computed value its column cannot hold is the request's fault (inputs too large), not a 500. */
export function fitting(field: FieldModel, value: string): string {
  const whole = value.replace(/^-/, '').split('.')[0].replace(/^0+/, '');
  const room = (field.precision ?? 12) - (field.scale ?? 2);
  if (whole.length > room)
    throw httpError('VALIDATION_FAILED', `${field.name} would be ${value}, beyond its ${room} digits`, {
      errors: [{ path: `/${field.name}`, message: `the computed value needs more than ${room} digits before the point` }],
    });
  return value;
}

export const parseSum = (text: string): Rational => {
  const [whole, fraction = ''] = text.split('.');
  return { n: BigInt(whole + fraction), d: 10n ** BigInt(fraction.length) };
};

export function comparable(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  return v === undefined ? null : v;
}

/** Fields whose value differs, with both values; absent on one side counts as null. */
export function diff(before: Row, after: Row): Changes {
  const out: Changes = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[name] ?? null;
    const b = after[name] ?? null;
    if (JSON.stringify(a) !== JSON.stringify(b)) out[name] = { before: a, after: b };
  }
  return out;
}

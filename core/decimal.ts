// Exact decimal arithmetic for computed fields: values are rationals of two
// BigInts, so quantity × price × (1 − discount) carries no binary-float error,
// and only the final result is rounded (half away from zero, "half-up" as
// commerce means it) to the field's scale. A dozen lines of BigInt beat a
// dependency for the four operations a formula needs.
import { httpError } from './errors.ts';

export interface Rational {
  n: bigint;
  d: bigint;
}

const TEN = 10n;
const abs = (x: bigint) => (x < 0n ? -x : x);

export function parseDecimal(text: string): Rational {
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`not a decimal: ${text}`);
  const fraction = m[3] ?? '';
  const n = BigInt(m[2] + fraction) * (m[1] ? -1n : 1n);
  return { n, d: TEN ** BigInt(fraction.length) };
}

/** The rational rounded half away from zero to `scale` digits, as a decimal string. */
export function formatRounded(x: Rational, scale: number): string {
  const unit = TEN ** BigInt(scale);
  const scaled = abs(x.n) * unit;
  const d = abs(x.d);
  let q = scaled / d;
  if ((scaled % d) * 2n >= d) q += 1n;
  const negative = x.n < 0n !== x.d < 0n && q !== 0n;
  const digits = q.toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}

const ops = {
  '+': (a: Rational, b: Rational) => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d }),
  '-': (a: Rational, b: Rational) => ({ n: a.n * b.d - b.n * a.d, d: a.d * b.d }),
  '*': (a: Rational, b: Rational) => ({ n: a.n * b.n, d: a.d * b.d }),
  '/': (a: Rational, b: Rational) => {
    if (b.n === 0n) throw httpError('VALIDATION_FAILED', 'a computed value divides by zero');
    return { n: a.n * b.d, d: a.d * b.n };
  },
};

type Node = { num: Rational } | { field: string } | { op: keyof typeof ops; left: Node; right: Node };

/**
 * A formula over a row's fields: + - * / and parentheses, decimal literals,
 * field names. Parsed once (the loader reports a bad one), evaluated per write.
 */
export class Formula {
  readonly fields: string[] = [];
  #root: Node;

  constructor(source: string) {
    const tokens = source.match(/\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]*|[-+*/()]|\S/g) ?? [];
    let i = 0;
    const peek = () => tokens[i];
    const expr = (): Node => {
      let left = term();
      while (peek() === '+' || peek() === '-') {
        const op = tokens[i++] as '+' | '-';
        left = { op, left, right: term() };
      }
      return left;
    };
    const term = (): Node => {
      let left = factor();
      while (peek() === '*' || peek() === '/') {
        const op = tokens[i++] as '*' | '/';
        left = { op, left, right: factor() };
      }
      return left;
    };
    const factor = (): Node => {
      const t = tokens[i++];
      if (t === undefined) throw new Error('formula ends too early');
      if (t === '(') {
        const inner = expr();
        if (tokens[i++] !== ')') throw new Error('missing ")"');
        return inner;
      }
      if (t === '-') return { op: '-', left: { num: { n: 0n, d: 1n } }, right: factor() };
      if (/^\d/.test(t)) return { num: parseDecimal(t) };
      if (/^[A-Za-z]/.test(t)) {
        this.fields.push(t);
        return { field: t };
      }
      throw new Error(`unexpected "${t}"`);
    };
    this.#root = expr();
    if (i !== tokens.length) throw new Error(`unexpected "${tokens[i]}"`);
  }

  /** null when any field it reads is null. */
  evaluate(values: (field: string) => string | null): Rational | null {
    const run = (node: Node): Rational | null => {
      if ('num' in node) return node.num;
      if ('field' in node) {
        const v = values(node.field);
        return v === null ? null : parseDecimal(v);
      }
      const a = run(node.left);
      const b = run(node.right);
      return a && b ? ops[node.op](a, b) : null;
    };
    return run(this.#root);
  }
}

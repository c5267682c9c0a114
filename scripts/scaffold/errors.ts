// The scaffolder's coded errors. The CLI maps each code to an exit code, so a
// script can tell bad input from a module that is already there.

export type ScaffoldErrorCode =
  /** arguments, spec, names, types or references are wrong: exit 2 */
  | 'SCAFFOLD_BAD_INPUT'
  /** the module (or a file it would write) exists already: exit 3 */
  | 'SCAFFOLD_EXISTS';

export const EXIT_CODES: Record<ScaffoldErrorCode, number> = { SCAFFOLD_BAD_INPUT: 2, SCAFFOLD_EXISTS: 3 };

/** One thing wrong with the input, and where: "Product.price", "--prefix", "spec.json /entities/0". */
export interface Problem {
  where: string;
  message: string;
}

export class ScaffoldError extends Error {
  readonly code: ScaffoldErrorCode;
  readonly problems: Problem[];
  constructor(code: ScaffoldErrorCode, problems: Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ScaffoldError';
    this.code = code;
    this.problems = problems;
  }
}

export const formatProblem = (p: Problem) => (p.where ? `${p.where}: ${p.message}` : p.message);

export const badInput = (where: string, message: string) => new ScaffoldError('SCAFFOLD_BAD_INPUT', [{ where, message }]);

/** Collects problems and throws them together, so one run reports every fault. */
export class Problems {
  readonly list: Problem[] = [];
  add(where: string, message: string): void {
    this.list.push({ where, message });
  }
  get size(): number {
    return this.list.length;
  }
  throwIfAny(code: ScaffoldErrorCode = 'SCAFFOLD_BAD_INPUT'): void {
    if (this.list.length) throw new ScaffoldError(code, this.list);
  }
}

/** The closest candidate to a misspelt word, when one is close enough to suggest. */
function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

export const didYouMean = (word: string, candidates: Iterable<string>) => {
  const c = closest(word, candidates);
  return c ? ` (did you mean "${c}"?)` : '';
};

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = next;
    }
  }
  return row[b.length];
}

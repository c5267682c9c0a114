// docs/reference/configuration.md: every environment variable, read from the code
// that reads it. core/config.ts: each env.X in loadConfig() and externalDbConfig(),
// its default from the expression around it, its meaning from the TSDoc of the
// Config field it fills (and the comments beside the read). Then the few variables
// core/ and plugins/ read from process.env themselves.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { banner, code, ROOT, table } from './markdown.ts';
import { commentOf, declarationIn, evaluate, findAll, headerOf, nameOf, parse, ts } from './source.ts';

const CONFIG = 'core/config.ts';
/** The functions that read the environment, and the interface each one fills. */
const READERS = { loadConfig: 'Config', externalDbConfig: 'ExternalDbConfig' };

interface Variable {
  name: string;
  fallback: string;
  /** the Config field it fills */
  field?: string;
  meaning: (string | undefined)[];
  file: string;
}

/** What a helper says of a variable: its comment, `<NAME>` being the variable, and the errors it stops the start with. */
function helperText(fn: ts.FunctionDeclaration | undefined, name: string): string {
  if (!fn) return '';
  const refusals = findAll(fn, ts.isThrowStatement).flatMap((t) => {
    const message = ts.isNewExpression(t.expression) ? t.expression.arguments?.[0] : undefined;
    if (!message || !(ts.isTemplateExpression(message) || ts.isStringLiteralLike(message))) return [];
    // `${variable}` is the variable's name; any other interpolation a value
    const text = ts.isTemplateExpression(message) ? message.head.text + message.templateSpans.map((s) => (s.expression.getText() === 'variable' ? name : '…') + s.literal.text).join('') : message.text;
    return text.includes(name) ? [`The start fails on a wrong value: ${code(text)}.`] : [];
  });
  return [commentOf(fn).replaceAll('<NAME>', name), ...refusals].join(' ');
}

/** The Config field loadConfig() fills by calling `reader` ("externalDb" for externalDbConfig). */
function nestedIn(sf: ts.SourceFile, reader: string): string {
  const call = findAll(declarationIn(sf, 'loadConfig')!, ts.isCallExpression).find((c) => c.expression.getText() === reader);
  return call && ts.isPropertyAssignment(call.parent) ? call.parent.name.getText() : reader;
}

/** The file-local function a read is an argument of (int() included), if any. */
function helperOf(read: ts.Expression): ts.FunctionDeclaration | undefined {
  const call = up(read);
  if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) return undefined;
  const callee = declarationIn(read.getSourceFile(), call.expression.text);
  return callee && ts.isFunctionDeclaration(callee) ? callee : undefined;
}

/** TSDoc of every field of an interface, nested object types included, by path ("rateLimit.max"). */
function fieldDocs(decl: ts.InterfaceDeclaration | ts.TypeLiteralNode, prefix: string, docs: Map<string, string>) {
  for (const m of decl.members) {
    const path = `${prefix}.${nameOf(m)}`;
    const doc = commentOf(m);
    if (doc) docs.set(path, doc);
    if (ts.isPropertySignature(m) && m.type && ts.isTypeLiteralNode(m.type)) fieldDocs(m.type, path, docs);
  }
}

const show = (v: ReturnType<typeof evaluate>) => (v === undefined || v === '' ? '(unset)' : code(String(v)));
const OPPOSITE: Record<string, string> = { true: 'false', false: 'true', on: 'off', off: 'on' };
const up = (n: ts.Node): ts.Node => (ts.isParenthesizedExpression(n.parent) ? up(n.parent) : n.parent);

/** The value a file-local function falls back to for its parameter: `p ?? L`, `p || L`, or `if (p === undefined …) return L`. */
function fallbackInside(fn: ts.FunctionDeclaration): string | undefined {
  const param = fn.parameters[0] && nameOf(fn.parameters[0]);
  for (const b of findAll(fn, ts.isBinaryExpression)) {
    const op = b.operatorToken.kind;
    if ((op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken) && ts.isIdentifier(b.left) && b.left.text === param) return show(evaluate(b.right));
  }
  for (const s of findAll(fn, ts.isIfStatement)) {
    if (s.expression.getText().includes(`${param} === undefined`) && ts.isReturnStatement(s.thenStatement)) return show(evaluate(s.thenStatement.expression));
  }
  const last = findAll(fn, ts.isReturnStatement).pop()?.expression;
  return last && ts.isConditionalExpression(last) ? show(evaluate(last.whenFalse)) : undefined;
}

/** The default a read of the environment has, from the expression around it, and the bounds Math.max/min put on it. */
function fallbackOf(read: ts.Expression): string | undefined {
  const parent = up(read);
  if (ts.isBinaryExpression(parent) && parent.left === read) {
    const op = parent.operatorToken.kind;
    if (op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken)
      return evaluate(parent.right) === undefined && !/undefined/.test(parent.right.getText()) ? code(parent.right.getText()) : show(evaluate(parent.right));
    const compared = evaluate(parent.right);
    if (typeof compared === 'string') return code(OPPOSITE[compared] ?? `not ${compared}`);
    if (parent.right.getText() === 'undefined' && ts.isConditionalExpression(up(parent))) return show(evaluate((up(parent) as ts.ConditionalExpression).whenTrue));
  }
  if (ts.isConditionalExpression(parent) && parent.condition === read) return show(evaluate(parent.whenFalse));
  if (ts.isCallExpression(parent)) {
    // persistedSecret(env, dataDir, 'JWT_SECRET', 'jwt-secret'): made once, kept in a file of the data directory
    const file = parent.arguments[parent.arguments.indexOf(read) + 1];
    if (ts.isStringLiteral(read) && file && ts.isStringLiteral(file) && /generated/.test(commentOf(helperOf(read) ?? read))) return `generated once, kept in the data directory as ${code(file.text)}`;
    if (parent.arguments.length >= 2 && parent.arguments[0] === read) return `${show(evaluate(parent.arguments[1]))}${bounds(parent)}`;
    const callee = helperOf(read);
    if (callee) return fallbackInside(callee);
  }
  const fn = findAll(read.getSourceFile(), ts.isFunctionDeclaration).find((f) => f.pos <= read.pos && read.end <= f.end);
  return fn && fallbackInside(fn);
}

/** ", at least 1" for Math.max(1, int(…)); ", at most 50" for Math.min(50, …). */
function bounds(node: ts.Node): string {
  const parts: string[] = [];
  for (let n = up(node); ts.isCallExpression(n) && /^Math\.(max|min)$/.test(n.expression.getText()); n = up(n)) {
    parts.push(`${n.expression.getText() === 'Math.max' ? 'at least' : 'at most'} ${evaluate(n.arguments[0])}`);
  }
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** Reads of the environment under a node: env.X, and env names given as a string to a call that also gets `env`. */
function readsUnder(node: ts.Node): { name: string; read: ts.Expression }[] {
  const reads: { name: string; read: ts.Expression }[] = [];
  for (const n of findAll(node, (n): n is ts.Expression => ts.isPropertyAccessExpression(n) || ts.isStringLiteral(n))) {
    if (ts.isPropertyAccessExpression(n) && /^(process\.)?env$/.test(n.expression.getText()) && /^[A-Z][A-Z0-9_]+$/.test(n.name.text)) reads.push({ name: n.name.text, read: n });
    const call = n.parent;
    if (ts.isStringLiteral(n) && /^[A-Z][A-Z0-9_]{2,}$/.test(n.text) && ts.isCallExpression(call) && call.arguments.some((a) => a.getText() === 'env')) reads.push({ name: n.text, read: n });
  }
  return reads;
}

function fromConfig(): Variable[] {
  const sf = parse(CONFIG);
  const docs = new Map<string, string>();
  for (const type of Object.values(READERS)) fieldDocs(declarationIn(sf, type) as ts.InterfaceDeclaration, type, docs);
  const found = new Map<string, Variable>();
  const add = (name: string, read: ts.Expression, about: { field: string; meaning: (string | undefined)[] }) => {
    const known = found.get(name);
    if (known) known.fallback ||= fallbackOf(read) ?? '';
    else found.set(name, { name, fallback: fallbackOf(read) ?? '', ...about, file: CONFIG });
  };
  for (const [reader, type] of Object.entries(READERS)) {
    const fn = declarationIn(sf, reader) as ts.FunctionDeclaration;
    const locals = new Map(findAll(fn, ts.isVariableDeclaration).map((d) => [nameOf(d), d]));
    const visit = (literal: ts.ObjectLiteralExpression, path: string) => {
      for (const p of literal.properties) {
        const at = `${path}.${nameOf(p)}`;
        const value = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : undefined;
        if (!value) continue;
        if (ts.isObjectLiteralExpression(value)) {
          visit(value, at);
          continue;
        }
        const local = ts.isIdentifier(value) ? locals.get(value.text) : undefined;
        for (const { name, read } of readsUnder(local?.initializer ?? value)) {
          // the field's doc, else one naming the variable, else its object's ("rateLimit" for rateLimit.max)
          const doc = docs.get(at) ?? [...docs.values()].find((d) => new RegExp(`\\b${name}\\b`).test(d)) ?? docs.get(at.replace(/\.[^.]+$/, '')) ?? '';
          const helper = helperOf(read);
          // as a Config field: externalDbConfig() fills Config.externalDb
          const field = `${type === 'Config' ? '' : `${nestedIn(sf, reader)}.`}${at.slice(type.length + 1)}`;
          add(name, read, { field, meaning: [doc, commentOf(p), helperText(helper, name)] });
          // urlsByKey's "<NAME>_<KEY>": one more variable per connection key
          if (helper && commentOf(helper).includes('<NAME>_<KEY>')) add(`${name}_<KEY>`, read, { field, meaning: [doc, helperText(helper, name)] });
        }
      }
    };
    const returned = findAll(fn, ts.isReturnStatement).pop()?.expression;
    if (returned && ts.isObjectLiteralExpression(returned)) visit(returned, type);
  }
  return [...found.values()];
}

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))
    .map((f) => join(dir, f))
    .sort();
}

/** process.env.X elsewhere in core/ and plugins/, and process.env[name] through a helper called with the name. */
function elsewhere(): Variable[] {
  const found: Variable[] = [];
  for (const file of [...tsFiles('core'), ...tsFiles('plugins')].filter((f) => f !== CONFIG)) {
    const sf = parse(file);
    if (!sf.text.includes('process.env')) continue;
    const reads = readsUnder(sf).filter((r) => r.read.getText().startsWith('process.env'));
    for (const access of findAll(sf, ts.isElementAccessExpression).filter((e) => e.expression.getText() === 'process.env')) {
      const fn = findAll(sf, ts.isFunctionDeclaration).find((f) => f.pos <= access.pos && access.end <= f.end);
      const calls = findAll(sf, ts.isCallExpression).filter((c) => fn && c.expression.getText() === nameOf(fn) && c.arguments[0] && ts.isStringLiteral(c.arguments[0]));
      reads.push(...calls.map((c) => ({ name: (c.arguments[0] as ts.StringLiteral).text, read: c.arguments[0] })));
    }
    for (const { name, read } of reads) {
      const call = up(read);
      const callee = ts.isCallExpression(call) && ts.isIdentifier(call.expression) ? declarationIn(sf, call.expression.text) : undefined;
      const fn = findAll(sf, ts.isFunctionDeclaration).find((f) => f.pos <= read.pos && read.end <= f.end);
      const meaning = [callee && ts.isFunctionDeclaration(callee) && helperText(callee, name), fn && commentOf(fn)].find(Boolean) || headerOf(sf);
      found.push({ name, fallback: fallbackOf(read) ?? '', meaning: [meaning], file });
    }
  }
  return found;
}

/** The comments about a variable as sentences, each once. */
const sentences = (parts: (string | undefined)[]) => [...new Set(parts.filter((p): p is string => !!p))].map((p) => (/[.!?]$/.test(p) ? p : `${p}.`)).join(' ');

export function configurationPage(): string {
  const row = (v: Variable) => [code(v.name), v.fallback || '(unset)', v.field ? code(v.field) : '', sentences(v.meaning)];
  const others = elsewhere();
  return [
    banner(CONFIG, ...new Set(others.map((v) => v.file))),
    '# Configuration',
    'Every setting is an environment variable, and none is needed for a local start. `loadConfig()` in [core/config.ts](../../core/config.ts) reads them once, at start; a test or script hands `buildApp()` a `Config` of its own instead. "(unset)" means the variable has no default value: what its absence means is in the last column.',
    '## Read by core/config.ts',
    table(['variable', 'default', '`Config` field', 'meaning'], fromConfig().map(row)),
    '## Read where they are used',
    'These are read from `process.env` by the file that uses them, not through the `Config` object.',
    table(
      ['variable', 'default', 'read in', 'meaning'],
      others.map((v) => [code(v.name), v.fallback || '(unset)', `[${v.file}](../../${v.file})`, sentences(v.meaning)]),
    ),
  ].join('\n\n');
}

// Reading TypeScript source for the reference pages: parsed (no type checking,
// so a page takes milliseconds), with the comments written next to a declaration.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// TypeScript 6.0's compiler API: TypeScript 7, which type-checks the project, has no JavaScript API (see tools/ts-api)
import ts from 'plinth-ts-api/typescript';
import { ROOT } from './markdown.ts';

export { ts };

/** A repository file (path relative to the root), parsed. */
export const parse = (file: string) => ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);

/**
 * The comment written right above a node, as one paragraph: its /** … *\/ block,
 * else the // lines directly above it. A blank line between breaks the tie.
 */
export function commentOf(node: ts.Node): string {
  const sf = node.getSourceFile();
  const ranges = ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? [];
  const texts = ranges.map((r) => sf.text.slice(r.pos, r.end));
  const doc = texts.filter((t) => t.startsWith('/**')).pop();
  if (doc) return clean(doc.slice(3, -2).replace(/^\s*\* ?/gm, ''));
  const lines: string[] = [];
  for (let i = ranges.length - 1; i >= 0 && texts[i].startsWith('//'); i--) {
    const gap = sf.text.slice(ranges[i].end, i + 1 < ranges.length ? ranges[i + 1].pos : node.getStart());
    if ((gap.match(/\n/g) ?? []).length > 1) break;
    lines.unshift(texts[i].slice(2));
  }
  return clean(lines.join('\n'));
}

const clean = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/** The comment a file opens with (its header), as one paragraph. */
export function headerOf(sf: ts.SourceFile): string {
  const first = sf.statements[0];
  return first ? commentOf(first) : '';
}

/** The name a declaration has, if it has a plain one. */
export const nameOf = (node: ts.Node) => {
  const name = (node as { name?: ts.Node }).name;
  return name && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) ? name.text : undefined;
};

/** The top-level declaration of `name` in a file (function, interface, class, type, const). */
export function declarationIn(sf: ts.SourceFile, name: string): ts.Node | undefined {
  for (const s of sf.statements) {
    if (ts.isVariableStatement(s)) {
      const d = s.declarationList.declarations.find((v) => nameOf(v) === name);
      if (d) return d;
    } else if (nameOf(s) === name) return s;
  }
  return undefined;
}

/** A constant expression's value: literals, arithmetic and same-file constants; undefined when it is not one. */
export function evaluate(node: ts.Expression | undefined): string | number | boolean | null | undefined {
  if (!node) return undefined;
  if (ts.isParenthesizedExpression(node)) return evaluate(node.expression);
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isStringLiteralLike(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (node.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isIdentifier(node)) {
    const d = declarationIn(node.getSourceFile(), node.text);
    return d && ts.isVariableDeclaration(d) ? evaluate(d.initializer) : undefined;
  }
  if (ts.isBinaryExpression(node)) {
    const [a, b] = [evaluate(node.left), evaluate(node.right)];
    if (typeof a !== 'number' || typeof b !== 'number') return undefined;
    if (node.operatorToken.kind === ts.SyntaxKind.AsteriskToken) return a * b;
    if (node.operatorToken.kind === ts.SyntaxKind.PlusToken) return a + b;
  }
  return undefined;
}

/** Every node under `node` (itself included) that `test` accepts, in source order. */
export function findAll<T extends ts.Node>(node: ts.Node, test: (n: ts.Node) => n is T): T[] {
  const found: T[] = [];
  const visit = (n: ts.Node) => {
    if (test(n)) found.push(n);
    n.forEachChild(visit);
  };
  visit(node);
  return found;
}

// docs/reference/sdk.md: the module SDK, from core/plugin-api.ts (the one core
// file module code imports). Each export is followed to its declaration and shown
// with its signature and TSDoc; an interface's or class's public members each with
// theirs. Types their members name that the SDK does not export (Outbound for
// ctx.http, ListQuery for list()) follow, so every signature can be read through.
import { dirname, join, normalize } from 'node:path';
import { banner, code, slug, table } from './markdown.ts';
import { commentOf, declarationIn, nameOf, parse, ts } from './source.ts';

const SDK = 'core/plugin-api.ts';

interface Entry {
  name: string;
  file: string;
  node?: ts.Node;
  /** the package an export comes from, for one that is not in this repository */
  pkg?: string;
}

const KIND: [(n: ts.Node) => boolean, string][] = [
  [ts.isClassDeclaration, 'class'],
  [ts.isInterfaceDeclaration, 'interface'],
  [ts.isTypeAliasDeclaration, 'type'],
  [ts.isFunctionDeclaration, 'function'],
  [(n) => ts.isVariableDeclaration(n) && !!n.initializer && ts.isArrowFunction(n.initializer), 'function'],
  [ts.isVariableDeclaration, 'constant'],
];
const kindOf = (e: Entry) => (e.node ? KIND.find(([is]) => is(e.node!))![1] : 'package export');

/** Follows `name` from `file` to its declaration, through re-exports and the imports a re-export names. */
function resolve(name: string, file: string): Entry {
  const sf = parse(file);
  const node = declarationIn(sf, name);
  if (node) return { name, file, node };
  for (const s of sf.statements) {
    const from = (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? s.moduleSpecifier.text : undefined;
    if (!from) continue;
    const names = ts.isImportDeclaration(s) ? s.importClause?.namedBindings : ts.isExportDeclaration(s) ? s.exportClause : undefined;
    if (!names || !(ts.isNamedImports(names) || ts.isNamedExports(names)) || !names.elements.some((e) => e.name.text === name)) continue;
    const element = names.elements.find((e) => e.name.text === name)!;
    const original = element.propertyName?.getText() ?? name;
    return from.startsWith('.') ? resolve(original, normalize(join(dirname(file), from))) : { name, file, pkg: from };
  }
  throw new Error(`${name}: no declaration in ${file}`);
}

/** The exports of the SDK, in its order. */
function sdkExports(): Entry[] {
  const sf = parse(SDK);
  return sf.statements.filter(ts.isExportDeclaration).flatMap((s) => {
    const from = (s.moduleSpecifier as ts.StringLiteral).text;
    const names = s.exportClause && ts.isNamedExports(s.exportClause) ? s.exportClause.elements.map((e) => e.name.text) : [];
    return names.map((name) => (from.startsWith('.') ? resolve(name, normalize(join(dirname(SDK), from))) : { name, file: SDK, pkg: from }));
  });
}

/** A declaration's text without its body: a function's signature, a short constant whole, a long one by its type. */
function signature(node: ts.Node): string {
  const flat = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/^(export )?(async )?/, '');
  if (ts.isVariableDeclaration(node) && node.initializer && ts.isArrowFunction(node.initializer)) {
    const fn = node.initializer;
    return flat(`${node.name.getText()}(${fn.parameters.map((p) => p.getText()).join(', ')})${fn.type ? `: ${fn.type.getText()}` : ''}`);
  }
  const body = (node as { body?: ts.Node }).body;
  if (body) return flat(node.getSourceFile().text.slice(node.getStart(), body.getStart()).trimEnd());
  const text = node.getText().replace(/\s*\n\s*/g, ' ');
  if (ts.isVariableDeclaration(node)) return text.length <= 160 ? `const ${text}` : `const ${node.name.getText()}${node.type ? `: ${node.type.getText()}` : ''}`;
  return text;
}

/** The public members of an interface or class: name, signature and doc. */
function members(node: ts.Node): { name: string; signature: string; doc: string; node: ts.Node }[] {
  if (!ts.isInterfaceDeclaration(node) && !ts.isClassDeclaration(node)) return [];
  const list: ts.Node[] = [...node.members];
  return list
    .filter((m) => !ts.isConstructorDeclaration(m) && nameOf(m) && !ts.isPrivateIdentifier((m as ts.ClassElement).name!))
    .filter((m) => !(ts.getCombinedModifierFlags(m as ts.Declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)))
    .map((m) => {
      let sig = signature(m);
      if (ts.isGetAccessorDeclaration(m)) sig = `readonly ${nameOf(m)}${m.type ? `: ${m.type.getText()}` : ''}`;
      return { name: nameOf(m)!, signature: sig.replace(/;$/, ''), doc: commentOf(m), node: m };
    });
}

/** Types a declaration's members name that are declared in this repository, resolved from that declaration's file. */
function namedTypes(entry: Entry): Entry[] {
  const out: Entry[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName)) {
      try {
        const found = resolve(n.typeName.text, entry.file);
        if (found.node) out.push(found);
      } catch {
        // a type parameter or a global (Promise, Record, Date): nothing to show
      }
    }
    n.forEachChild(visit);
  };
  // the kernel's view of a context ("not for modules") is no part of the SDK
  for (const m of members(entry.node!).filter((m) => !/not for modules/.test(m.doc))) {
    const { type, parameters = [] } = m.node as { type?: ts.Node; parameters?: ts.NodeArray<ts.Node> };
    // the signature only: a method's body names types of its own
    for (const n of [type, ...parameters]) if (n) visit(n);
  }
  return out;
}

const heading = (e: Entry) => code(e.name);
/** Up to the first full stop that ends a sentence ("e.g." does not). */
const firstSentence = (doc: string) => /^(.*?\.)\s+(?=[A-Z])/.exec(doc)?.[1] ?? doc;

function section(e: Entry): string {
  const kind = kindOf(e);
  const source = e.pkg ? `From the package ${code(e.pkg)}.` : `${kind[0].toUpperCase()}${kind.slice(1)} in [${e.file}](../../${e.file}).`;
  if (!e.node) return [`### ${heading(e)}`, source].join('\n\n');
  const list = members(e.node);
  const shape = list.length ? '' : `\`\`\`ts\n${ts.isVariableDeclaration(e.node) || ts.isFunctionDeclaration(e.node) ? signature(e.node) : e.node.getText().replace(/^export /, '')}\n\`\`\``;
  const rows = list.map((m) => [code(m.signature), m.doc]);
  return [`### ${heading(e)}`, source, commentOf(ts.isVariableDeclaration(e.node) ? e.node.parent.parent : e.node), shape, rows.length ? table(['member', 'what it does'], rows) : '']
    .filter(Boolean)
    .join('\n\n');
}

export function sdkPage(): string {
  const exported = sdkExports();
  const names = new Set(exported.map((e) => e.name));
  const more: Entry[] = [];
  for (const e of exported.filter((e) => e.node)) {
    for (const t of namedTypes(e).filter((t) => !names.has(t.name))) {
      names.add(t.name);
      more.push(t);
    }
  }
  const overview = (list: Entry[]) =>
    table(
      ['name', 'kind', 'summary'],
      list.map((e) => [`[${e.name}](#${slug(heading(e))})`, kindOf(e), e.node ? firstSentence(commentOf(ts.isVariableDeclaration(e.node) ? e.node.parent.parent : e.node)) : '']),
    );
  return [
    banner(SDK),
    '# Module SDK',
    `Module code (\`plugins/<module>/\`) imports nothing from core but [${SDK}](../../${SDK}). Handlers, hooks, subscribers and jobs get a \`ModuleContext\` (\`ctx\`): the caller's scoped data access per entity (\`ctx.data('Lead')\` is an \`EntityData\`), transactions, after-commit work and the caller; never the kernel, an unscoped EntityManager or a secret.`,
    '## Exports',
    overview(exported),
    ...exported.map(section),
    '## Types the exports use',
    'Not exported by the SDK, but named by the members above.',
    overview(more),
    ...more.map(section),
  ].join('\n\n');
}

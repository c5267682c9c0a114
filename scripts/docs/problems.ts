// docs/reference/problems.md: every problem code the API answers with, from the
// OpenAPI document (the Problem schema's code enumeration, and each operation's
// error responses, whose descriptions name the codes they carry), with the title,
// fixed detail and comment each has in core/errors.ts, where they are declared.
import { ERRORS, type ErrorCode } from '../../core/errors.ts';
import { problemBody } from '../../core/http/problem.ts';
import { banner, code, table } from './markdown.ts';
import type { OpenApiDocument } from './openapi.ts';
import { commentOf, declarationIn, parse, ts } from './source.ts';

/** The comment above each entry of ERRORS in core/errors.ts. */
function comments(): Map<string, string> {
  const errors = declarationIn(parse('core/errors.ts'), 'ERRORS') as ts.VariableDeclaration;
  const literal = (errors.initializer as ts.AsExpression).expression as ts.ObjectLiteralExpression;
  return new Map(literal.properties.map((p) => [p.name!.getText(), commentOf(p)]));
}

/** Per code: the statuses it is documented under, the response headers there, and how many operations can answer it. */
function uses(doc: OpenApiDocument) {
  const byCode = new Map<string, { statuses: Set<string>; headers: Set<string>; operations: number }>();
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        for (const [, c] of (response.description ?? '').matchAll(/\(([A-Z_]+)\)/g)) {
          const use = byCode.get(c) ?? { statuses: new Set(), headers: new Set(), operations: 0 };
          use.statuses.add(status);
          for (const h of Object.keys(response.headers ?? {})) use.headers.add(h);
          use.operations++;
          byCode.set(c, use);
        }
      }
    }
  }
  return byCode;
}

export function problemsPage(doc: OpenApiDocument): string {
  const problem = doc.components.schemas.Problem;
  const codes = (problem.properties!.code.enum ?? []) as ErrorCode[];
  const notes = comments();
  const used = uses(doc);
  const required = new Set(problem.required ?? []);
  const fields = Object.entries(problem.properties ?? {}).map(([name, s]) => [code(name), required.has(name) ? 'yes' : '', s.description ?? '']);
  const rows = codes.map((c) => {
    const [status, title, detail] = ERRORS[c];
    const use = used.get(c);
    const meaning = [notes.get(c), detail === '%s' ? '' : `Detail: "${detail}"`].filter(Boolean).join('. ');
    return [
      code(c),
      [...(use?.statuses ?? [String(status)])].join(', '),
      title,
      code(String(problemBody({ code: c }, '').type)),
      meaning,
      [...(use?.headers ?? [])].map(code).join(', '),
      String(use?.operations ?? 0),
    ];
  });
  return [
    banner('core/errors.ts', 'core/http/problem.ts'),
    '# Problem codes',
    'Every error is an RFC 9457 problem details document (`application/problem+json`) with a stable `code`: clients and tests branch on the code, never on the title or detail text. This page is made from the OpenAPI document the server publishes (`GET /api-docs/json`), in which each operation lists the codes it can answer under their status.',
    '## The problem document',
    table(['field', 'always', 'meaning'], fields),
    '## Codes',
    'The status is the one the OpenAPI document gives the code, or the one core/errors.ts declares for a code no operation lists (the server answers those whatever the route, see [core/http/framework-errors.ts](../../core/http/framework-errors.ts)). "Operations" counts the operations that document it; "headers" are response headers documented beside it.',
    table(['code', 'status', 'title', 'type', 'meaning', 'headers', 'operations'], rows),
  ].join('\n\n');
}

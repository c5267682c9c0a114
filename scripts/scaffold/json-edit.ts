// Minimal text edits on a JSON document: find where values sit, then insert
// into arrays and objects without re-serialising anything else. --add-entity
// uses it so a developer's manifest keeps every byte they wrote, formatting
// and key order included, outside the places new entries go.

export type JsonNode =
  | { kind: 'object'; start: number; end: number; members: Array<{ key: string; value: JsonNode }> }
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'value'; start: number; end: number; value: unknown };

export interface Edit {
  at: number;
  remove: number;
  insert: string;
}

/** Positions of every value in `text`, which must be valid JSON (JSON.parse it first). */
export function scan(text: string): JsonNode {
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const str = (): string => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): JsonNode => {
    ws();
    const start = i;
    if (text[i] === '{') {
      i++;
      const members: Array<{ key: string; value: JsonNode }> = [];
      ws();
      while (text[i] !== '}') {
        ws();
        const key = str();
        ws();
        i++; // :
        members.push({ key, value: value() });
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
      return { kind: 'object', start, end: i, members };
    }
    if (text[i] === '[') {
      i++;
      const items: JsonNode[] = [];
      ws();
      while (text[i] !== ']') {
        items.push(value());
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
      return { kind: 'array', start, end: i, items };
    }
    if (text[i] === '"') {
      const v = str();
      return { kind: 'value', start, end: i, value: v };
    }
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i))!;
    i += m[0].length;
    return { kind: 'value', start, end: i, value: JSON.parse(m[0]) };
  };
  return value();
}

export const member = (node: JsonNode | undefined, key: string): JsonNode | undefined => (node?.kind === 'object' ? node.members.find((m) => m.key === key)?.value : undefined);

/** The whitespace a line starts with, for the line holding `at`. */
function indentAt(text: string, at: number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

const reindent = (block: string, indent: string) =>
  block
    .split('\n')
    .map((line, i) => (i && line ? indent + line : line))
    .join('\n');

/**
 * Appends elements (JSON text, possibly several lines) to an array: one per
 * line in a multi-line array, ", x" in a one-line array.
 */
export function appendToArray(text: string, node: JsonNode, elements: string[]): Edit {
  if (node.kind !== 'array') throw new Error('appendToArray needs an array');
  if (node.items.length) {
    const last = node.items.at(-1)!;
    const multiLine = text.slice(node.start, node.end).includes('\n');
    if (!multiLine && !elements.some((e) => e.includes('\n'))) return { at: last.end, remove: 0, insert: elements.map((e) => `, ${e}`).join('') };
    if (!multiLine) {
      // A one-line array gains block elements on lines of their own; only the whitespace before "]" changes.
      const outer = indentAt(text, node.start);
      const inner = `${outer}  `;
      return { at: last.end, remove: node.end - last.end, insert: `${elements.map((e) => `,\n${inner}${reindent(e, inner)}`).join('')}\n${outer}]` };
    }
    const indent = indentAt(text, node.items[0].start);
    return { at: last.end, remove: 0, insert: elements.map((e) => `,\n${indent}${reindent(e, indent)}`).join('') };
  }
  const outer = indentAt(text, node.start);
  const inner = `${outer}  `;
  const block = elements.some((e) => e.includes('\n')) || elements.length > 3;
  const insert = block ? `[\n${elements.map((e) => inner + reindent(e, inner)).join(',\n')}\n${outer}]` : `[${elements.join(', ')}]`;
  return { at: node.start, remove: node.end - node.start, insert };
}

/** Adds "key": value as the object's last member, indented like its first. */
export function addMember(text: string, node: JsonNode, key: string, valueText: string): Edit {
  if (node.kind !== 'object') throw new Error('addMember needs an object');
  const last = node.members.at(-1);
  const indent = last ? indentAt(text, node.members[0].value.start) : `${indentAt(text, node.start)}  `;
  const entry = `${JSON.stringify(key)}: ${reindent(valueText, indent)}`;
  if (last) return { at: last.value.end, remove: 0, insert: `,\n${indent}${entry}` };
  return { at: node.start + 1, remove: node.end - node.start - 2, insert: `\n${indent}${entry}\n${indentAt(text, node.start)}` };
}

export const replaceValue = (node: JsonNode, insert: string): Edit => ({ at: node.start, remove: node.end - node.start, insert });

/** Applies edits (positions in the original text), last position first. */
export function applyEdits(text: string, edits: Edit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.insert + out.slice(e.at + e.remove);
  return out;
}

// The in-memory file list (after platformatic's generator: addFile → listFiles
// → writeFiles): generation never touches the disk, so it is testable and
// --dry-run is just "list, don't write". Writing checks every file first and
// then writes; a file created meanwhile is never overwritten (flag "wx"), and an
// updated file must still hold what it held when the generator read it.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, isAbsolute, relative } from 'node:path';
import { ScaffoldError, type Problem } from './errors.ts';

export interface GeneratedFile {
  /** absolute path */
  path: string;
  contents: string;
  /** create: must not exist; update: replaces `previous`, which must still be on disk */
  action: 'create' | 'update';
  previous?: string;
}

export class FileList {
  readonly #files = new Map<string, GeneratedFile>();

  addFile(file: GeneratedFile): void {
    if (!isAbsolute(file.path)) throw new Error(`addFile needs an absolute path: ${file.path}`);
    if (this.#files.has(file.path)) throw new Error(`${file.path} is generated twice`);
    this.#files.set(file.path, file);
  }

  listFiles(): GeneratedFile[] {
    return [...this.#files.values()];
  }

  getFile(path: string): GeneratedFile | undefined {
    return this.#files.get(path);
  }

  /** Problems that would stop writeFiles: files to create that exist, files to update that changed. */
  async conflicts(root: string): Promise<Problem[]> {
    const problems: Problem[] = [];
    for (const f of this.#files.values()) {
      const shown = display(f.path, root);
      if (f.action === 'create' && existsSync(f.path)) problems.push({ where: shown, message: 'exists already; the scaffolder never overwrites a file' });
      if (f.action === 'update' && (!existsSync(f.path) || (await readFile(f.path, 'utf8')) !== f.previous)) {
        problems.push({ where: shown, message: 'changed while the scaffolder ran; run it again' });
      }
    }
    return problems;
  }

  async writeFiles(root: string): Promise<string[]> {
    const problems = await this.conflicts(root);
    if (problems.length) throw new ScaffoldError('SCAFFOLD_EXISTS', problems);
    const written: string[] = [];
    for (const f of this.#files.values()) {
      await mkdir(dirname(f.path), { recursive: true });
      await writeFile(f.path, await formatted(f.path, f.contents), { flag: f.action === 'create' ? 'wx' : 'w' });
      written.push(f.path);
    }
    return written;
  }
}

/** A path as the user reads it: relative to the project root when inside it. */
export function display(path: string, root: string): string {
  const rel = relative(root, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * TypeScript as the project's formatter writes it (CI checks it: npm run format:check), under the
 * target project's Prettier config, else Plinth's own; other files as rendered.
 */
async function formatted(path: string, contents: string): Promise<string> {
  if (!path.endsWith('.ts')) return contents;
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(path)) ?? (await prettier.resolveConfig(fileURLToPath(import.meta.url)));
  return prettier.format(contents, { ...config, filepath: path });
}

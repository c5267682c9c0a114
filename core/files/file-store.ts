// Where uploaded files live: a small storage interface, so a local disk now and
// an S3-compatible store later serve module code the same way. Keys are ids the
// kernel generates, never a name a caller chose; every file belongs to one
// tenant, and module code only ever sees the store through its context's
// tenant (TenantFiles, ctx.files).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UUID } from '../ids.ts';

/** What a stored file is: its byte count and SHA-256 (hex), computed while it was written. */
export interface StoredFile {
  /** bytes written */
  size: number;
  /** SHA-256 of the bytes, hex */
  sha256: string;
}

/** A stored file opened for reading. */
export interface FileContent {
  /** the file's bytes; read it to the end or destroy it */
  stream: Readable;
  /** bytes the stream gives (for Content-Length) */
  size: number;
}

/** Bytes to store: a stream, or an async generator (which may check the bytes and throw to refuse them). */
export type FileSource = Readable | AsyncIterable<Uint8Array>;

/**
 * A file store. `put` makes the file visible whole or not at all: a source that
 * fails part-way (a cut-off upload, a refused byte) leaves nothing behind.
 */
export interface FileStore {
  put(tenantId: string, key: string, source: FileSource): Promise<StoredFile>;
  /** the file opened for reading ({ stream, size }); null when there is no such file */
  get(tenantId: string, key: string): Promise<FileContent | null>;
  /** whether a file was there to delete */
  delete(tenantId: string, key: string): Promise<boolean>;
  /** whether a file is stored under the key */
  exists(tenantId: string, key: string): Promise<boolean>;
}

/** The store as module code sees it: one tenant's files (ctx.files). */
export interface TenantFiles {
  /** stores `source` under a new key, whole or not at all: { key, size, sha256 } */
  put(source: FileSource): Promise<StoredFile & { key: string }>;
  /** the file opened for reading, { stream, size }; null when there is no file under the key */
  get(key: string): Promise<FileContent | null>;
  /** deletes the file: true when one was there, false when there was none */
  delete(key: string): Promise<boolean>;
  /** true when a file is stored under the key */
  exists(key: string): Promise<boolean>;
}

/** The tenant id pattern of the registry (tenancy/registry.ts): no dot, no slash, so never a path. */
const TENANT = /^[a-z][a-z0-9-]{1,39}$/;

function checked(tenantId: string, key: string): void {
  if (!TENANT.test(tenantId)) throw new Error(`file store: "${tenantId}" is no tenant id`);
  if (!UUID.test(key)) throw new Error(`file store: "${key}" is no file key (keys are generated ids)`);
}

/** Counts and hashes the bytes passing through. */
function measuring(into: StoredFile): Transform {
  const hash = createHash('sha256');
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      into.size += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      into.sha256 = hash.digest('hex');
      done();
    },
  });
}

/**
 * Files on the local disk: `<root>/<tenant>/<key[0..1]>/<key>`. A file is
 * written to `<root>/<tenant>/.partial/` first and renamed into place once
 * whole (rename is atomic on one file system), so a reader never sees half a file.
 */
export class DiskFileStore implements FileStore {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  #path(tenantId: string, key: string): string {
    checked(tenantId, key);
    const k = key.toLowerCase();
    return join(this.root, tenantId, k.slice(0, 2), k);
  }

  async put(tenantId: string, key: string, source: FileSource): Promise<StoredFile> {
    const path = this.#path(tenantId, key);
    const partialDir = join(this.root, tenantId, '.partial');
    await mkdir(partialDir, { recursive: true });
    const partial = join(partialDir, `${key}.${randomBytes(6).toString('hex')}`);
    const stored: StoredFile = { size: 0, sha256: '' };
    try {
      await pipeline(source, measuring(stored), createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
      await mkdir(join(path, '..'), { recursive: true });
      await rename(partial, path);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return stored;
  }

  async get(tenantId: string, key: string): Promise<FileContent | null> {
    const path = this.#path(tenantId, key);
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    // opened before the size is read: a delete meanwhile cannot cut the stream short
    const { size } = await handle.stat();
    return { stream: createReadStream('', { fd: handle, autoClose: true }), size };
  }

  async delete(tenantId: string, key: string): Promise<boolean> {
    try {
      await unlink(this.#path(tenantId, key));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  async exists(tenantId: string, key: string): Promise<boolean> {
    try {
      return (await stat(this.#path(tenantId, key))).isFile();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }
}

/** One tenant's view of a store; new files get a random id as their key. */
export function tenantFiles(store: FileStore, tenantId: string): TenantFiles {
  return {
    put: async (source) => {
      const key = randomUUID();
      return { key, ...(await store.put(tenantId, key, source)) };
    },
    get: (key) => store.get(tenantId, key),
    delete: (key) => store.delete(tenantId, key),
    exists: (key) => store.exists(tenantId, key),
  };
}

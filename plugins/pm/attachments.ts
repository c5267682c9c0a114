// Files attached to tasks (and their comments): uploaded as multipart into the
// kernel's file store (ctx.files), what they are decided from their bytes, not
// the client's word, and served back only to who may read the attachment row.
// The row (manifests/pm.json, Attachment) holds the store's key as an internal
// field; the access rules are the manifest's grants, applied by ctx.data.
//
//   POST /api/pm/tasks/:taskId/attachments     createAttachment
//   GET  /api/pm/attachments/:id/content       getAttachmentContent
//   DELETE (generated) removes the file once the delete committed (attachmentHooks);
//   a task's delete (its attachments go by cascade) likewise (taskAttachmentHooks).
import { fileTypeFromBuffer } from 'file-type';
import { handler, httpError, readUpload, Type, validationError, type EntityHooks, type ModuleContext, type Upload } from '../../core/plugin-api.ts';

/** What file-type recognises and we take, by the media type it names. */
const BINARY_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/heic',
  'image/bmp',
  'image/tiff',
  'application/pdf',
  'application/zip',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
]);
/** A zip a client calls one of these is stored as that (file-type may stop at "zip" when the telling entry comes late). */
const ZIP_BASED = [...BINARY_TYPES].filter((t) => t.startsWith('application/vnd.'));
/** Text has no magic bytes: taken when declared so and the bytes are UTF-8 without NUL. No HTML, no SVG. */
const TEXT_TYPES = new Set(['text/plain', 'text/csv', 'text/markdown']);
/** Bytes read before the type is decided (file-type needs a few KiB; office files a little more). */
const HEAD_BYTES = 64 * 1024;

const refused = (detail: string) => httpError('UNSUPPORTED_MEDIA_TYPE', detail, { headers: { connection: 'close' } });
const baseType = (mime: string) => mime.split(';')[0].trim().toLowerCase();

/**
 * The upload's bytes, passed on once their type is known and accepted: the
 * first HEAD_BYTES decide it; text is checked to its end. `found.type` is the
 * type to record.
 */
async function* inspected(upload: Upload, found: { type?: string }): AsyncGenerator<Buffer> {
  const declared = baseType(upload.mimeType);
  let text: TextDecoder | undefined;
  const checkText = (chunk: Buffer, last: boolean) => {
    if (chunk.includes(0)) throw refused('text files must not contain NUL bytes');
    try {
      text!.decode(chunk, { stream: !last });
    } catch {
      throw refused('text files must be UTF-8');
    }
  };
  const decide = async (head: Buffer) => {
    const sniffed = await fileTypeFromBuffer(head);
    if (sniffed) {
      if (!BINARY_TYPES.has(sniffed.mime)) throw refused(`${sniffed.mime} files are not accepted`);
      found.type = sniffed.mime === 'application/zip' && ZIP_BASED.includes(declared) ? declared : sniffed.mime;
    } else if (TEXT_TYPES.has(declared)) {
      text = new TextDecoder('utf-8', { fatal: true });
      found.type = declared;
    } else {
      throw refused('the file is of no accepted type: images, PDF, office documents, zip, or UTF-8 text declared as text/plain, text/csv or text/markdown');
    }
  };

  let head: Buffer[] = [];
  let size = 0;
  for await (const chunk of upload.file) {
    if (!head.length && found.type) {
      if (text) checkText(chunk, false);
      yield chunk;
      continue;
    }
    head.push(chunk);
    size += chunk.length;
    if (size < HEAD_BYTES) continue;
    const bytes = Buffer.concat(head);
    head = [];
    await decide(bytes);
    if (text) checkText(bytes, false);
    yield bytes;
  }
  if (!found.type) {
    const bytes = Buffer.concat(head);
    await decide(bytes);
    if (text) checkText(bytes, false);
    if (bytes.length) yield bytes;
  }
  if (text) checkText(Buffer.alloc(0), true);
}

/** Control characters, and the marks that turn text around ("txt.exe" shown as "exe.txt") */
// eslint-disable-next-line no-control-regex -- control characters are what it removes
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A file name safe to store and show: no path, no control or bidi characters, at most 255 characters. */
function safeFileName(name: string): string {
  const base = (name ?? '').normalize('NFC').split(/[/\\]/).pop()!;
  const clean = base.replace(UNSHOWABLE, '').trim().replace(/^\.+/, '');
  const chars = [...clean];
  if (chars.length <= 255) return clean || 'file';
  const dot = clean.lastIndexOf('.');
  const ext = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : '';
  return chars.slice(0, 255 - [...ext].length).join('') + ext;
}

/** `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266): quotes, backslashes and line breaks never reach the header. */
export function contentDisposition(name: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const plain = safeFileName(name).replace(/[\u0000-\u001f\u007f"\\]/g, '');
  const ascii = plain.replace(/[^\x20-\x7e]/g, '_') || 'file';
  const encoded = encodeURIComponent(plain).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const Id = Type.String({ format: 'uuid' });

export const createAttachment = handler(
  {
    params: Type.Object({ taskId: Id }, { additionalProperties: false }),
    upload: Type.Object(
      {
        commentId: Type.Optional(Type.String({ format: 'uuid', description: 'a comment of the task the file belongs to' })),
        file: Type.String({ format: 'binary', description: 'the file; its type is read from its bytes' }),
      },
      { additionalProperties: false },
    ),
    response: { 201: Type.Ref('PmAttachment', { description: 'The attachment; Location names it', headers: ['Location'] }) },
  },
  async (ctx, request, reply) => {
    const { taskId } = request.params;
    // a task the caller cannot see is a 404 before a byte of the upload is read
    await ctx.data('Task').read(taskId);
    const upload = await readUpload(request);
    const found: { type?: string } = {};
    const stored = await ctx.files.put(inspected(upload, found));
    try {
      const fields = await upload.fields();
      const unknown = Object.keys(fields).filter((f) => f !== 'commentId');
      if (unknown.length) throw validationError(unknown.map((f) => ({ path: `/${f}`, message: 'is not a field of the upload' })));
      const commentId = fields.commentId || undefined;
      if (commentId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(commentId))
        throw validationError([{ path: '/commentId', message: 'must be a comment id (UUID)' }]);
      const row = await ctx.transaction(async (tx) => {
        if (commentId !== undefined) {
          const comment = await tx.data('Comment').find({ id: commentId }, { limit: 1 });
          if (comment[0]?.taskId !== taskId) throw validationError([{ path: '/commentId', message: 'is no comment of this task' }]);
        }
        return tx
          .data('Attachment')
          .create(
            { taskId, ...(commentId ? { commentId } : {}), fileName: safeFileName(upload.fileName), contentType: found.type!, size: stored.size, sha256: stored.sha256 },
            { internal: { uploaderId: ctx.userId, storageKey: stored.key } },
          );
      });
      reply.code(201).header('location', `/api/pm/attachments/${row.id}`);
      return ctx.data('Attachment').toDto(row);
    } catch (err) {
      // no row, no file: the store keeps nothing the database does not name
      await ctx.files.delete(stored.key);
      throw err;
    }
  },
);

export const getAttachmentContent = handler(
  {
    params: Type.Object({ id: Id }, { additionalProperties: false }),
    response: {
      200: Type.String({
        format: 'binary',
        mediaType: 'application/octet-stream',
        description: 'The file, with the type read from its bytes at upload; ETag is its SHA-256',
        headers: ['ETag', 'Content-Disposition', 'X-Content-Type-Options'],
      }),
    },
  },
  async (ctx, request, reply) => {
    const { id } = request.params;
    const row = await ctx.data('Attachment').reveal(id, ['storageKey']);
    if (!row) throw httpError('NOT_FOUND', `Attachment ${id} does not exist`);
    const content = typeof row.storageKey === 'string' ? await ctx.files.get(row.storageKey) : null;
    if (!content) throw httpError('NOT_FOUND', `the file of attachment ${id} is gone`);
    const type = String(row.contentType);
    reply
      .header('content-type', type.startsWith('text/') ? `${type}; charset=utf-8` : type)
      .header('content-length', String(content.size))
      .header('content-disposition', contentDisposition(String(row.fileName)))
      .header('x-content-type-options', 'nosniff')
      .header('etag', `"${row.sha256}"`);
    return reply.send(content.stream);
  },
);

/**
 * The store keys of attachments, read while their rows still exist (inside the
 * delete's transaction), and their files removed once it committed: a rollback
 * keeps row and file, a commit leaves neither.
 */
async function removeFilesAfterCommit(ctx: ModuleContext, ids: string[]): Promise<void> {
  const system = ctx.system().data('Attachment');
  const keys: string[] = [];
  for (const id of ids) {
    const key = (await system.reveal(id, ['storageKey']))?.storageKey;
    if (typeof key === 'string') keys.push(key);
  }
  if (keys.length)
    await ctx.afterCommit(async () => {
      for (const key of keys) await ctx.files.delete(key);
    });
}

export const attachmentHooks: EntityHooks = {
  async beforeWrite(ctx, event) {
    if (event.op === 'delete' && event.id) await removeFilesAfterCommit(ctx, [event.id]);
  },
};

/** A task's attachments go with it (ON DELETE CASCADE, no hook runs for them): their files go once the delete committed. */
export const taskAttachmentHooks: EntityHooks = {
  async beforeWrite(ctx, event) {
    if (event.op !== 'delete' || !event.id) return;
    // every attachment of the task, whoever may read it: the cascade removes them all
    const rows = await ctx.system().data('Attachment').find({ taskId: event.id }, { limit: 100_000 });
    await removeFilesAfterCommit(
      ctx,
      rows.map((r) => r.id as string),
    );
  },
};

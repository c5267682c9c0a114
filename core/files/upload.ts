// Reading a multipart/form-data upload as a stream (@fastify/multipart, which
// the HTTP app registers with the configured limits: http/multipart.ts). One
// file per request; text fields may come before or after it. Whatever goes
// wrong while reading the body answers as a problem: too large 413, cut off or
// malformed 400, not multipart 415; never a 500.
import type { FastifyRequest } from 'fastify';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { httpError, type HttpError } from '../errors.ts';

/** The file part of an upload. Read `file` to its end (store it) before calling `fields()`. */
export interface Upload {
  /** the form field the file came in */
  fieldName: string;
  /** as the client named it (unchecked: sanitise before storing or showing it) */
  fileName: string;
  /** as the client declared it (unchecked: sniff the bytes) */
  mimeType: string;
  /** the bytes; fails with 413 PAYLOAD_TOO_LARGE past the configured limit, 400 when the body ends early */
  file: AsyncIterable<Buffer>;
  /** the text fields, those after the file included (drains the file if it was not read) */
  fields(): Promise<Record<string, string>>;
}

/** Bytes of boundaries and part headers a form may add around its file and fields. */
const FORM_OVERHEAD = 64 * 1024;

const LIMIT_CODES = new Set(['FST_REQ_FILE_TOO_LARGE', 'FST_PARTS_LIMIT', 'FST_FILES_LIMIT', 'FST_FIELDS_LIMIT']);

/** The problem of an error met while reading the request body. */
function problemOf(err: unknown): HttpError {
  const e = err as { code?: string; message?: string; statusCode?: number };
  // ours, already a problem (the size limit below)
  if (e.statusCode && e.code && !e.code.startsWith('FST_')) return err as HttpError;
  // the body was not read to its end: the connection cannot carry another request
  const close = { headers: { connection: 'close' } };
  if (e.code && LIMIT_CODES.has(e.code)) return httpError('PAYLOAD_TOO_LARGE', `the upload exceeds a limit: ${e.message}`, close);
  if (e.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return httpError('UNSUPPORTED_MEDIA_TYPE', 'send the upload as multipart/form-data');
  // busboy's own errors (unexpected end of form, malformed part header) and a premature close
  return httpError('VALIDATION_FAILED', `the multipart body is malformed or ended early: ${e.message ?? 'unreadable'}`, close);
}

function tooLarge(limit: number): HttpError {
  return httpError('PAYLOAD_TOO_LARGE', `the file exceeds the upload limit of ${limit} bytes`, { headers: { connection: 'close' } });
}

/**
 * The upload of a multipart request: the first file part, in `field`; text
 * fields before it are read on the way. 400 without that file, 413 when the
 * request says in advance (Content-Length) that it is larger than the limit
 * allows.
 */
export async function readUpload(request: FastifyRequest, opts: { field?: string } = {}): Promise<Upload> {
  const field = opts.field ?? 'file';
  if (typeof request.isMultipart !== 'function' || !request.isMultipart()) throw httpError('UNSUPPORTED_MEDIA_TYPE', 'send the upload as multipart/form-data');
  const limits = request.server.uploadLimits;
  const limit = limits.fileSize;
  const declared = Number(request.headers['content-length']);
  // a body this large cannot be a file within the limit plus the fields beside it: refused before a byte is read
  if (Number.isFinite(declared) && declared > limit + limits.fieldSize * limits.fields + FORM_OVERHEAD) throw tooLarge(limit);

  const parts = request.parts();
  const fields: Record<string, string> = {};
  const text = (p: MultipartValue) => {
    if (p.valueTruncated) throw httpError('PAYLOAD_TOO_LARGE', `field ${p.fieldname} exceeds the field size limit`, { headers: { connection: 'close' } });
    fields[p.fieldname] = String(p.value);
  };
  let part: MultipartFile | MultipartValue | undefined;
  try {
    for (;;) {
      const next = await parts.next();
      if (next.done) break;
      if (next.value.type === 'file') {
        part = next.value;
        break;
      }
      text(next.value);
    }
  } catch (err) {
    throw problemOf(err);
  }
  if (!part || part.type !== 'file') throw httpError('VALIDATION_FAILED', `the form has no file in field "${field}"`, { errors: [{ path: `/${field}`, message: 'is required' }] });
  if (part.fieldname !== field) {
    part.file.resume();
    throw httpError('VALIDATION_FAILED', `the file must come in field "${field}", not "${part.fieldname}"`, {
      errors: [{ path: `/${part.fieldname}`, message: 'is not a file field' }],
      headers: { connection: 'close' },
    });
  }
  const filePart = part;
  let consumed = false;

  async function* bytes(): AsyncGenerator<Buffer> {
    // busboy truncates a file at the limit and says so once; stop reading at that moment
    const stream = filePart.file;
    let over = false;
    stream.once('limit', () => {
      over = true;
      stream.destroy(tooLarge(limit));
    });
    try {
      for await (const chunk of stream) yield chunk as Buffer;
      if (over || stream.truncated) throw tooLarge(limit);
    } catch (err) {
      throw over ? tooLarge(limit) : problemOf(err);
    } finally {
      consumed = true;
    }
  }
  const file = bytes();

  return {
    fieldName: filePart.fieldname,
    fileName: filePart.filename,
    mimeType: filePart.mimetype,
    file,
    async fields() {
      if (!consumed) await drain(file);
      try {
        for (;;) {
          const next = await parts.next();
          if (next.done) break;
          if (next.value.type === 'file') {
            next.value.file.resume();
            throw httpError('VALIDATION_FAILED', 'send one file per upload', { errors: [{ path: `/${next.value.fieldname}`, message: 'is a second file' }], headers: { connection: 'close' } });
          }
          text(next.value);
        }
      } catch (err) {
        throw problemOf(err);
      }
      return fields;
    },
  };
}

/** The limits the HTTP app registered @fastify/multipart with (http/multipart.ts). */
export interface UploadLimits {
  fileSize: number;
  fieldSize: number;
  fields: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the route takes a multipart/form-data body (read by its handler with readUpload) */
    multipart?: boolean;
  }
  interface FastifyInstance {
    uploadLimits: UploadLimits;
  }
}

async function drain(bytes: AsyncIterable<Buffer>): Promise<void> {
  const it = bytes[Symbol.asyncIterator]();
  while (!(await it.next()).done);
}

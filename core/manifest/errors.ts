/**
 * A manifest the kernel refuses to start with: names the file and the JSON
 * pointer (RFC 6901) of the fault; "" points at the whole document.
 */
export class ManifestError extends Error {
  readonly code = 'MANIFEST_INVALID';
  readonly file: string;
  readonly pointer: string;
  constructor(file: string, pointer: string, reason: string) {
    super(`${file}${pointer ? `#${pointer}` : ''}: ${reason}`);
    this.name = 'ManifestError';
    this.file = file;
    this.pointer = pointer;
  }
}

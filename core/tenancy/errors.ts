// Coded errors of tenant provisioning and moves; the HTTP layer validates its
// input first, so these reach callers of the kernel API and the scripts.
export class TenantError extends Error {
  readonly code: 'INVALID_TENANT_ID' | 'UNKNOWN_CONNECTION' | 'INVALID_TIME_ZONE' | 'UNKNOWN_TENANT' | 'SAME_CONNECTION' | 'TENANT_OUTDATED' | 'TARGET_EXISTS' | 'MOVE_MISMATCH';
  constructor(code: TenantError['code'], message: string) {
    super(message);
    this.name = 'TenantError';
    this.code = code;
  }
}

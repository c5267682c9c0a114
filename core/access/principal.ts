// Who acts on a tenant's data. Users sign in; other principals (a module's
// API-key clients, the system running jobs and scripts) come from
// authenticators and kernel.contextFor(). Abilities and grant conditions see
// them all alike.
export interface Principal {
  /** user: a person signed in; client: a module's API client (an API key); system: the kernel (jobs, scripts, ctx.system()) */
  kind: 'user' | 'client' | 'system';
  /** the user's or client's id; null for the system */
  id: string | null;
  /** role names the principal holds in its tenant */
  roles: string[];
  /**
   * permission codes the principal holds directly, instead of through roles
   * (an API key's scopes); when given, its ability comes from these alone
   */
  codes?: string[];
  /** companies the principal belongs to */
  companyIds: string[];
}

export const SYSTEM: Principal = Object.freeze({ kind: 'system', id: null, roles: [], companyIds: [] }) as Principal;

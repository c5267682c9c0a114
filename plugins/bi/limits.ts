// What one analytics query may cost: its statement's time limit and the most
// rows it answers. BI_QUERY_TIMEOUT_MS and BI_MAX_ROWS override the defaults
// (read per query, so a test or an operator can lower them).
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_ROWS = 10_000;

function setting(name: string, fallback: number, max: number): number {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : fallback;
}

export const LIMITS = () => ({
  timeoutMs: setting('BI_QUERY_TIMEOUT_MS', DEFAULT_TIMEOUT_MS, 600_000),
  maxRows: setting('BI_MAX_ROWS', DEFAULT_MAX_ROWS, 10_000),
});

/** What a data source's test keeps of its schema: tables (by name) and usable columns per table. */
export const SOURCE_LIMITS = { maxTables: 500, maxColumns: 300 };

// The load generator: autocannon's programmatic API, in the bench process (the
// servers run in their own). Each request is built by the scenario's
// setupRequest, so ids, tenants and SKUs vary per request.
import { createRequire } from 'node:module';

export interface AcRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
  total?: number;
}
interface AcResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AcResult>;

// autocannon ships no types; this is the part of its API the bench uses
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadOptions {
  url: string;
  connections: number;
  duration: number;
  setup: (req: AcRequest) => AcRequest;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const r = await autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.duration,
    pipelining: 1,
    requests: [{ setupRequest: (req: AcRequest) => o.setup(req) }],
  });
  return resultOf(r, r.duration);
}

/** What a run measured; `seconds` is the time the requests rate is taken over. */
function resultOf(r: AcResult, seconds: number): LoadResult {
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]));
  return {
    rps: Math.round(r.requests.total / seconds),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
  };
}

interface AmountResult extends LoadResult {
  /** responses with the awaited status */
  ok: number;
  /** ms from the start until the last response with the awaited status (performance.now() based) */
  startedAt: number;
  lastOkAt: number;
  endedAt: number;
}

/** Sends exactly `amount` requests over `connections`, as fast as the server answers; notes when the last `okStatus` came. */
export async function runAmount(o: Omit<LoadOptions, 'duration'> & { amount: number; okStatus: number }): Promise<AmountResult> {
  let ok = 0;
  let lastOkAt = NaN;
  const startedAt = performance.now();
  const r = await new Promise<AcResult>((resolve, reject) => {
    const instance = (autocannon as unknown as (opts: Record<string, unknown>, cb: (err: Error | null, r: AcResult) => void) => NodeJS.EventEmitter)(
      {
        url: o.url,
        connections: Math.min(o.connections, o.amount),
        amount: o.amount,
        pipelining: 1,
        timeout: 60,
        requests: [{ setupRequest: (req: AcRequest) => o.setup(req) }],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client: unknown, status: number) => {
      if (status !== o.okStatus) return;
      ok++;
      lastOkAt = performance.now();
    });
  });
  const endedAt = performance.now();
  return {
    ...resultOf(r, (endedAt - startedAt) / 1000),
    ok,
    startedAt,
    lastOkAt,
    endedAt,
  };
}

// What the CRM console pages share beyond the SDK's page helpers: money,
// decimal strings summed exactly in cents, shown per currency.

const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,2}))?$/;

/** "1234.5" → 123450n; anything else (null, more places) → 0n */
export function cents(value: unknown): bigint {
  const m = typeof value === 'string' ? DECIMAL.exec(value) : null;
  if (!m) return 0n;
  const n = BigInt(m[2]) * 100n + BigInt((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -n : n;
}

/** Sums by currency (EUR → cents). */
export type Money = Map<string, bigint>;

export function addTo(sums: Money, currency: string, amount: bigint): void {
  sums.set(currency, (sums.get(currency) ?? 0n) + amount);
}

/** 123450n, "EUR" → "€1,234.50" (an unknown code: "1,234.50 XYZ") */
function formatMoney(amount: bigint, currency: string): string {
  const value = Number(amount) / 100;
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(value);
  } catch {
    return `${value.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`;
  }
}

/** Every currency's sum, largest first: "€18,650.00 · £9,200.00"; `none` (the page's "None") without any. */
export function formatSums(sums: Money, none: string): string {
  const parts = [...sums].filter(([, v]) => v !== 0n).sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0));
  return parts.length ? parts.map(([c, v]) => formatMoney(v, c)).join(' · ') : none;
}

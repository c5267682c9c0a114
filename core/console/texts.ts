// Filling a text's placeholders: "{count} tasks" with { count: 3 } is "3 tasks".
// A placeholder without a value stays as written, so a missing value shows.

export function fillIn(text: string, values: Record<string, unknown> = {}): string {
  return text.replace(/\{([A-Za-z][A-Za-z0-9]*)\}/g, (whole, name: string) => (values[name] === undefined || values[name] === null ? whole : String(values[name])));
}

// One table per section: padded Markdown in Biome's own layout, so the printed text pastes into docs unchanged.

export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Printed under the table: what the figures mean, what was left out and why. */
  readonly notes?: readonly string[];
}

export function renderTable(table: Table): string {
  const widths = table.columns.map((column, i) =>
    Math.max(column.length, 3, ...table.rows.map((row) => (row[i] ?? '').length)),
  );
  // Text left-aligned, figures right-aligned: a column is numeric when every cell starts like a number.
  const numeric = table.columns.map((_, i) =>
    table.rows.every((row) => /^[-+]?[\d.~]|^n\/a$|^-$/.test(row[i] ?? '')),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (numeric[i] ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number))).join(' | ')} |`;
  const rule = line(widths.map((w, i) => (numeric[i] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))));
  const notes = table.notes === undefined ? [] : ['', ...table.notes];
  return [`### ${table.title}`, '', line(table.columns), rule, ...table.rows.map(line), ...notes, ''].join(
    '\n',
  );
}

/** 1234567 -> "1,234,567". */
export function count(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

/** A figure with `digits` decimals, or n/a. */
export function fixed(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits);
}

/** A ratio as "1.23x". */
export function ratio(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? 'n/a' : `${n.toFixed(2)}x`;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

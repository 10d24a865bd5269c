/** Markdown tables that also read well in a terminal (columns padded to equal width). */

export type Align = 'left' | 'right';

export interface Column {
  header: string;
  align?: Align;
}

export function markdownTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) => Math.max(3, column.header.length, ...rows.map((row) => (row[index] ?? '').length)));
  const pad = (text: string, index: number): string => {
    const width = widths[index]!;
    return columns[index]?.align === 'right' ? text.padStart(width) : text.padEnd(width);
  };
  const line = (cells: readonly string[]): string => `| ${columns.map((_, index) => pad(cells[index] ?? '', index)).join(' | ')} |`;
  const rule = `|${columns.map((column, index) => (column.align === 'right' ? `${'-'.repeat(widths[index]! + 1)}:` : '-'.repeat(widths[index]! + 2))).join('|')}|`;
  return [line(columns.map((column) => column.header)), rule, ...rows.map(line)].join('\n');
}

/** 1234567 → "1,234,567". */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Milliseconds with precision that suits their size. */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 0.1) return ms.toFixed(4);
  if (ms < 10) return ms.toFixed(2);
  return ms.toFixed(1);
}

export function formatPercent(value: number | undefined): string {
  return value === undefined || Number.isNaN(value) ? '—' : `${Math.round(value)} %`;
}

/** A ratio as "3.1× name"; "—" when either side is missing. */
export function formatRatio(value: number, reference: number | undefined, name: string): string {
  if (reference === undefined || !(reference > 0)) return '—';
  return `${(value / reference).toFixed(2)}× ${name}`;
}

/** Bytes as "624 B" or "1.2 KB" (1 KB = 1024 B). */
export function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(2)} KB`;
}

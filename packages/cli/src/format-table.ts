/** A table cell: plain text, or a value with a note printed at the end of the line (last column only). */
export type Cell = string | { readonly value: string; readonly note: string };

/**
 * Lays out rows under their headers with every column right-aligned (the columns are numbers) and
 * two spaces between columns. A note goes after the last column, outside the alignment, so
 * `190s (~3.2 min)` keeps `190s` lined up with `2s` above it. No line ends in spaces.
 *
 * @example
 * ```ts
 * formatTable(['Retry', 'Backoff'], [['1', '2s'], ['2', { value: '64s', note: '(~1.1 min)' }]]);
 * // 'Retry  Backoff\n    1       2s\n    2      64s (~1.1 min)'
 * ```
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const value = (cell: Cell | undefined): string =>
    cell === undefined ? '' : typeof cell === 'string' ? cell : cell.value;
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => value(row[column]).length)),
  );
  const line = (cells: readonly Cell[]): string => {
    const text = widths.map((width, column) => value(cells[column]).padStart(width)).join('  ');
    const notes = cells
      .map((cell) => (typeof cell === 'string' ? '' : cell.note))
      .filter((note) => note !== '');
    return [text, ...notes].join(' ').trimEnd();
  };
  return [line(headers), ...rows.map(line)].join('\n');
}

import { describe, expect, it } from 'vitest';
import { formatTable } from './format-table';

describe('formatTable', () => {
  it('right-aligns every column under its header, two spaces apart', () => {
    expect(
      formatTable(
        ['Retry', 'Backoff'],
        [
          ['1', '2s'],
          ['10', '64.785s'],
        ],
      ),
    ).toBe(['Retry  Backoff', '    1       2s', '   10  64.785s'].join('\n'));
  });

  it('widens a column to its longest value', () => {
    expect(formatTable(['N'], [['1'], ['1000']])).toBe(['   N', '   1', '1000'].join('\n'));
  });

  it('prints a note after the aligned column and no trailing spaces without one', () => {
    const table = formatTable(
      ['Retry', 'Cumulative'],
      [
        ['1', { value: '2s', note: '' }],
        ['7', { value: '190s', note: '(~3.2 min)' }],
      ],
    );
    expect(table).toBe(['Retry  Cumulative', '    1          2s', '    7        190s (~3.2 min)'].join('\n'));
  });
});

// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { manyRequests, scenario } from '../model/fixtures';
import { App } from './app';
import { staticSource } from './sources';

afterEach(() => {
  cleanup();
  localStorage.clear();
});

const grid = () => screen.getByRole('grid', { name: 'Requests' });
const press = (key: string, target: Element = document.activeElement ?? grid()) =>
  fireEvent.keyDown(target, { key });
const focusedId = () => (document.activeElement as HTMLElement | null)?.dataset.requestId;
const selectedIds = () =>
  [...document.querySelectorAll('[role="row"][aria-selected="true"]')].map(
    (row) => (row as HTMLElement).dataset.requestId,
  );

describe('the request list from the keyboard', () => {
  it('is a grid: a header row of column headers, rows with their place in the whole list', () => {
    render(<App source={staticSource(manyRequests(500))} now={() => 0} />);
    expect(grid().getAttribute('aria-rowcount')).toBe('501');
    const headers = screen.getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toContain('Status');
    expect(headers).toContain('Outcome');
    const rows = screen.getAllByTestId('request-row');
    expect(rows[0]?.getAttribute('role')).toBe('row');
    expect(rows[0]?.getAttribute('aria-rowindex')).toBe('2');
    expect(rows[0]?.querySelectorAll('[role="gridcell"]').length).toBeGreaterThanOrEqual(8);
    // One tab stop: the first row, until a row is selected.
    expect(rows.filter((row) => row.tabIndex === 0)).toHaveLength(1);
  });

  it('walks the rows with the arrows, Home, End and Page Down, the focus on the selected row', () => {
    render(<App source={staticSource(manyRequests(500))} now={() => 0} />);
    (screen.getAllByTestId('request-row')[0] as HTMLElement).focus();
    press('ArrowDown');
    expect(selectedIds()).toEqual(['req-0']);
    press('ArrowDown');
    expect(selectedIds()).toEqual(['req-1']);
    expect(focusedId()).toBe('req-1');
    press('ArrowUp');
    expect(focusedId()).toBe('req-0');
    press('End');
    // The last row is drawn (the list scrolled to it) and has the focus.
    expect(focusedId()).toBe('req-499');
    expect(document.querySelector('[data-request-id="req-499"]')?.getAttribute('aria-rowindex')).toBe('501');
    press('Home');
    expect(focusedId()).toBe('req-0');
    press('PageDown');
    const paged = Number(focusedId()?.slice(4));
    expect(paged).toBeGreaterThan(10);
    press('PageUp');
    expect(focusedId()).toBe('req-0');
    // No detail pane until Enter.
    expect(screen.queryByTestId('detail')).toBeNull();
  });

  it('opens the details with Enter and closes them with Escape, the focus staying on the row', () => {
    render(<App source={staticSource(scenario())} now={() => 0} />);
    (screen.getAllByTestId('request-row')[0] as HTMLElement).focus();
    press('ArrowDown');
    press('ArrowDown');
    expect(focusedId()).toBe('r2');
    press('Enter');
    expect(screen.getByTestId('detail').textContent).toContain('/pay');
    expect(focusedId()).toBe('r2');
    // The details follow the selection while open.
    press('ArrowDown');
    expect(screen.getByTestId('detail').textContent).toContain('missing.js');
    press('Escape');
    expect(screen.queryByTestId('detail')).toBeNull();
    expect(focusedId()).toBe('r3');
    // Escape from inside the pane hands the focus back to the row too.
    press('Enter');
    const close = screen.getByLabelText('Close details');
    close.focus();
    press('Escape', close);
    expect(screen.queryByTestId('detail')).toBeNull();
    expect(focusedId()).toBe('r3');
  });

  it('focuses the filter with / and Ctrl+F, but types / in a text field', () => {
    render(<App source={staticSource(scenario())} now={() => 0} />);
    const filter = screen.getByTestId('filter') as HTMLInputElement;
    const row = screen.getAllByTestId('request-row')[0] as HTMLElement;
    row.focus();
    fireEvent.keyDown(row, { key: '/' });
    expect(document.activeElement).toBe(filter);
    row.focus();
    fireEvent.keyDown(row, { key: 'f', ctrlKey: true });
    expect(document.activeElement).toBe(filter);
    const typed = fireEvent.keyDown(filter, { key: '/' });
    expect(typed).toBe(true); // not prevented
    expect(filter.title).toMatch(/\/ or Ctrl\+F/);
  });

  it('sorts by a header (aria-sort), remembers it, and closes the details of a row the filter hides', () => {
    const first = render(<App source={staticSource(scenario())} now={() => 0} />);
    fireEvent.click(screen.getByTestId('sort-attempts'));
    fireEvent.click(screen.getByTestId('sort-attempts'));
    const header = screen.getByTestId('sort-attempts').closest('[role="columnheader"]');
    expect(header?.getAttribute('aria-sort')).toBe('descending');
    expect(screen.getAllByTestId('request-row').map((r) => r.dataset.requestId)[0]).toBe('r1');
    first.unmount();
    render(<App source={staticSource(scenario())} now={() => 0} />);
    expect(
      screen.getByTestId('sort-attempts').closest('[role="columnheader"]')?.getAttribute('aria-sort'),
    ).toBe('descending');
    fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
    expect(screen.getByTestId('detail')).toBeDefined();
    fireEvent.click(screen.getByTestId('chip-refused'));
    expect((screen.getByTestId('filter') as HTMLInputElement).value).toBe('is:refused');
    expect(screen.getByTestId('chip-refused').getAttribute('aria-pressed')).toBe('true');
    expect(screen.getAllByTestId('request-row').map((r) => r.dataset.requestId)).toEqual(['r2']);
    expect(screen.queryByTestId('detail')).toBeNull();
  });
});

// @vitest-environment happy-dom
import { cleanup, render, screen } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { injectedScenario } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import { listItems, RequestList } from './request-list';

afterEach(cleanup);

describe('a request row', () => {
  it('marks the attempts of a request the panel’s fault injection answered, in signs and in words', () => {
    const { rows, navigations } = foldTimeline(injectedScenario());
    render(
      <RequestList
        items={listItems(rows, navigations)}
        selectedKey={undefined}
        onSelect={() => {}}
        onOpen={() => {}}
        onClose={() => {}}
        axis={{ start: 5000, end: 5420 }}
        now={0}
      />,
    );
    const [f1, f2] = screen.getAllByTestId('request-row').map((row) => row.querySelector('.rl-c-attempts'));
    expect(f1?.textContent).toBe('3⚡');
    expect(f1?.getAttribute('aria-label')).toBe('3 attempts, 2 injected by the Retryline panel');
    expect(f1?.getAttribute('title')).toBe('3 attempts, 2 injected by the Retryline panel');
    expect(f1?.classList.contains('rl-cell--injected')).toBe(true);
    expect(f1?.querySelector('.rl-injected-sign')?.getAttribute('aria-hidden')).toBe('true');
    expect(f2?.textContent).toBe('1');
    expect(f2?.hasAttribute('aria-label')).toBe(false);
    expect(f2?.classList.contains('rl-cell--injected')).toBe(false);
  });
});

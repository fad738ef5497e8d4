import { failover } from '@retryline/core/failover';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, endpointOf } from '../failover/clients';
import { useFaultServer } from '../support/use-fault-server';
import { installFakeHook, removeHookAfterEach } from './fake-hook';

// A fault the panel injects that only delays an attempt (the Faults tab's `slow 3s`) then sends it
// as the request would have: through its failover plan, to the endpoint the plan picked (which its
// attempt-start event names) and hedged as it would be. The request here is relative, as an app
// with `endpoints` sends it: sent past the plan, it would reach nobody (or, in a page, the page's
// own origin).
const c = useFaultServer();
removeHookAfterEach();

describe.each(ADAPTERS.filter((adapter) => adapter.name !== 'ky'))('$name with endpoints', (adapter) => {
  it('reaches the picked endpoint without a fault (control)', async () => {
    c.script('/items/1', [{ status: 200, body: 'C' }]);
    const client = adapter.create(undefined, { retries: 0, endpoints: failover([c.url]) });
    await expect(client.send('GET', '/items/1')).resolves.toMatchObject({ status: 200, body: 'C' });
  });

  it('reaches the picked endpoint when the panel only delays the attempt (slow, then the server)', async () => {
    c.script('/items/1', [{ status: 200, body: 'C' }]);
    installFakeHook([{ step: 'slow', ms: 5 }]);
    const client = adapter.create(undefined, { retries: 0, endpoints: failover([c.url]) });
    const result = await client.send('GET', '/items/1').catch((error: unknown) => error);
    const starts = client.events.filter((event) => event.type === 'attempt-start').map(endpointOf);
    // The event says the attempt went to C ...
    expect(starts).toEqual([c.url]);
    // ... so it should have: C answers 200 once.
    expect(c.requests('/items/1')).toHaveLength(1);
    expect(result).toMatchObject({ status: 200, body: 'C' });
  });
});

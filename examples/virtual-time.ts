import { RETRY, retry, seededRandom, virtualClock } from '@retryline/core';

// Time and randomness are injected: a test plays a whole retry sequence in virtual time.
const clock = virtualClock();
const result = retry(({ attempt }) => (attempt < 3 ? RETRY : 'done'), { clock, random: seededRandom(42) });
await clock.runAll(); // fires each wait in order, no real sleeping
console.log(await result, 'after', clock.now(), 'virtual ms');

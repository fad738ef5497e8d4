import { writeFileSync } from 'node:fs';
import { recordEvents } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';

const api = retryFetch({ retries: 2 });

const recorder = recordEvents({ source: 'checkout test' });
await api('https://api.example/orders');
writeFileSync('recording.json', JSON.stringify(recorder.stop()));

import { presets } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { drivers, sendFetch, sendThrough, statusOf } from './harness';

// presets.aws(): the SDKs' standard retry mode
// (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html,
// https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html), played by a loopback
// server answering as an awsJson service does: a POST answered with the error code in X-Amzn-ErrorType.
const server = useFaultServer();
const url = (path: string) => `${server.url}${path}`;
const call = {
  method: 'POST',
  body: '{"TableName":"t"}',
  headers: { 'x-amz-target': 'DynamoDB_20120810.GetItem' },
};
const ok = { status: 200, body: '{}' };
const error = (status: number, code: string) => ({
  status,
  headers: { 'x-amzn-errortype': code, 'content-type': 'application/x-amz-json-1.0' },
  body: JSON.stringify({ __type: code, message: 'nope' }),
});

const THROTTLING = [
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'TransactionInProgressException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'RequestThrottled',
  'SlowDown',
  'PriorRequestNotComplete',
  'EC2ThrottledException',
];

describe('presets.aws()', () => {
  it.each(THROTTLING)('retries the throttling error %s, a POST like every JSON call', async (code) => {
    server.script('/', [error(400, code), ok]);
    const sent = await sendFetch(presets.aws(), url('/'), call);
    expect(sent.status).toBe(200);
    expect(server.requests('/').map((request) => request.method)).toEqual(['POST', 'POST']);
  });

  it.each(['RequestTimeout', 'RequestTimeoutException'])('retries the transient error %s', async (code) => {
    server.script('/', [error(400, code), ok]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(200);
    expect(server.requests('/')).toHaveLength(2);
  });

  it.each([
    [
      'a URL after a colon',
      'ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/',
    ],
    ['a namespace before a #', 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException'],
    ['both', 'aws.protocoltests#ThrottlingException:http://internal.amazon.com/'],
  ])('reads the error code in X-Amzn-ErrorType with %s, as Smithy sanitizes it', async (_name, header) => {
    server.script('/', [error(400, header), ok]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(200);
    expect(server.requests('/')).toHaveLength(2);
  });

  it.each([500, 502, 503, 504])('retries the transient status %i whatever its code', async (status) => {
    server.script('/', [error(status, 'InternalServerError'), ok]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(200);
    expect(server.requests('/')).toHaveLength(2);
  });

  it('retries a 429 as throttling, even with no error code', async () => {
    server.script('/', [{ status: 429 }, ok]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(200);
    expect(server.requests('/')).toHaveLength(2);
  });

  it.each([
    [400, 'ValidationException'],
    [400, 'ConditionalCheckFailedException'],
    [403, 'AccessDeniedException'],
    [404, 'ResourceNotFoundException'],
    [501, 'NotImplemented'],
  ])('does not retry a %i %s', async (status, code) => {
    server.script('/', [error(status, code), ok]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(status);
    expect(server.requests('/')).toHaveLength(1);
  });

  it('does not read the body: a throttling code only in `__type` (no X-Amzn-ErrorType) is judged by its 400', async () => {
    server.script('/', [
      {
        status: 400,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: '{"__type":"ThrottlingException"}',
      },
      ok,
    ]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(400);
    expect(server.requests('/')).toHaveLength(1);
  });

  it('retries a POST whose connection was reset: the SDKs retry connection errors for every operation', async () => {
    server.script('/', [{ fault: 'reset-before-headers' }, ok]);
    expect((await sendFetch(presets.aws(), url('/'), call)).status).toBe(200);
    expect(server.requests('/')).toHaveLength(2);
  });

  it('makes at most 3 attempts', async () => {
    server.script('/', [error(400, 'ThrottlingException')]);
    const sent = await sendFetch(presets.aws(), url('/'), call);
    expect(sent.status).toBe(400);
    expect(server.requests('/')).toHaveLength(3);
  });

  it('backs off rand(0, 1) × min(2^i, 20) seconds: up to 1 s, 2 s, 4 s … and never above 20 s', async () => {
    server.script('/', [error(503, 'ServiceUnavailable')]);
    const sent = await sendFetch({ ...presets.aws(), retries: 6 }, url('/'), call);
    expect(sent.waits.map((wait) => wait.capped)).toEqual([1000, 2000, 4000, 8000, 16000, 20000]);
    // Full jitter, one draw per retry.
    sent.waits.forEach((wait, i) => {
      expect(wait.delay).toBe((sent.draws[i] as number) * wait.capped);
    });
  });

  it('keeps retries within the retry quota: 100 at once, then one per five requests', async () => {
    // One preset value, so one quota, for every request below: all made in the same minute.
    const aws = presets.aws();
    const outcomes: string[] = [];
    for (let i = 1; i <= 126; i++) {
      server.script('/', [error(503, 'ServiceUnavailable'), ok]);
      const sent = await sendFetch(aws, url('/'), call);
      outcomes.push(sent.status === 200 ? 'retried' : (sent.info?.stoppedBy ?? 'other'));
    }
    // Retries stay within 0.2 × requests + 100: the 125th request's retry is the last one allowed.
    expect(outcomes.slice(0, 125).every((outcome) => outcome === 'retried')).toBe(true);
    expect(outcomes[125]).toBe('budget');
  });

  it.each(drivers.map((driver) => [driver.name, driver] as const))(
    'through %s: a ThrottlingException is retried after a full-jitter wait under 1 s',
    async (_name, driver) => {
      server.script('/', [error(400, 'ThrottlingException'), ok]);
      const sent = await sendThrough(driver, presets.aws(), { method: 'POST', url: url('/'), body: '{}' });
      expect(statusOf(sent)).toBe(200);
      expect(server.requests('/')).toHaveLength(2);
      expect(sent.waits.map((wait) => wait.delay)).toEqual([(sent.draws[0] as number) * 1000]);
    },
  );
});

import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll } from 'vitest';

/**
 * An OpenTelemetry SDK for one test file, as an app sets it up: spans kept in memory, a real
 * AsyncLocalStorage context manager and the W3C propagator, registered for the file's tests and
 * removed after them.
 */
export function useTracing() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });
  return { exporter, tracerProvider };
}

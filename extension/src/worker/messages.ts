/**
 * The worker's checks of what reaches it: a relay's batch, a panel's request, a sender's origin.
 * Messages come from content scripts of arbitrary pages and are treated as untrusted.
 */

import { MAX_BATCH, NAMESPACE, type PanelRequest, PROTOCOL_VERSION } from '../shared/protocol';
import { parseSettings } from './persistence';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTabId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A panel's message, checked: `undefined` for anything that is not a {@link PanelRequest}. */
export function parsePanelRequest(value: unknown): PanelRequest | undefined {
  if (!isRecord(value) || !isTabId(value.tabId)) return undefined;
  const tabId = value.tabId;
  switch (value.kind) {
    case 'subscribe':
    case 'clear':
      return { kind: value.kind, tabId };
    case 'settings': {
      const settings = parseSettings(value.settings, true);
      return settings ? { kind: 'settings', tabId, settings } : undefined;
    }
    default:
      return undefined;
  }
}

/** Whether a runtime message is a relay's batch (its events are still unchecked). */
export function isRelayMessage(value: unknown): value is { events: readonly unknown[] } {
  return (
    isRecord(value) &&
    value.ns === NAMESPACE &&
    value.v === PROTOCOL_VERSION &&
    value.kind === 'events' &&
    Array.isArray(value.events) &&
    value.events.length <= MAX_BATCH
  );
}

/** The origin a sender's URL belongs to (`"null"` for opaque ones and for no URL). */
export function originOf(url: string | undefined): string {
  if (url === undefined) return 'null';
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

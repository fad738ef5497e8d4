/**
 * The Faults tab: rules that make the inspected tab's Retryline requests fail on purpose (a 503,
 * a network error, a slow answer), to watch the retries they cause, and the rules as an msw test
 * to keep, with what of each rule msw cannot reproduce said at the rule. The rules shown are the
 * worker's (every panel of the tab shows the same); each change sends the whole new set, checked
 * first as the worker checks it.
 */

import type { RefObject } from 'preact';
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import type { RequestRow } from '../model/timeline';
import type { FaultRule, FaultRuleSet } from '../shared/faults';
import { mswExport, type SnippetWarning } from '../shared/msw-snippet';
import {
  type DraftErrors,
  type DraftReading,
  describeRule,
  draftOf,
  EMPTY_DRAFT,
  matchCount,
  nextRuleId,
  percentText,
  RULE_METHODS,
  type RuleDraft,
  readDraft,
  stepsText,
} from './fault-draft';
import { tabPanelProps } from './panel-tabs';
import type { FaultsBinding } from './sources';
import type { FaultsState } from './use-faults';

/** The name an exported msw test is saved under. */
export const MSW_TEST_FILE = 'retryline-faults.test.ts';

const NO_ROWS: readonly RequestRow[] = [];

/** A rule being added has its id given when it joins the set. */
const NEW_RULE = { id: 'new' };

const STEPS_HELP =
  'One step per attempt, the last repeats: 503 · 429 retry-after=2 · networkError · slow 3s 503 · ' +
  'a 2xx lets the server answer.';

const enabledCount = (set: FaultRuleSet) => set.rules.filter((rule) => rule.enabled !== false).length;

/** How `mswExport` starts the warning of a rule whose pattern no request has as it starts. */
const NEVER_APPLIES = 'never applies in the page: ';

/** Each rule's warnings from `mswExport`, by rule id. */
function warningsByRule(warnings: readonly SnippetWarning[]): ReadonlyMap<string, readonly string[]> {
  const byRule = new Map<string, string[]>();
  for (const { rule, message } of warnings) byRule.set(rule, [...(byRule.get(rule) ?? []), message]);
  return byRule;
}

/**
 * Says that rules are on, wherever the panel is: which tab, or an imported file. Its Show rules
 * goes as the Faults tab shows, which then takes the focus it had.
 */
export function FaultsBanner(props: { readonly set: FaultRuleSet; readonly onShow?: () => void }) {
  const active = enabledCount(props.set);
  if (active === 0) return null;
  const text = `${active} fault rule${active === 1 ? '' : 's'} active: matching requests get injected failures — shown as injected. Rules are removed when DevTools closes.`;
  return (
    <div class="rl-banner rl-banner--warn rl-faults-banner" role="status" data-testid="faults-banner">
      <span class="rl-faults-banner__text" title={text}>
        {text}
      </span>
      {props.onShow && (
        <button type="button" class="rl-link" onClick={props.onShow}>
          Show rules
        </button>
      )}
    </div>
  );
}

/**
 * Says when the tab's rules are held back: they were set for a top origin the page has since left
 * (they apply again when it comes back, or once changed on the page's new origin), or the worker
 * has not yet heard which page the tab shows.
 */
export function PausedNote(props: { readonly set: FaultRuleSet; readonly binding: FaultsBinding }) {
  const { origin, applied } = props.binding;
  if (applied || props.set.rules.length === 0) return null;
  const text =
    origin === undefined
      ? 'Paused: waiting for the page to load (reload it to apply the rules).'
      : `Paused: these rules were set for ${origin}, and the page is now on another origin. They apply again when it comes back; a change applies them to the page’s current origin.`;
  return (
    <p class="rl-faults__paused" role="status" data-testid="faults-paused">
      {text}
    </p>
  );
}

export interface FaultsTabProps {
  readonly faults: FaultsState;
  /** The list's rows, which a pattern being typed is tried on. */
  readonly rows: readonly RequestRow[];
  readonly save: (name: string, text: string, type: string) => void;
  readonly copy: (text: string) => Promise<void>;
  /** Another tab is shown: the tab keeps what is being typed. */
  readonly hidden: boolean;
}

export function FaultsTab({ faults, rows, save, copy, hidden }: FaultsTabProps) {
  const { rules } = faults.set;
  // Patterns are tried on the list only while the tab is in view: a live list changes often.
  const tried = hidden ? NO_ROWS : rows;
  const [said, setSaid] = useState('');
  const section = useRef<HTMLElement>(null);
  const focusAfterRemoving = useFocusAfterRemoving(rules, section);
  useFocusWhenShown(hidden, section);
  // One export for the set: the file Export saves and Copy copies, and what each rule's notes say.
  const msw = useMemo(() => mswExport(faults.set), [faults.set]);
  const warnings = useMemo(() => warningsByRule(msw.warnings), [msw]);
  // A change from the list's buttons; the forms show their own problems beside their fields.
  const change = (update: RuleSetChange) => {
    const error = faults.change(update);
    setSaid(error === undefined ? '' : `Not applied: ${error}`);
    return error;
  };
  const remove = (rule: FaultRule) => {
    const error = change((current) => current.filter((each) => each.id !== rule.id));
    if (error === undefined) focusAfterRemoving([rule.id]);
  };
  const removeAll = () => {
    if (change(() => []) === undefined) focusAfterRemoving(rules.map((rule) => rule.id));
  };

  return (
    <section
      class="rl-faults"
      ref={section}
      {...tabPanelProps('faults')}
      hidden={hidden}
      data-testid="faults-tab"
    >
      <RuleForm
        label="Add a fault rule"
        submitLabel="Add"
        initial={EMPTY_DRAFT}
        base={NEW_RULE}
        rows={tried}
        onSubmit={(rule) => faults.change((current) => [...current, { ...rule, id: nextRuleId(current) }])}
      />
      <h2 class="rl-faults__title" id="rl-fault-rules-title">
        Rules{' '}
        <span class="rl-faults__hint">(the first enabled match applies to all of a request’s attempts)</span>
      </h2>
      <PausedNote set={faults.set} binding={faults.binding} />
      <RuleList faults={faults} rows={tried} warnings={warnings} change={change} onRemove={remove} />
      <FaultsActions
        set={faults.set}
        mswTest={msw.source}
        save={save}
        copy={copy}
        said={said}
        onSaid={setSaid}
        onRemoveAll={removeAll}
      />
      <p class="rl-faults__notes" data-testid="faults-notes">
        Only requests sent through Retryline’s adapters (fetch, axios, ky) in this tab are faulted; others are
        untouched. A page opts out with <code>{'<meta name="retryline-faults" content="off">'}</code>.
        Production builds leave fault injection out. The rules last while DevTools is open on this tab.
      </p>
    </section>
  );
}

type RuleSetChange = (rules: readonly FaultRule[]) => readonly FaultRule[];

/** Whether the focus is where no key reaches it: on nothing, on an element gone, or on a disabled button. */
function focusLost(document: Document): boolean {
  const focused = document.activeElement as (HTMLElement & { disabled?: boolean }) | null;
  return !focused || focused === document.body || !focused.isConnected || focused.disabled === true;
}

/**
 * Keeps the focus in the panel when the tab is shown by a control that then goes (the banner's
 * Show rules is not there while the tab is): the focus moves to the Faults tab in the tab strip, as
 * if the tab had been chosen there.
 */
function useFocusWhenShown(hidden: boolean, root: RefObject<HTMLElement | null>) {
  useEffect(() => {
    const element = root.current;
    if (hidden || !element || !focusLost(element.ownerDocument)) return;
    const tab = element.getAttribute('aria-labelledby');
    if (tab) element.ownerDocument.getElementById(tab)?.focus();
  }, [hidden]);
}

/**
 * Keeps the focus in the tab when rules are removed. A rule goes once the worker's set no longer
 * has it, and its Remove button with it: the focus then moves to the Remove button now in its
 * place (the next rule's), else to the last rule's (the previous one), else, the list being empty,
 * to the Add form's first field. Returns what to call once the removal of `ids` has been sent.
 */
function useFocusAfterRemoving(rules: readonly FaultRule[], root: RefObject<HTMLElement | null>) {
  const removing = useRef<{ readonly ids: readonly string[]; readonly at: number } | undefined>(undefined);
  useEffect(() => {
    const pending = removing.current;
    const element = root.current;
    if (!pending || !element || rules.some((rule) => pending.ids.includes(rule.id))) return;
    removing.current = undefined;
    // Focus the user has moved elsewhere since stays where it is.
    if (!focusLost(element.ownerDocument)) return;
    const items = element.querySelectorAll<HTMLElement>('[data-testid="fault-rules"] > li');
    const item = items[Math.min(pending.at, items.length - 1)];
    const target = item
      ? (item.querySelector<HTMLElement>('[data-testid="fault-remove"]') ?? firstField(item))
      : firstField(element.querySelector('[data-testid="fault-form"]'));
    target?.focus();
  }, [rules]);
  return (ids: readonly string[]) => {
    const at = rules.findIndex((rule) => ids.includes(rule.id));
    removing.current = { ids, at: Math.max(at, 0) };
  };
}

const firstField = (container: Element | null) =>
  container?.querySelector<HTMLElement>('select, input, textarea, button') ?? undefined;

interface RuleListProps {
  readonly faults: FaultsState;
  /** The rows a pattern being edited is tried on. */
  readonly rows: readonly RequestRow[];
  /** What the msw test cannot reproduce of each rule, by rule id. */
  readonly warnings: ReadonlyMap<string, readonly string[]>;
  /** Sends a change from the list's buttons: the set's problem, or `undefined` once sent. */
  readonly change: (update: RuleSetChange) => string | undefined;
  readonly onRemove: (rule: FaultRule) => void;
}

/** The tab's rules, in the order they are tried, each shown or being edited in place. */
function RuleList({ faults, rows, warnings, change, onRemove }: RuleListProps) {
  const { rules } = faults.set;
  const [editing, setEditing] = useState<string | undefined>(undefined);
  // The rule whose Edit button gets the focus back when its form closes.
  const [returnTo, setReturnTo] = useState<string | undefined>(undefined);
  // Another panel of the tab took the rule being edited away: so goes its form.
  useEffect(() => {
    if (editing !== undefined && !rules.some((rule) => rule.id === editing)) setEditing(undefined);
  }, [rules, editing]);
  const closeEdit = (id: string) => {
    setEditing(undefined);
    setReturnTo(id);
  };

  if (rules.length === 0) {
    return (
      <p class="rl-faults__none" data-testid="no-fault-rules">
        No rules: requests go to the server as usual.
      </p>
    );
  }
  return (
    <ol class="rl-fault-rules" aria-labelledby="rl-fault-rules-title" data-testid="fault-rules">
      {rules.map((rule) =>
        editing === rule.id ? (
          <li key={rule.id} class="rl-fault-rule rl-fault-rule--editing">
            <RuleForm
              label={`Edit ${describeRule(rule)}`}
              submitLabel="Save"
              initial={draftOf(rule)}
              base={rule}
              rows={rows}
              onSubmit={(edited) => {
                const error = faults.change((current) =>
                  current.map((each) => (each.id === rule.id ? edited : each)),
                );
                if (error === undefined) closeEdit(rule.id);
                return error;
              }}
              onCancel={() => closeEdit(rule.id)}
            />
          </li>
        ) : (
          <RuleItem
            key={rule.id}
            rule={rule}
            warnings={warnings.get(rule.id) ?? NO_WARNINGS}
            focusEdit={returnTo === rule.id}
            onToggle={() =>
              change((current) => current.map((each) => (each.id === rule.id ? toggled(each) : each)))
            }
            onEdit={() => {
              setReturnTo(undefined);
              setEditing(rule.id);
            }}
            onRemove={() => onRemove(rule)}
          />
        ),
      )}
    </ol>
  );
}

interface FaultsActionsProps {
  readonly set: FaultRuleSet;
  /** The set as an msw test: what Export saves and Copy copies (the panel's API hands out the same). */
  readonly mswTest: string;
  readonly save: (name: string, text: string, type: string) => void;
  readonly copy: (text: string) => Promise<void>;
  /** What the tab last said of a change, an export or a copy. */
  readonly said: string;
  readonly onSaid: (said: string) => void;
  readonly onRemoveAll: () => void;
}

/** The rules as an msw test (saved or copied), and Remove all. */
function FaultsActions({ set, mswTest, save, copy, said, onSaid, onRemoveAll }: FaultsActionsProps) {
  const enabled = enabledCount(set);
  return (
    <div class="rl-faults__actions">
      <button
        type="button"
        class="rl-button"
        data-testid="export-msw"
        disabled={enabled === 0}
        title="Save the enabled rules as a vitest file using @retryline/msw"
        onClick={() => {
          save(MSW_TEST_FILE, mswTest, 'text/typescript');
          onSaid(`Saved ${MSW_TEST_FILE}.`);
        }}
      >
        Export as msw test
      </button>
      <button
        type="button"
        class="rl-button"
        data-testid="copy-msw"
        disabled={enabled === 0}
        onClick={() =>
          copy(mswTest).then(
            () => onSaid('Copied the msw test.'),
            (error: Error) => onSaid(`Could not copy: ${error.message}`),
          )
        }
      >
        Copy msw test
      </button>
      <button
        type="button"
        class="rl-button"
        data-testid="remove-all-faults"
        disabled={set.rules.length === 0}
        onClick={onRemoveAll}
      >
        Remove all
      </button>
      <span class="rl-faults__said" role="status" data-testid="faults-said">
        {said}
      </span>
    </div>
  );
}

const toggled = (rule: FaultRule): FaultRule => {
  if (rule.enabled !== false) return { ...rule, enabled: false };
  const { enabled: _enabled, ...on } = rule;
  return on;
};

const NO_WARNINGS: readonly string[] = [];

interface RuleItemProps {
  readonly rule: FaultRule;
  /** What the msw test cannot reproduce of the rule (`mswExport`'s warnings for it). */
  readonly warnings: readonly string[];
  /** Its form just closed: the focus goes back to its Edit button. */
  readonly focusEdit: boolean;
  readonly onToggle: () => void;
  readonly onEdit: () => void;
  readonly onRemove: () => void;
}

function RuleItem({ rule, warnings, focusEdit, onToggle, onEdit, onRemove }: RuleItemProps) {
  const edit = useRef<HTMLButtonElement>(null);
  const id = useId();
  const notes = warningNotes(id, warnings);
  useEffect(() => {
    if (focusEdit) edit.current?.focus();
  }, [focusEdit]);
  const on = rule.enabled !== false;
  const name = describeRule(rule);
  return (
    <li
      class={`rl-fault-rule${on ? '' : ' rl-fault-rule--off'}`}
      data-testid="fault-rule"
      data-rule-id={rule.id}
    >
      <input
        type="checkbox"
        class="rl-fault-rule__toggle"
        checked={on}
        aria-label={`Apply ${name}`}
        aria-describedby={notes.length > 0 ? notes.map((note) => note.id).join(' ') : undefined}
        data-testid="fault-toggle"
        onChange={onToggle}
      />
      <span class="rl-fault-rule__method" data-testid="fault-method">
        {rule.method ?? 'Any'}
      </span>
      <code class="rl-fault-rule__url" data-testid="fault-pattern" title={rule.url}>
        {rule.url === '' ? '(every URL)' : rule.url}
      </code>
      <span class="rl-fault-rule__arrow" aria-hidden="true">
        →
      </span>
      <code class="rl-fault-rule__steps" data-testid="fault-steps">
        {stepsText(rule)}
      </code>
      <span class="rl-fault-rule__chance" data-testid="fault-probability" title="Share of matching requests">
        {percentText(rule)}
      </span>
      <span class="rl-fault-rule__buttons">
        <button
          type="button"
          class="rl-button"
          ref={edit}
          aria-label={`Edit ${name}`}
          data-testid="fault-edit"
          onClick={onEdit}
        >
          Edit
        </button>
        <button
          type="button"
          class="rl-button"
          aria-label={`Remove ${name}`}
          data-testid="fault-remove"
          onClick={onRemove}
        >
          Remove
        </button>
      </span>
      {notes.map((note) => (
        <span
          key={note.id}
          id={note.id}
          class={`rl-field__note${note.error ? ' rl-field__error' : ''}`}
          data-testid={note.error ? 'fault-never' : 'fault-warning'}
        >
          {note.text}
        </span>
      ))}
    </li>
  );
}

/**
 * A rule's `mswExport` warnings as notes under it, one of each kind, so a rule takes a line or two
 * more at 400 px: why it never applies in the page (an error: the file has no handler for it), and
 * what msw cannot reproduce exactly.
 */
function warningNotes(id: string, warnings: readonly string[]) {
  const never = warnings.filter((message) => message.startsWith(NEVER_APPLIES));
  const inexact = warnings.filter((message) => !message.startsWith(NEVER_APPLIES));
  const notes: { readonly id: string; readonly error: boolean; readonly text: string }[] = [];
  if (never.length > 0) {
    const why = never.map((message) => message.slice(NEVER_APPLIES.length)).join(' · ');
    notes.push({ id: `${id}-never`, error: true, text: `Never applies in the page: ${why}` });
  }
  if (inexact.length > 0) {
    const text = `msw cannot reproduce this exactly: ${inexact.join(' · ')}`;
    notes.push({ id: `${id}-msw`, error: false, text });
  }
  return notes;
}

interface RuleFormProps {
  /** The form's accessible name. */
  readonly label: string;
  readonly submitLabel: string;
  readonly initial: RuleDraft;
  /** The rule's id and on/off state (a new rule's id is given when it is added). */
  readonly base: Pick<FaultRule, 'id' | 'enabled'>;
  readonly rows: readonly RequestRow[];
  /** Sends the rule: the set's problem, or `undefined` once sent. */
  readonly onSubmit: (rule: FaultRule) => string | undefined;
  /** Editing: Cancel (and Escape) close the form without a change. */
  readonly onCancel?: () => void;
}

/** A rule's fields: adding one (the form then empties), or editing one in place. */
function RuleForm(props: RuleFormProps) {
  const [draft, setDraft] = useState<RuleDraft>(props.initial);
  const [setError, setSetError] = useState<string | undefined>(undefined);
  const id = useId();
  const reading: DraftReading = useMemo(() => readDraft(draft, props.base), [draft, props.base]);
  const matched = useMemo(
    () => matchCount(props.rows, draft.method, draft.url),
    [props.rows, draft.method, draft.url],
  );
  const url = useRef<HTMLInputElement>(null);
  const editing = props.onCancel !== undefined;
  useEffect(() => {
    if (editing) url.current?.focus();
  }, []);

  const update = (field: keyof RuleDraft) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement | HTMLSelectElement).value;
    setDraft((current) => ({ ...current, [field]: value }));
    setSetError(undefined);
  };
  const submit = (event: Event) => {
    event.preventDefault();
    if (!reading.rule) return;
    const error = props.onSubmit(reading.rule);
    setSetError(error);
    if (error === undefined && !editing) setDraft(EMPTY_DRAFT);
  };
  const { errors } = reading;
  return (
    <form
      class="rl-fault-form"
      aria-label={props.label}
      data-testid={editing ? 'fault-edit-form' : 'fault-form'}
      onSubmit={submit}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && props.onCancel) {
          event.preventDefault();
          props.onCancel();
        }
      }}
    >
      <DraftFields
        id={id}
        draft={draft}
        errors={errors}
        urlNote={errors.url ?? matchesText(matched, props.rows.length)}
        url={url}
        update={update}
      />
      <span class="rl-fault-form__buttons">
        <button type="submit" class="rl-button" disabled={!reading.rule} data-testid="fault-submit">
          {props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" class="rl-button" data-testid="fault-cancel" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </span>
      <span
        id={`${id}-steps`}
        class={`rl-field__note rl-field__note--steps${errors.steps ? ' rl-field__error' : ''}`}
        aria-live="polite"
        data-testid="fault-steps-note"
      >
        {errors.steps ?? STEPS_HELP}
      </span>
      {errors.percent && (
        <span id={`${id}-percent`} class="rl-field__note rl-field__error" data-testid="fault-percent-error">
          {errors.percent}
        </span>
      )}
      {setError && (
        <span class="rl-field__note rl-field__error" role="alert" data-testid="fault-set-error">
          {setError}
        </span>
      )}
    </form>
  );
}

/** What the pattern being typed matches in the list (nothing to say while it is empty). */
function matchesText(matched: number | undefined, total: number): string {
  if (matched === undefined) return '';
  if (total === 0) return 'As in the filter box; no request in the list yet to try it on.';
  return `Matches ${matched} of the ${total} request${total === 1 ? '' : 's'} in the list.`;
}

interface DraftFieldsProps {
  /** The form's id, which its notes' ids start with. */
  readonly id: string;
  readonly draft: RuleDraft;
  readonly errors: DraftErrors;
  /** Under the pattern: what is wrong with it, else what it matches. */
  readonly urlNote: string;
  readonly url: RefObject<HTMLInputElement | null>;
  readonly update: (field: keyof RuleDraft) => (event: Event) => void;
}

/** The rule's method, URL pattern, steps and probability, as typed. */
function DraftFields({ id, draft, errors, urlNote, url, update }: DraftFieldsProps) {
  return (
    <>
      <label class="rl-field rl-field--method">
        <span class="rl-field__label">Method</span>
        <select
          class="rl-select"
          value={draft.method}
          data-testid="fault-method-input"
          onChange={update('method')}
        >
          {RULE_METHODS.map((method) => (
            <option key={method} value={method}>
              {method === '' ? 'Any' : method}
            </option>
          ))}
        </select>
      </label>
      <label class="rl-field rl-field--url">
        <span class="rl-field__label">URL pattern</span>
        <input
          ref={url}
          type="text"
          class="rl-input"
          value={draft.url}
          placeholder="/api/*"
          spellcheck={false}
          autocomplete="off"
          aria-invalid={errors.url !== undefined}
          aria-describedby={`${id}-url`}
          data-testid="fault-url"
          onInput={update('url')}
        />
      </label>
      <span
        id={`${id}-url`}
        class={`rl-field__note rl-field__note--url${errors.url ? ' rl-field__error' : ''}`}
        data-testid="fault-matches"
      >
        {urlNote}
      </span>
      <label class="rl-field rl-field--steps">
        <span class="rl-field__label">Steps</span>
        <input
          type="text"
          class="rl-input"
          value={draft.steps}
          placeholder="503, 503, 200"
          spellcheck={false}
          autocomplete="off"
          aria-invalid={errors.steps !== undefined}
          aria-describedby={`${id}-steps`}
          data-testid="fault-steps-input"
          onInput={update('steps')}
        />
      </label>
      <label class="rl-field rl-field--percent">
        <span class="rl-field__label">Probability</span>
        <span class="rl-field__unit">
          <input
            type="number"
            class="rl-input"
            value={draft.percent}
            min={0}
            max={100}
            step="any"
            aria-invalid={errors.percent !== undefined}
            aria-describedby={errors.percent ? `${id}-percent` : undefined}
            data-testid="fault-percent"
            onInput={update('percent')}
          />
          %
        </span>
      </label>
    </>
  );
}

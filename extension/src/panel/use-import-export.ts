/**
 * Files in and out of the panel: an imported Recording or HAR (from the Import button, a file
 * dropped on the panel, `?src=` or the panel's API) is viewed in place of the source's own data
 * until the developer goes back to it; Export saves the entries as a Recording or the timeline as HAR.
 */

import type { RefObject } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import {
  exportFileName,
  MAX_IMPORT_BYTES,
  parseImport,
  TOO_LARGE_ERROR,
  toHar,
  toRecording,
} from '../model/export';
import type { TimelineEntry } from '../shared/protocol';
import type { Notice } from './banners';
import { fetchRecording, type PanelSource, staticSource } from './sources';
import type { SourceState } from './use-source-state';

/** Saves an export under `name`. */
export type Save = (name: string, text: string, type: string) => void;

export interface ViewedSource {
  /** What the panel shows: its own source, or an imported file's entries. */
  readonly active: PanelSource;
  /** The imported file's name, while one is viewed. */
  readonly imported: string | undefined;
  /** Shows `entries` (imported from `name`) in place of what is shown. */
  readonly view: (entries: readonly TimelineEntry[], name: string) => void;
  /** Shows the panel's own source again. */
  readonly back: () => void;
}

export function useViewedSource(source: PanelSource): ViewedSource {
  const [active, setActive] = useState<PanelSource>(source);
  const [imported, setImported] = useState<string | undefined>(undefined);
  const view = useCallback((entries: readonly TimelineEntry[], name: string) => {
    setActive(staticSource(entries, name));
    setImported(name);
  }, []);
  const back = () => {
    setImported(undefined);
    setActive(source);
  };
  return { active, imported, view, back };
}

export interface ImportExportOptions {
  readonly viewed: ViewedSource;
  readonly state: SourceState;
  /** Selects a row, or none: what is viewed changing drops the selection. */
  readonly select: (key: string | undefined) => void;
  /** Shows (or, with `undefined`, clears) what the panel has to say about an import. */
  readonly notify: (notice: Notice | undefined) => void;
  readonly save: Save;
}

export interface ImportExport {
  /** Imports a Recording or HAR named `name`; why it failed shows as a notice. Stable across renders. */
  readonly importText: (text: string, name?: string) => void;
  /** The hidden file input that the Import button opens. */
  readonly fileInput: RefObject<HTMLInputElement | null>;
  readonly chooseFile: () => void;
  readonly onFile: (event: Event) => void;
  readonly onDrop: (event: DragEvent) => void;
  readonly onDragOver: (event: DragEvent) => void;
  readonly exportJson: () => string;
  readonly exportHar: () => string;
  readonly saveJson: () => void;
  readonly saveHar: () => void;
  /** Leaves an imported file for the source's own data. */
  readonly back: () => void;
}

export function useImportExport({ viewed, state, select, notify, save }: ImportExportOptions): ImportExport {
  const fileInput = useRef<HTMLInputElement>(null);
  const { view } = viewed;
  const importText = useCallback(
    (text: string, name = 'import') => {
      const result = parseImport(text);
      if ('error' in result) {
        notify({ kind: 'error', text: `Import failed: ${result.error}` });
        return;
      }
      select(undefined);
      view(result.entries, name);
      notify(
        result.skipped > 0
          ? { kind: 'info', text: `Imported ${name}; ${result.skipped} invalid entries were skipped.` }
          : undefined,
      );
    },
    [view, select, notify],
  );

  const importFile = async (file: File) => {
    // Read nothing that cannot be imported: a file over the limit in bytes is over it in text too
    // (UTF-8 has at least one byte per character), and reading 600 MB first would stall the panel.
    if (file.size > MAX_IMPORT_BYTES) {
      notify({ kind: 'error', text: `Import failed: ${TOO_LARGE_ERROR}` });
      return;
    }
    try {
      importText(await file.text(), file.name);
    } catch (error) {
      notify({ kind: 'error', text: `Import failed: cannot read ${file.name}: ${(error as Error).message}` });
    }
  };

  const exportJson = () => JSON.stringify(toRecording(state.entries(), viewed.active.label));
  const exportHar = () => JSON.stringify(toHar(state.timeline));
  return {
    importText,
    fileInput,
    chooseFile: () => fileInput.current?.click(),
    onFile: (event) => {
      const input = event.currentTarget as HTMLInputElement;
      const file = input.files?.[0];
      input.value = '';
      if (file) void importFile(file);
    },
    // A file dropped anywhere on the panel imports as the Import button does.
    onDrop: (event) => {
      const file = event.dataTransfer?.files?.[0];
      if (!file) return;
      event.preventDefault();
      void importFile(file);
    },
    onDragOver: (event) => {
      if (event.dataTransfer?.types.includes('Files')) event.preventDefault();
    },
    exportJson,
    exportHar,
    saveJson: () => save(exportFileName('json'), exportJson(), 'application/json'),
    saveHar: () => save(exportFileName('har'), exportHar(), 'application/json'),
    back: () => {
      select(undefined);
      viewed.back();
    },
  };
}

/** Opens the recording at `src` (`?src=`; only same-origin URLs load) as an import, once it has loaded. */
export function useRecordingAtStart(
  src: string | undefined,
  fetchImpl: typeof fetch | undefined,
  importText: ImportExport['importText'],
  notify: ImportExportOptions['notify'],
): void {
  useEffect(() => {
    if (src === undefined) return;
    let cancelled = false;
    const base = globalThis.location?.href ?? 'about:blank';
    void fetchRecording(src, base, fetchImpl).then((result) => {
      if (cancelled) return;
      if ('error' in result) notify({ kind: 'error', text: result.error });
      else importText(result.text, result.name);
    });
    return () => {
      cancelled = true;
    };
  }, [src]);
}

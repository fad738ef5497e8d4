/** Saving an export from the panel: a download, as a page would start one. */

/** Saves `text` as a file through a temporary object URL. */
export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The download has started by the next task; the URL is not needed after it.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

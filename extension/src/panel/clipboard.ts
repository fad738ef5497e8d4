/**
 * Copying text from the panel. DevTools extension pages may be refused the async clipboard (it
 * wants the permission and the focus), so a refused write falls back to a copy command on a
 * hidden text area, which a click allows.
 */

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    // Refused or absent: the copy command below.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('the browser refused to copy');
}

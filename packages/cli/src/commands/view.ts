import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { MAX_IMPORT_BYTES, TOO_LARGE_ERROR } from '@retryline/devtools/import';
import { parseFlags } from '../parse-flags';
import { parseCount } from '../parse-number';
import type { CommandIo } from '../run';
import { UsageError } from '../usage-error';
import { readViewerFile, startViewer, type ViewerFile } from '../view/view-server';

const FLAGS = {
  port: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const HELP = `Usage: retryline view <recording.json> [--port N]

Opens a recording in the standalone timeline viewer, served on 127.0.0.1: what the viewer's
Import opens — a recording (exported from the Retryline devtools panel as JSON, or written
with core's recordEvents()), a HAR exported by the panel, or a JSON array of events (a log of
onEvent calls). Prints the URL and serves until interrupted (Ctrl-C).

Options
  --port N   the port to listen on (default: a free one)
`;

/** Where the built viewer is: next to the CLI's dist/, copied there by the CLI's build. */
export function defaultViewerDir(): string {
  return fileURLToPath(new URL('../viewer/', import.meta.url));
}

/**
 * `retryline view`: serves the viewer until `stop` resolves (by default, SIGINT or SIGTERM).
 * Returns the exit code.
 */
export async function viewCommand(
  args: readonly string[],
  io: CommandIo,
  options: { viewerDir?: string; stop?: Promise<void> } = {},
): Promise<number> {
  const { values, positionals } = parseFlags(args, FLAGS, 'retryline view');
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  const [path, extra] = positionals;
  if (path === undefined)
    throw new UsageError("retryline view needs a recording file: see 'retryline view --help'");
  if (extra !== undefined) throw new UsageError(`Expected one recording file, got '${path}' and '${extra}'`);
  const port = values.port === undefined ? 0 : parseCount(values.port, '--port', 65_535);
  let text: string;
  try {
    // As the viewer's Import: the size decides before a byte is read.
    if ((await stat(path)).size > MAX_IMPORT_BYTES) throw new UsageError(`${path}: ${TOO_LARGE_ERROR}`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  let file: ViewerFile;
  try {
    file = readViewerFile(text, path);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { recording } = file;
  const viewerDir = options.viewerDir ?? defaultViewerDir();
  if (!existsSync(viewerDir)) {
    throw new UsageError(`The viewer is not built (${viewerDir} is missing): run 'pnpm build' first`);
  }
  let viewer: Awaited<ReturnType<typeof startViewer>>;
  try {
    viewer = await startViewer({ viewerDir, recording, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new UsageError(`Port ${port} is in use: pick another --port, or leave it out for a free one`);
    if (code === 'EACCES')
      throw new UsageError(`Port ${port} needs privileges: pick one above 1023, or leave --port out`);
    throw error;
  }
  io.stdout(`Retryline viewer: ${viewer.url}\n`);
  // A recording made elsewhere may not say where it came from.
  const source =
    typeof recording.source === 'string' && recording.source !== '' ? ` from ${recording.source}` : '';
  const format =
    file.format === 'har' ? ' (from a HAR)' : file.format === 'events' ? ' (from an event array)' : '';
  const skipped = file.skipped > 0 ? `; ${file.skipped} invalid entries skipped` : '';
  io.stdout(`${recording.entries.length} entries${source}${format}${skipped}. Press Ctrl-C to stop.\n`);
  await (options.stop ??
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }));
  await viewer.close();
  return 0;
}

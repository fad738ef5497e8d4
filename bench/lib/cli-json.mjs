// The `retryline` command run in this process (the CLI package's `run`), its JSON output parsed:
// the benches that need more than the package's index exports go through the command line itself.
import { run } from '../../packages/cli/dist/index.js';

/** Runs `retryline <args> --format json` and returns what it printed, parsed; throws on a non-zero exit. */
export async function retrylineJson(args) {
  const argv = [...args, '--format', 'json'];
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  if (code !== 0) throw new Error(`retryline ${argv.join(' ')} exited with ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

import { run } from './run';

// A reader that stops early (`retryline schedule | head`) closes the pipe; that is not a failure
// worth a stack trace. Any other write error still is.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit();
});

// exitCode rather than process.exit(), so output still being written to a pipe is not cut off.
process.exitCode = await run(process.argv.slice(2));

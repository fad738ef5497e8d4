// Where every benchmark leaves its raw numbers: bench/results/<name>.json, which bench/report.mjs
// turns into bench/RESULTS.md and the charts. Each file says when and where it was measured.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, type as osType, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** The machine a result was measured on. */
export function machine() {
  const cpu = cpus();
  return {
    os: `${osType()} ${release()}`,
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
}

/** Writes `data` (plus the time and machine) to bench/results/<name>.json; returns the path. */
export function writeResult(name, data) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}${name}.json`;
  const result = { name, measuredAt: new Date().toISOString(), machine: machine(), ...data };
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

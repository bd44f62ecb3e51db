const started = performance.now();

/** Progress goes to stderr, so stdout carries only the results table. */
export function progress(message: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[bench ${seconds}s] ${message}\n`);
}

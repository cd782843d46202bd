// @ts-check
const fs = require('node:fs');
const path = require('node:path');
const process = require('node:process');

/**
 * A jest reporter beside the default one: at the end of a run, the ten spec files that took longest
 * (their own time in their worker, setup and teardown included), so CI's log shows where the time goes.
 */
class SlowestFiles {
  /** @param {{ rootDir: string }} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  /**
   * @param {unknown} _contexts
   * @param {{ testResults: { testFilePath: string; perfStats: { runtime: number } }[] }} results
   */
  onRunComplete(_contexts, results) {
    const files = results.testResults
      .map((r) => ({ file: path.relative(this.rootDir, r.testFilePath), ms: r.perfStats.runtime }))
      .sort((a, b) => b.ms - a.ms);
    const slowest = files.slice(0, 10);
    if (slowest.length === 0) return;
    const width = Math.max(...slowest.map((s) => s.file.length));
    const lines = slowest.map((s) => `  ${s.file.padEnd(width)}  ${(s.ms / 1000).toFixed(1).padStart(6)} s`);
    const total = files.reduce((sum, f) => sum + f.ms, 0) / 1000;
    process.stderr.write(
      `\nThe ${slowest.length} slowest spec files (of ${files.length}, whose own times add up to ${total.toFixed(0)} s):\n${lines.join('\n')}\n`,
    );
    // JEST_TIMINGS_FILE=<path>: every file's time, slowest first (tab-separated), to see where a run went.
    const out = process.env.JEST_TIMINGS_FILE;
    if (out)
      fs.writeFileSync(out, files.map((f) => `${(f.ms / 1000).toFixed(1)}\t${f.file}`).join('\n') + '\n');
  }
}

module.exports = SlowestFiles;

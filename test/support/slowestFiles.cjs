// @ts-check
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
    const slowest = results.testResults
      .map((r) => ({ file: path.relative(this.rootDir, r.testFilePath), ms: r.perfStats.runtime }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10);
    if (slowest.length === 0) return;
    const width = Math.max(...slowest.map((s) => s.file.length));
    const lines = slowest.map((s) => `  ${s.file.padEnd(width)}  ${(s.ms / 1000).toFixed(1).padStart(6)} s`);
    process.stderr.write(`\nThe ${slowest.length} slowest spec files:\n${lines.join('\n')}\n`);
  }
}

module.exports = SlowestFiles;

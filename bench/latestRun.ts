import fs from 'node:fs';

const START = '<!-- latest run: written by `BENCH_DOCS=1 npm run bench`; do not edit by hand -->';
const END = '<!-- end of latest run -->';

/** From now on, every line printed to stdout is also kept; the function returns them so far. */
export const recordPrinted = () => {
  const lines: string[] = [];
  const log = console.log.bind(console);
  console.log = (...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
    log(...args);
  };
  return () => [...lines];
};

/**
 * Replaces the generated section of the benchmarks page (between its markers) with a run's printed
 * lines, so the figures the page quotes are the figures a run printed. A page without the markers
 * gets the section at its end.
 */
export const writeLatestRun = (file: string, lines: readonly string[]) => {
  const page = fs.readFileSync(file, 'utf8');
  const section = `${START}\n\n\`\`\`text\n${lines.join('\n')}\n\`\`\`\n\n${END}`;
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  const next =
    from >= 0 && to > from
      ? `${page.slice(0, from)}${section}${page.slice(to + END.length)}`
      : `${page.trimEnd()}\n\n## Latest run\n\n${section}\n`;
  fs.writeFileSync(file, next);
};

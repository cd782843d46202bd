import fs from 'node:fs';

const START = '<!-- latest run: written by `BENCH_DOCS=1 npm run bench`; do not edit by hand -->';
const END = '<!-- end of latest run -->';
/** The line each benchmark's output starts with in the section: `── replay · <when, machine> ──`. */
const HEADING = /^── (\S+) · (.*) ──$/;

/** One benchmark's printed lines, and when and on what machine they were printed. */
export type BenchOutput = {
  readonly name: string;
  readonly machine: string;
  readonly lines: readonly string[];
};

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
 * The benchmarks' outputs the section holds now, in its order. Lines before any heading (a section
 * written before outputs had headings: one run's lines, its first saying when) are kept as one
 * output, `earlier`, until the benchmarks it holds run again.
 */
const outputsIn = (section: string): BenchOutput[] => {
  const outputs: { name: string; machine: string; lines: string[] }[] = [];
  for (const line of section.split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) outputs.push({ name: heading[1]!, machine: heading[2]!, lines: [] });
    else if (line.startsWith('```') || (!outputs.length && line.trim() === '')) continue;
    else if (outputs.length) outputs.at(-1)!.lines.push(line);
    else outputs.push({ name: EARLIER, machine: line, lines: [] });
  }
  return outputs.map((o) => ({ ...o, lines: trimBlank(o.lines) }));
};

/** The name the lines of a section without headings are kept under. */
const EARLIER = 'earlier';

const trimBlank = (lines: readonly string[]) => {
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end--;
  return lines.slice(0, end);
};

/**
 * Writes a run's outputs into the generated section of the benchmarks page (between its markers),
 * so the figures the page quotes are the figures a run printed. A benchmark that ran replaces its
 * own earlier output and keeps the others' (a slow one named alone, `BENCH_ONLY=kb`, adds to the
 * default set's run instead of replacing it); each says when it ran. `order` is the order the
 * section lists them in; a page without the markers gets the section at its end.
 */
export const writeLatestRun = (
  file: string,
  ran: readonly BenchOutput[],
  order: readonly string[],
  /** The run covered the whole default set: an `earlier` section's lines are all outdone. */
  ranDefaultSet: boolean,
) => {
  const page = fs.readFileSync(file, 'utf8');
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  const kept = from >= 0 && to > from ? outputsIn(page.slice(from + START.length, to)) : [];
  const byName = new Map(kept.map((o) => [o.name, o]));
  for (const o of ran) byName.set(o.name, o);
  if (ranDefaultSet) byName.delete(EARLIER);
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  const outputs = [...byName.values()].sort((a, b) => rank(a.name) - rank(b.name));
  const body = outputs.map((o) => [`── ${o.name} · ${o.machine} ──`, ...o.lines].join('\n')).join('\n\n');
  const section = `${START}\n\n\`\`\`text\n${body}\n\`\`\`\n\n${END}`;
  const next =
    from >= 0 && to > from
      ? `${page.slice(0, from)}${section}${page.slice(to + END.length)}`
      : `${page.trimEnd()}\n\n## Latest run\n\n${section}\n`;
  fs.writeFileSync(file, next);
};

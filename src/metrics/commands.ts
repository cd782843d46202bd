import { Counter, type Registry } from 'prom-client';
import type { CommandRunner } from '../eventlog/commands';

type CommandStats = ReturnType<CommandRunner['stats']>;

/**
 * The command runner's counts since start, read at each scrape: counters Prometheus can take a
 * `rate()` of, set from the runner's own tallies (so nothing on the write path changes).
 */
export const commandMetrics = (registry: Registry, stats: () => CommandStats) => {
  const counters: [keyof CommandStats, string, string][] = [
    ['commands', 'mindledger_commands_total', 'Commands run (each may decide nothing, or append once)'],
    [
      'appends',
      'mindledger_event_appends_total',
      'Appends to the log made by commands (one per group commit)',
    ],
    ['appendedEvents', 'mindledger_events_appended_total', 'Events appended to the log by commands'],
    [
      'conflicts',
      'mindledger_command_conflicts_total',
      'Appends refused because another writer moved the stream first (each retried)',
    ],
    [
      'staleCacheRetries',
      'mindledger_command_stale_cache_retries_total',
      'Appends decided on a cached stream state that was behind the log (PostgreSQL; retried at once)',
    ],
  ];
  for (const [field, name, help] of counters)
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(stats()[field]);
      },
    });
};

import { Gauge, type Registry } from 'prom-client';

/** Long work this process is doing now, counted where it is started. */
export type WorkInFlight = {
  trainings(): number;
  agentRuns(): number;
};

/** Trainings and agent runs running in this process, read at each scrape. */
export const workInFlightMetrics = (registry: Registry, work: WorkInFlight) => {
  new Gauge({
    name: 'mindledger_trainings_in_flight',
    help: 'Model trainings this process is running',
    registers: [registry],
    collect() {
      this.set(work.trainings());
    },
  });
  new Gauge({
    name: 'mindledger_agent_runs_in_flight',
    help: 'Agent runs (completions, SQL questions, chatbot answers) this process is running',
    registers: [registry],
    collect() {
      this.set(work.agentRuns());
    },
  });
};

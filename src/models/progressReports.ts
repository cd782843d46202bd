import type { AppContext } from '../context';
import { streamCommand } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { decideTrainingProgress } from './decider';
import { modelTrainingStream, trainingProgressAggregate } from './state';
import type { ProgressReport } from './training';

/** A progress report, on the training's own stream; nothing waits for the read model. */
export const reportProgress = async (
  ctx: AppContext,
  projects: ProjectDirectory,
  projectName: string,
  r: ProgressReport,
) => {
  const project = await projects.require(projectName);
  // Nobody waits for a progress report, and on one node nothing else tells the read model of
  // it: answered ahead, it is applied now (and a read of the model waits for it), so the models
  // table and DESCRIBE … .progress move while the model trains.
  return streamCommand(ctx, {
    stream: modelTrainingStream(r.versionId),
    aggregate: trainingProgressAggregate,
    command: {
      type: 'ReportTrainingProgress' as const,
      data: {
        projectId: Number(project.id),
        project: project.name,
        name: r.name,
        version: r.version,
        versionId: Number(r.versionId),
        phase: r.phase,
        percent: r.percent,
        rows: r.rows,
      },
    },
    decide: decideTrainingProgress,
    answer: 'ahead',
  });
};

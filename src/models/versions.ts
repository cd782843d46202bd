import type { AppContext } from '../context';
import { loadProject, projectCommand } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { decideModel, type ModelCommand } from './decider';
import { presentModel } from './present';
import { modelVersionRow } from './projection';
import { findModel, splitVersion, type ModelVersion } from './state';

/** What reading models needs: the log and read model, and the projects they live in. */
export type ModelReads = { readonly ctx: AppContext; readonly projects: ProjectDirectory };

/** A model command on its project's stream, answered once the read model has it. */
export const runModelCommand = (
  { ctx, projects }: ModelReads,
  projectName: string,
  command: Unstamped<ModelCommand>,
) =>
  projectCommand(ctx, {
    project: projectName,
    projects,
    asGiven: true,
    command,
    decide: decideModel,
    answer: 'settled',
  });

/** A model as the project's stream holds it (real options), by name. */
export const loadModel = async ({ ctx, projects }: ModelReads, projectName: string, name: string) =>
  findModel((await loadProject(ctx, projects, projectName)).models, name);

/** The version a reference means: `m.N`, or the active one, or the newest. */
export const resolveVersion = async (
  reads: ModelReads,
  projectName: string,
  ref: string,
): Promise<{ name: string; version: ModelVersion }> => {
  const { name, version } = splitVersion(ref);
  const model =
    (await loadModel(reads, projectName, name)) ??
    (version === undefined ? undefined : await loadModel(reads, projectName, ref));
  if (!model) throw notFound(`Model with name ${ref} not found`, 'Model not found');
  const wanted =
    model.name.toLowerCase() === ref.toLowerCase() || version === undefined
      ? (model.activeVersion ?? Math.max(...model.versions.keys()))
      : version;
  const v = model.versions.get(wanted);
  if (!v) throw notFound(`Model ${model.name} has no version ${wanted}`, 'Model not found');
  return { name: model.name, version: v };
};

/** The projected row of the version a reference means. */
export const rowOf = async (reads: ModelReads, projectName: string, ref: string) => {
  const { ctx, projects } = reads;
  const { name, version } = await resolveVersion(reads, projectName, ref);
  const project = await projects.require(projectName);
  const row = await modelVersionRow(ctx.duck, project.id, name, version.version);
  if (!row) throw notFound(`Model with name ${ref} not found`, 'Model not found');
  return row;
};

/** The version a reference means, as the API shows it. */
export const modelView = async (reads: ModelReads, projectName: string, ref: string) =>
  presentModel(await rowOf(reads, projectName, ref));

/**
 * The LLM model a reference means (its real options, secrets included, from the project's
 * stream), or undefined when it is a trained model. Unknown: 404.
 */
export const llmModelOf = async (reads: ModelReads, projectName: string, ref: string) => {
  const project = await reads.projects.require(projectName);
  const { name, version } = await resolveVersion(reads, project.name, ref);
  if (!version.llm) return undefined;
  return {
    project: project.name,
    name,
    version: version.version,
    target: version.target,
    options: version.options,
    llm: version.llm,
  };
};

import { conflict } from './errors';
import { findByName } from './params';

/** A name no other resource of this kind in the project has (`self`: the one renamed), as MindsDB refuses it. */
export const requireFreeName = (
  kind: string,
  resources: Iterable<{ readonly id: bigint; readonly name: string }>,
  name: string,
  self?: bigint,
) => {
  const clash = findByName(resources, name);
  if (clash && clash.id !== self)
    throw conflict(
      `${kind} with name ${name} already exists. Please choose a different one.`,
      `${kind} already exists`,
    );
};

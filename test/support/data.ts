import fs from 'node:fs';
import path from 'node:path';

/** A dataset from `../shared/data` (beside the repository, on every machine and in CI). */
export const sharedData = (file: string) => {
  const full = path.resolve(__dirname, '../../../shared/data', file);
  if (!fs.existsSync(full))
    throw new Error(
      `${full} is missing: the tests read the shared datasets from ../shared/data beside the repository`,
    );
  return full;
};

/** A training that cannot be done as asked (bad options, no rows, a single-valued target). Zod-free: the training worker throws it. */
export class TrainingError extends Error {}

import type { ColumnEncoding, DType } from './dataset';
import type { GbdtModel } from './gbdt';
import type { LinearModel } from './linear';

export type Mixer =
  GbdtModel | LinearModel | { kind: 'mean'; value: number } | { kind: 'majority'; probabilities: number[] };

export type Calibration =
  | {
      kind: 'regression';
      /** Sorted |truth − prediction| on the calibration split (inductive conformal prediction). */
      scores: number[];
      targetStd: number;
      positiveDomain: boolean;
      isInteger: boolean;
    }
  | {
      kind: 'classification';
      /** Sorted margin nonconformity scores on the calibration split. */
      scores: number[];
    };

/** A trained model, complete in one JSON document (stored content-addressed; its digest is in the log). */
export type Artifact = {
  schemaVersion: 1;
  engine: 'mindledger-tabular';
  target: string;
  targetDtype: DType;
  task: 'regression' | 'classification';
  /** Input columns in training order, with their inferred types. */
  columns: { name: string; dtype: DType }[];
  encodings: ColumnEncoding[];
  classes: string[];
  mixer: Mixer;
  calibration: Calibration;
  training: {
    rows: number;
    seed: number;
    split: { train: number; dev: number; calibration: number };
    /** Dev-split score of every candidate (r2 or balanced accuracy); the best was kept. */
    candidates: Record<string, number>;
    /** Held-out score of the kept mixer on the calibration split. */
    accuracy: number;
    metric: 'r2' | 'balanced_accuracy';
  };
};

/** Key order is fixed by construction, so the same training gives byte-identical JSON. */
export const serializeArtifact = (a: Artifact) => JSON.stringify(a);

import type { DecisionRule, ProbabilityScaling } from './calibrate';
import type { ColumnEncoding, DType } from './dataset';
import type { GbdtModel } from './gbdt';
import type { LinearModel } from './linear';
import type { PartialModel } from './partial';
import type { TargetType } from './target';

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

type TrainingSummary = {
  rows: number;
  seed: number;
  split: { train: number; dev: number; calibration: number };
  /** Dev-split score of every candidate (r2 or balanced accuracy); the best was kept. */
  candidates: Record<string, number>;
  /** Held-out score of the kept mixer on the calibration split. */
  accuracy: number;
  metric: 'r2' | 'balanced_accuracy';
};

/** What every table model holds, in both schemas. */
type TableModel = {
  engine: 'mindledger-tabular';
  target: string;
  targetDtype: DType;
  task: 'regression' | 'classification';
  /** Input columns in training order, with their inferred types. */
  columns: { name: string; dtype: DType }[];
  encodings: ColumnEncoding[];
  classes: string[];
};

/** Schema 1: what the engine wrote until schema 2. Stored in event logs; read and predicted forever. */
export type ArtifactV1 = TableModel & {
  schemaVersion: 1;
  mixer: Mixer;
  calibration: Calibration;
  training: TrainingSummary;
};

/** Permutation importance of one input column on the calibration split. */
export type FeatureImportance = {
  column: string;
  /** Relative to the most important column (1); 0 when permuting it changed nothing. */
  importance: number;
  /** Drop of the accuracy metric (r2 or balanced accuracy) when the column's values are shuffled. */
  drop: number;
};

/** How the target's type was decided, for DESCRIBE. */
type TargetDescription = {
  targetType: TargetType;
  targetTypeSource: 'inferred' | 'option';
};

/** Schema 2, a table model: classes with calibrated probabilities and a balanced decision. */
export type TabularArtifact = TableModel &
  TargetDescription & {
    schemaVersion: 2;
    /** How predicted classes are typed in answers: numbers for a numeric target's classes. */
    classValues: 'string' | 'number' | 'boolean';
    mixer: Mixer;
    /** Classification: logit scaling fitted on the dev split; null for regression. */
    probabilities: ProbabilityScaling | null;
    decision: DecisionRule | null;
    calibration: Calibration;
    importance: FeatureImportance[];
    training: TrainingSummary & {
      /** Class weights used in the gradients (null: unweighted or regression). */
      classWeights: number[] | null;
      /** Boosting rounds kept after early stopping (null when the GBDT was not chosen). */
      rounds: number | null;
    };
    /**
     * How rows lacking inputs are answered and each row's interval scaled (partial.ts); absent from
     * artifacts written before issue 59, which answer as they always did.
     */
    partial?: PartialModel;
  };

/** One forecast step's model and its normalised conformal scores. */
export type ForecastStep = { step: number; mixer: Mixer; scores: number[]; r2: number };

/** Schema 2, a time-series model: one model per horizon step over lag features of the target. */
export type ForecastArtifact = TargetDescription & {
  schemaVersion: 2;
  engine: 'mindledger-timeseries';
  target: string;
  targetDtype: DType;
  task: 'forecast';
  /** The order and group columns, with their types. */
  columns: { name: string; dtype: DType }[];
  timeseries: {
    orderBy: string;
    orderKind: 'date' | 'number';
    /** Date-only order values print as YYYY-MM-DD, others as full ISO timestamps. */
    dateOnly: boolean;
    groupBy: string[];
    window: number;
    horizon: number;
    /** Median distance between consecutive order values: how forecast rows are dated. */
    interval: number;
    /** Cycles of the target time used as features (dates whose history covers them twice). */
    calendar: ('weekday' | 'year' | 'hour')[];
    /** Names of the features each step model reads, in order. */
    features: string[];
  };
  steps: ForecastStep[];
  calibration: {
    kind: 'forecast';
    targetStd: number;
    positiveDomain: boolean;
    isInteger: boolean;
    /** Lightwood's automatic level (highest whose step-1 interval fits within one target std). */
    confidence: number;
  };
  importance: FeatureImportance[];
  training: TrainingSummary;
};

export type ArtifactV2 = TabularArtifact | ForecastArtifact;
/** A trained model, complete in one JSON document (stored content-addressed; its digest is in the log). */
export type Artifact = ArtifactV1 | ArtifactV2;

/** Key order is fixed by construction, so the same training gives byte-identical JSON. */
export const serializeArtifact = (a: Artifact) => JSON.stringify(a);

export const isForecast = (a: Artifact): a is ForecastArtifact =>
  a.schemaVersion === 2 && a.task === 'forecast';

// The result every benchmark reports: a value, its bare baseline measured in the same run, and their ratio.
export interface BenchResult {
  bench: string;
  metric: string;
  value: number;
  baseline: number;
  /** value / baseline (for "lower is better" metrics the bench says so in `metric`) */
  ratio: number;
  unit: string;
}

export type Bench = () => Promise<BenchResult[]>;

// Metrics: a current value per project and title, and its history per minute.

/** A number, a text, or a boolean (LogSnag's insights allow all three). */
export type MetricValue = number | string | boolean;

export type Metric = {
  id: number;
  projectId: number;
  project: string;
  title: string;
  value: MetricValue | null;
  icon: string | null;
  updatedAt: number;
};

/** A metric's last value in one minute (`at`: the minute's start, Unix ms). */
export type MetricPoint = { at: number; value: MetricValue | null };

/**
 * A metric's points within one span of time (`at`: its start, Unix ms): the first, lowest, highest
 * and last values, which are what a chart of a long range can draw of them (a spike is one of them).
 */
export type MetricBucket = {
  at: number;
  count: number;
  first: MetricPoint;
  last: MetricPoint;
  /** Of the numbers among the points; null when they all hold text. */
  min: number | null;
  max: number | null;
  /** How many of the points hold text. */
  texts: number;
};

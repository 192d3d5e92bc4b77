// Metrics: a current value per project and title, and its history per minute.

export type MetricValue = number | string;

export type Metric = { id: number; projectId: number; project: string; title: string; value: MetricValue | null; icon: string | null; updatedAt: number };

/** A metric's last value in one minute (`at`: the minute's start, Unix ms). */
export type MetricPoint = { at: number; value: MetricValue | null };

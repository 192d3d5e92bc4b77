// Projects and their channels.

export type Project = { id: number; name: string; retentionDays: number | null; createdAt: number };

export type Channel = { id: number; projectId: number; name: string; createdAt: number };

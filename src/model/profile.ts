// User and group traits (identify, group): properties merged as a JSON merge patch.

export type Properties = Record<string, string | number | boolean | null>;

export type Profile = { projectId: number; userId: string; properties: Properties; createdAt: number; updatedAt: number };

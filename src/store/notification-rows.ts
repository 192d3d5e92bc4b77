// Integration and digest rows as both dialects select them (their JSON columns as text), turned
// into the model's entities, and the columns their changes write.
import type {
  Digest,
  DigestChanges,
  Integration,
  IntegrationChanges,
  NewDigest,
  NewIntegration,
  RouteFilter,
  Template,
} from "../model/notification.ts";

export type IntegrationRow = Omit<Integration, "config" | "secrets" | "filter" | "template"> & {
  config: string;
  secrets: string;
  filter: string | null;
  template: string | null;
};

export const toIntegration = (row: IntegrationRow): Integration => ({
  ...row,
  config: JSON.parse(row.config) as Record<string, unknown>,
  secrets: JSON.parse(row.secrets) as Record<string, string>,
  filter: row.filter ? (JSON.parse(row.filter) as RouteFilter) : null,
  template: row.template ? (JSON.parse(row.template) as Template) : null,
});

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export function integrationColumns(i: NewIntegration) {
  return {
    ...i,
    config: JSON.stringify(i.config),
    secrets: JSON.stringify(i.secrets),
    filter: json(i.filter),
    template: json(i.template),
  };
}

export function integrationChanges(c: IntegrationChanges) {
  const out: Record<string, unknown> = {};
  if (c.name !== undefined) out.name = c.name;
  if (c.enabled !== undefined) out.enabled = c.enabled;
  if (c.config !== undefined) out.config = JSON.stringify(c.config);
  if (c.secrets !== undefined) out.secrets = JSON.stringify(c.secrets);
  if (c.filter !== undefined) out.filter = json(c.filter);
  if (c.template !== undefined) out.template = json(c.template);
  return out;
}

export type DigestRow = Omit<Digest, "integrationIds" | "emails" | "frequency"> & {
  frequency: string;
  integrationIds: string;
  emails: string;
};

export const toDigest = (row: DigestRow): Digest => ({
  ...row,
  frequency: row.frequency as Digest["frequency"],
  integrationIds: JSON.parse(row.integrationIds) as number[],
  emails: JSON.parse(row.emails) as string[],
});

export function digestColumns(d: NewDigest) {
  return { ...d, integrationIds: JSON.stringify(d.integrationIds), emails: JSON.stringify(d.emails) };
}

export function digestChanges(c: DigestChanges) {
  const out: Record<string, unknown> = { ...c };
  if (c.integrationIds !== undefined) out.integrationIds = JSON.stringify(c.integrationIds);
  if (c.emails !== undefined) out.emails = JSON.stringify(c.emails);
  return out;
}

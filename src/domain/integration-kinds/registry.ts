// The integration kinds, one line each, in the order the API, the form and the CLI list them. A
// kind is its module (kind.ts says what one holds); everything else reads this list.
import { discord } from "./discord.ts";
import { email } from "./email.ts";
import { gotify } from "./gotify.ts";
import type { IntegrationKindModule } from "./kind.ts";
import { matrix } from "./matrix.ts";
import { ntfy } from "./ntfy.ts";
import { pushover } from "./pushover.ts";
import { slack } from "./slack.ts";
import { telegram } from "./telegram.ts";
import { webhook } from "./webhook.ts";

export const KINDS = {
  email,
  telegram,
  gotify,
  pushover,
  matrix,
  webhook,
  ntfy,
  discord,
  slack,
};

export type IntegrationKind = keyof typeof KINDS;

export const INTEGRATION_KINDS = Object.keys(KINDS) as [IntegrationKind, ...IntegrationKind[]];

export const isIntegrationKind = (name: string): name is IntegrationKind => Object.hasOwn(KINDS, name);

/** A kind's module, typed loosely enough to be used by name (a config is checked by its schema before it is used). */
export function kindNamed(name: string): IntegrationKindModule<Record<string, unknown>> {
  if (!isIntegrationKind(name)) throw new Error(`unknown integration kind "${name}"`);
  return KINDS[name] as unknown as IntegrationKindModule<Record<string, unknown>>;
}

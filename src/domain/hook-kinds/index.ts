// The inbound webhook kinds, one line each; the API, the dashboard's form and the CLI read this list.
import type { HookConfig, HookKind } from "../../model/hook.ts";
import { alertmanager } from "./alertmanager.ts";
import { generic } from "./generic.ts";
import { github } from "./github.ts";
import type { HookKindModule } from "./kind.ts";
import { stripe } from "./stripe.ts";

export const HOOK_KIND_MODULES: Record<HookKind, HookKindModule<HookConfig>> = {
  stripe,
  github,
  alertmanager,
  generic,
};

export const hookKind = (kind: HookKind) => HOOK_KIND_MODULES[kind];

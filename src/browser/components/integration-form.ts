import { component } from "../alpine.ts";

/** Settings → Integrations: one fieldset per kind (data-kind), only the chosen kind's shown. */
export const integrationForm = component(() => ({
  kind: "webhook",
  init() {
    this.kind = this.$root.dataset.kind || "webhook";
  },
  pick(event?: Event) {
    const e = event || this.$event;
    this.kind = (e.target as HTMLInputElement).value;
  },
  isKind() {
    return this.$el.dataset.kind === this.kind;
  },
}));

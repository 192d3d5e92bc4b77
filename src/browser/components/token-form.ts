import { component } from "../alpine.ts";

/** Settings → API tokens: the fields of a public token (its project and channel) show when one is chosen. */
export const tokenForm = component(() => ({
  kind: "full",
  init() {
    const checked = this.$root.querySelector<HTMLInputElement>('input[name="kind"]:checked');
    this.kind = checked ? checked.value : "full";
  },
  pick(event?: Event) {
    const e = event || this.$event;
    this.kind = (e.target as HTMLInputElement).value;
  },
  isPublic() {
    return this.kind === "public";
  },
}));

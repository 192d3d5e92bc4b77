import { component } from "../alpine.ts";

/** Settings → Members: a person's projects. Ticking one means "only these"; "every project" clears the ticks. */
export const projectChoice = component(() => ({
  pick(event?: Event) {
    const e = event || this.$event;
    if ((e.target as HTMLInputElement).value === "all")
      for (const box of this.$root.querySelectorAll<HTMLInputElement>('input[name="projects"]')) box.checked = false;
  },
  tick(event?: Event) {
    const e = event || this.$event;
    const some = this.$root.querySelector<HTMLInputElement>('input[name="reach"][value="some"]');
    if (some && (e.target as HTMLInputElement).checked) some.checked = true;
  },
}));

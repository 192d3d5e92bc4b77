import { component } from "../alpine.ts";

/**
 * The chart builder's form: the viewer's time zone goes with the question (buckets start at
 * their midnights), and the fields that only some choices need show with them.
 */
export const chartForm = component(() => ({
  init() {
    let changed = false;
    const zone = this.$root.querySelector<HTMLInputElement>("[data-viewer=zone]");
    if (zone && !zone.value) {
      zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
      changed = true;
    }
    const offset = this.$root.querySelector<HTMLInputElement>("[data-viewer=offset]");
    if (offset && !offset.value) {
      offset.value = String(-new Date().getTimezoneOffset());
      changed = true;
    }
    this.shown();
    if (changed) document.body.dispatchEvent(new CustomEvent("sb-viewer"));
  },
  changed() {
    this.shown();
  },
  addStep(event?: Event) {
    const next = this.$root.querySelector<HTMLElement>(".step-row[hidden]");
    if (!next) return;
    next.hidden = false;
    next.querySelector("input")!.focus();
    if (!this.$root.querySelector(".step-row[hidden]")) ((event || this.$event).target as HTMLElement).hidden = true;
  },
  shown() {
    const form = this.$root;
    const range = form.querySelector<HTMLSelectElement>("[name=range]");
    for (const el of form.querySelectorAll<HTMLElement>("[data-range]"))
      el.hidden = !range || range.value !== el.dataset.range;
    const group = form.querySelector<HTMLSelectElement>("[name=group_by]");
    for (const el of form.querySelectorAll<HTMLElement>("[data-group]"))
      el.hidden = !group || !group.value || (el.dataset.group !== "any" && el.dataset.group !== group.value);
  },
}));

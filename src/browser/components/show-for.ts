import { component } from "../alpine.ts";

/**
 * A form whose parts show for what a select says (data-controls="NAME" on the select,
 * data-show="NAME:value,value" on each part): the alert rule form. A field for the viewer's
 * time zone (data-viewer="zone") starts with it.
 */
export const showFor = component(() => ({
  init() {
    const zone = this.$root.querySelector<HTMLInputElement>("[data-viewer=zone]");
    if (zone && !zone.value) zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
    this.changed();
  },
  changed() {
    const chosen: Record<string, string> = {};
    for (const select of this.$root.querySelectorAll<HTMLSelectElement>("[data-controls]"))
      chosen[select.dataset.controls!] = select.value;
    for (const part of this.$root.querySelectorAll<HTMLElement>("[data-show]")) {
      const [name, values] = part.dataset.show!.split(":");
      part.hidden = !values!.split(",").includes(chosen[name!]!);
    }
  },
}));

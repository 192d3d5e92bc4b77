import { component } from "../alpine.ts";

/** A digest's time zone: this browser's, unless one was typed. */
export const timeZoneField = component(() => ({
  init() {
    const field = this.$el as HTMLInputElement;
    if (!field.value) {
      try {
        field.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
      } catch {
        field.value = "UTC";
      }
    }
  },
}));

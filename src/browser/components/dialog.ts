import { component } from "../alpine.ts";

/** A modal dialog swapped into the page: shown at once, and gone from the page when closed. */
export const dialog = component(() => ({
  init() {
    const dialog = this.$root as HTMLDialogElement;
    dialog.showModal();
    dialog.addEventListener("close", () => dialog.remove());
  },
  close() {
    (this.$root as HTMLDialogElement).close();
  },
}));

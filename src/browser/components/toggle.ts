import { component, ref } from "../alpine.ts";

/** The "+" buttons: show a small form and put the cursor in it; Escape closes it and returns to the "+". */
export const toggle = component(() => ({
  open: false,
  flip() {
    this.open = !this.open;
    if (this.open)
      this.$nextTick(() => {
        const input = this.$root.querySelector("input");
        if (input) input.focus();
      });
  },
  close(event?: Event) {
    const e = event || this.$event;
    if (!this.open) return;
    e.stopPropagation(); // Escape in the form closes the form, not the drawer around it
    this.open = false;
    ref(this, "button").focus();
  },
  openText() {
    return this.open ? "true" : "false";
  },
}));

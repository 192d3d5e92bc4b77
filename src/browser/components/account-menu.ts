import { component, ref } from "../alpine.ts";

/** The account menu of the top bar (a menu on narrow screens; inline links on wide ones). */
export const accountMenu = component(() => ({
  menuOpen: false,
  toggleMenu() {
    this.menuOpen = !this.menuOpen;
  },
  closeMenu() {
    if (!this.menuOpen) return;
    this.menuOpen = false;
    ref(this, "button").focus();
  },
  dismissMenu() {
    this.menuOpen = false;
  },
  menuClass() {
    return this.menuOpen ? "open" : "";
  },
  menuOpenText() {
    return this.menuOpen ? "true" : "false";
  },
}));

import { component } from "../alpine.ts";

/** The page shell: the sidebar is a drawer on narrow screens. */
export const shell = component(() => ({
  navOpen: false,
  toggleNav() {
    this.navOpen = !this.navOpen;
  },
  closeNav() {
    this.navOpen = false;
  },
  shellClass() {
    return this.navOpen ? "nav-open" : "";
  },
  navOpenText() {
    return this.navOpen ? "true" : "false";
  },
}));

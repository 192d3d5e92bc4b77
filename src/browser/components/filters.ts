import { component, ref } from "../alpine.ts";

/** A feed's filters: the search box, the fields folded under "More filters", and their errors. */
export const filters = component(() => ({
  more: false,
  init() {
    this.more = !!this.$root.querySelector(".filter-more:not([x-cloak])");
    // Date filters are days where the viewer is: the server needs their offset from UTC.
    ref<HTMLInputElement>(this, "tz").value = String(-new Date().getTimezoneOffset());
  },
  toggleMore() {
    this.more = !this.more;
  },
  moreText() {
    return this.more ? "Fewer filters" : "More filters";
  },
  // The URL carries only what was filled in (a link to share), and the time zone only for dates.
  submit(event?: Event) {
    const e = event || this.$event;
    e.preventDefault();
    const form = this.$root as HTMLFormElement;
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form))
      if (typeof value === "string" && value.trim() !== "") params.append(name, value);
    if (!params.has("from") && !params.has("to")) params.delete("tz");
    const url = new URL(form.action);
    url.search = params.toString();
    location.assign(url.href);
  },
  // A line of the error summary: to its field, with the cursor in it.
  focusField(event?: Event) {
    const e = event || this.$event;
    const link = e.currentTarget as HTMLAnchorElement;
    const field = document.getElementById((link.getAttribute("href") ?? "").slice(1));
    if (!field) return;
    e.preventDefault();
    field.focus();
    field.scrollIntoView({ block: "center" });
  },
  // "/" focuses the search box, unless one is already typing somewhere.
  focusSearch(event?: Event) {
    const e = event || this.$event;
    const tag = (document.activeElement && document.activeElement.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    e.preventDefault();
    ref(this, "q").focus();
  },
}));

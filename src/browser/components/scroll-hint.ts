import { component, ref } from "../alpine.ts";

/** A strip that scrolls sideways (the Settings tabs): a fade marks the edge that hides more. */
export const scrollHint = component(() => ({
  start: false,
  end: false,
  init() {
    const strip = ref(this, "strip");
    const current = strip.querySelector<HTMLElement>('[aria-current="page"]');
    if (current && current.offsetLeft + current.offsetWidth > strip.clientWidth)
      strip.scrollLeft = current.offsetLeft - 16;
    this.update();
    strip.addEventListener("scroll", () => this.update(), { passive: true });
    window.addEventListener("resize", () => this.update());
  },
  update() {
    const strip = ref(this, "strip");
    this.start = strip.scrollLeft > 1;
    this.end = strip.scrollLeft + strip.clientWidth < strip.scrollWidth - 1;
  },
  hintClass() {
    return (this.start ? "more-start " : "") + (this.end ? "more-end" : "");
  },
}));

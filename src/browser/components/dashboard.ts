import { component } from "../alpine.ts";

/**
 * A project's dashboard (views/dashboard.ts): its cards are asked again when events arrive, at
 * most every data-refresh-ms (the server answers everyone from one query per card); "Arrange
 * cards" shows the controls to move, add and remove them. After a move the server sends the
 * dashboard back with the moved card's control named in data-focus, which gets the focus.
 */
export const dashboard = component(() => {
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** Cards being asked again, and those asked again meanwhile (asked once more when the answer is in). */
  const asking = new Set<HTMLElement>();
  const again = new Set<HTMLElement>();
  /**
   * Asks a card again. A grid scrolled inside it (retention) is where it was once drawn again, set
   * as the answer is swapped in, before anything reads it. One request a card at a time: a second,
   * asked while the first was on its way, would read the position before the first had set it.
   */
  const redraw = (el: HTMLElement) => {
    const htmx = window.htmx;
    if (!htmx) return;
    if (asking.has(el)) {
      again.add(el);
      return;
    }
    asking.add(el);
    const kept = [...el.querySelectorAll("[data-keep-scroll]")].map((s): [number, number] => [
      s.scrollLeft,
      s.scrollTop,
    ]);
    const restore = () => {
      el.querySelectorAll("[data-keep-scroll]").forEach((s, i) => {
        const at = kept[i];
        if (at) [s.scrollLeft, s.scrollTop] = at;
      });
    };
    el.addEventListener("htmx:afterSwap", restore);
    void htmx.ajax("get", el.dataset.liveUrl!, { target: el, swap: "innerHTML" }).finally(() => {
      el.removeEventListener("htmx:afterSwap", restore);
      asking.delete(el);
      if (again.delete(el) && el.isConnected) redraw(el);
    });
  };
  return {
    arranging: false,
    init() {
      this.arranging = this.$root.dataset.arranging === "1";
      const focus = this.$root.dataset.focus;
      if (!focus) return;
      const byId = (id: string) => document.getElementById(id) as HTMLButtonElement | null;
      const target = byId(focus);
      // At an end the control is disabled: the same card's other move takes the focus, so a
      // second Enter moves that card, never another one.
      const other = /-(up|down)$/.test(focus)
        ? byId(focus.replace(/-(up|down)$/, (_, way) => (way === "up" ? "-down" : "-up")))
        : null;
      const fallback =
        other && !other.disabled ? other : this.$root.querySelector<HTMLElement>(".card-moves button:not([disabled])");
      const focusIt = () => {
        const el =
          target && !target.disabled
            ? target
            : fallback || this.$root.querySelector<HTMLElement>("[data-testid=arrange]");
        if (el) el.focus();
      };
      // Swapped in by htmx, its forms post through htmx only once htmx has processed them (when the
      // swap settles, marked by htmx-added until then): focused before, an Enter would submit the
      // bare form and reload the page instead of moving the card.
      if (this.$root.classList.contains("htmx-added"))
        this.$root.addEventListener("htmx:load", (e) => e.target === this.$root && focusIt());
      else this.$nextTick(focusIt);
    },
    destroy() {
      if (timer) clearTimeout(timer);
    },
    toggleArrange() {
      this.arranging = !this.arranging;
    },
    arrangingText() {
      return this.arranging ? "true" : "false";
    },
    eventsArrived() {
      const every = Number(this.$root.dataset.refreshMs) || 5000;
      const fire = () => {
        timer = null;
        last = Date.now();
        window.dispatchEvent(new CustomEvent("sb-refresh"));
        for (const el of this.$root.querySelectorAll<HTMLElement>("[data-live-url]")) redraw(el);
      };
      if (timer) return;
      const wait = last + every - Date.now();
      if (wait <= 0) fire();
      else timer = setTimeout(fire, wait);
    },
  };
});

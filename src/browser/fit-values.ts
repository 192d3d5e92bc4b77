// Metric values: whole numbers and words, made smaller where they do not fit.

// A value that does not fit its card (a long number in a narrow one) gets smaller until it does,
// down to MIN_VALUE_PX; it is never broken (public/app.css keeps numbers on one line and wraps
// text only between words). Fitted again when the page's width or a value changes.
const MIN_VALUE_PX = 9;

export function fitValues(root?: ParentNode): void {
  for (const el of (root || document).querySelectorAll<HTMLElement>(".metric-value:not(.flag)")) {
    el.style.fontSize = ""; // CSSOM, which the CSP allows (no style attribute)
    if (!el.clientWidth) continue; // folded away: fitted when shown
    let size = parseFloat(getComputedStyle(el).fontSize);
    while (el.scrollWidth > el.clientWidth && size > MIN_VALUE_PX) {
      size = Math.max(MIN_VALUE_PX, Math.floor(size * Math.min(0.95, el.clientWidth / el.scrollWidth)));
      el.style.fontSize = size + "px";
    }
  }
}

/** Values are fitted when the page loads and whenever its width changes. */
export function keepValuesFitted(): void {
  document.addEventListener("DOMContentLoaded", () => fitValues());
  window.addEventListener("resize", () => fitValues());
}

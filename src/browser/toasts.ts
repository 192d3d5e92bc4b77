// Toasts: short messages in the corner, gone after 6 s; and the toasts for htmx requests that fail.

const SHOWN_MS = 6000;
const dismissals = new WeakMap<Element, ReturnType<typeof setTimeout>>();

/** Shows `text` (a link to `href` if given); an error already on screen is not stacked again (it stays up longer instead). */
export function toast(text: string, kind?: string, href?: string): void {
  const box = document.getElementById("toasts");
  if (!box) return;
  const item = document.createElement("div");
  item.className = "toast" + (kind ? " " + kind : "");
  if (kind === "error") {
    const same = [...box.querySelectorAll(".toast.error")].find((el) => el.textContent === text);
    if (same) {
      clearTimeout(dismissals.get(same));
      dismissals.set(
        same,
        setTimeout(() => same.remove(), SHOWN_MS),
      );
      return;
    }
  }
  if (href) {
    const link = document.createElement("a");
    link.href = href;
    link.textContent = text;
    item.appendChild(link);
  } else {
    item.textContent = text;
  }
  box.appendChild(item);
  dismissals.set(
    item,
    setTimeout(() => item.remove(), SHOWN_MS),
  );
}

type HtmxDetail = { xhr?: XMLHttpRequest } | null;
const detail = (e: Event) => (e as CustomEvent<HtmxDetail>).detail;

/** Toasts for failed htmx requests, and for a server's answer that asks for one. */
export function reportFailedRequests(): void {
  window.signalboardToast = toast;
  // A failed htmx request: one toast, whichever events htmx raises for it (a request is reported
  // once), and a message already on screen is not stacked again (its toast stays up longer instead).
  const reported = new WeakSet<XMLHttpRequest>();
  function failed(e: Event, text: string) {
    const xhr = detail(e)?.xhr;
    if (xhr) {
      if (reported.has(xhr)) return;
      reported.add(xhr);
    }
    toast(text, "error");
  }
  document.addEventListener("htmx:responseError", (e) => {
    const xhr = detail(e)?.xhr;
    failed(e, xhr?.responseText || "The request failed.");
  });
  document.addEventListener("htmx:sendError", (e) => failed(e, "Cannot reach the server. Check your connection."));
  // A server's answer may ask for a toast (HX-Trigger: {"sb-toast": {"text": "..."}}).
  document.addEventListener("sb-toast", (e) => {
    const asked = (e as CustomEvent<{ text?: string } | null>).detail;
    if (asked?.text) toast(asked.text, "");
  });
  document.addEventListener("htmx:timeout", (e) => failed(e, "The server took too long to answer. Try again."));
}

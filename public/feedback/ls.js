// Signalboard's feedback widget, LogSnag-compatible: a site loads it with
// <script type="module" src="https://SIGNALBOARD/feedback/ls.js"> and marks a button with
// data-logsnag-feedback (docs/web.md). Plain ES, served as written. The form lives in an open shadow
// root, styled by a constructable stylesheet: the host page's CSS does not reach it, it does not
// reach the page, and a strict style-src needs nothing for it.
const ORIGIN = new URL(import.meta.url).origin;
const LOADED = Symbol.for("signalboard.feedback");

const CSS = `
:host { all: initial; }
dialog { box-sizing: border-box; width: min(26rem, calc(100vw - 2rem)); max-height: calc(100dvh - 2rem); overflow: auto;
  margin: auto; padding: 1.25rem; border: 1px solid #d4d4d8; border-radius: 12px; background: #fff; color: #18181b;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; box-shadow: 0 12px 40px rgb(0 0 0 / .25); }
dialog::backdrop { background: rgb(0 0 0 / .45); }
h2 { margin: 0 0 .75rem; font-size: 1.15rem; }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
label span { font-weight: 400; color: #52525b; }
textarea, input { box-sizing: border-box; width: 100%; padding: .55rem .65rem; border: 1px solid #a1a1aa; border-radius: 8px;
  background: #fff; color: inherit; font: inherit; }
textarea { min-height: 7rem; resize: vertical; }
[aria-invalid="true"] { border-color: #b91c1c; }
.error { margin: .75rem 0 0; color: #b91c1c; }
.error:empty { display: none; }
.actions { display: flex; flex-wrap: wrap; justify-content: flex-end; gap: .5rem; margin-top: 1rem; }
button { min-height: 2.75rem; padding: .5rem 1rem; border: 1px solid #a1a1aa; border-radius: 8px; background: #f4f4f5; color: inherit;
  font: inherit; cursor: pointer; }
button.primary { border-color: #4338ca; background: #4338ca; color: #fff; font-weight: 600; }
button:disabled { opacity: .6; cursor: progress; }
:focus-visible { outline: 3px solid #6366f1; outline-offset: 2px; }
@media (prefers-color-scheme: dark) {
  dialog { border-color: #3f3f46; background: #18181b; color: #f4f4f5; }
  label span { color: #a1a1aa; }
  textarea, input { border-color: #52525b; background: #27272a; }
  button { border-color: #52525b; background: #27272a; }
  button.primary { border-color: #818cf8; background: #818cf8; color: #18181b; }
  [aria-invalid="true"] { border-color: #f87171; }
  .error { color: #fca5a5; }
}`;

let sheet = null;
function style(root) {
  if (typeof CSSStyleSheet === "function" && "replaceSync" in CSSStyleSheet.prototype && "adoptedStyleSheets" in root) {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
    }
    root.adoptedStyleSheets = [sheet];
  } else {
    // Browsers before constructable stylesheets (Safari < 16.4): a strict style-src blocks this one.
    root.append(el("style", {}, CSS));
  }
}

/** An element with attributes and children (text or elements): the page's markup is never parsed. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** What a button asks for: its data-logsnag-* attributes. */
function settingsOf(button) {
  const data = (key) => button.getAttribute(`data-logsnag-${key}`) || undefined;
  const tags = {};
  for (const { name, value } of Array.from(button.attributes)) {
    const key =
      name.toLowerCase().startsWith("data-logsnag-tag-") &&
      name
        .slice(17)
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, "-");
    if (key) tags[key] = value === "true" ? true : value === "false" ? false : value;
  }
  return {
    token: data("token"),
    project: data("project"),
    channel: data("channel") || "feedback",
    userId: data("user-id"),
    notify: data("notify") === "true",
    tags,
  };
}

async function post(settings, text, email) {
  const tags = { ...settings.tags, ...(email ? { email } : {}) };
  const body = {
    project: settings.project,
    channel: settings.channel,
    event: "Feedback",
    icon: "💬",
    description: text,
    user_id: settings.userId,
    notify: settings.notify || undefined,
    tags: Object.keys(tags).length ? tags : undefined,
  };
  let res;
  try {
    res = await fetch(`${ORIGIN}/v1/log`, {
      method: "POST",
      credentials: "omit",
      headers: { Authorization: `Bearer ${settings.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch (_) {
    throw new Error("The feedback server could not be reached. Check your connection and try again.");
  }
  if (res.ok) return;
  let message = `The server answered ${res.status}.`;
  try {
    message = (await res.json()).message || message;
  } catch (_) {}
  throw new Error(message);
}

let open = null;

function openDialog(button) {
  const settings = settingsOf(button);
  const host = el("div", { "data-signalboard-feedback": "" });
  const root = host.attachShadow({ mode: "open" });
  style(root);

  const textBox = el("textarea", { id: "sb-text", name: "text", maxlength: "10000", rows: "5" });
  const emailBox = el("input", {
    id: "sb-email",
    name: "email",
    type: "email",
    autocomplete: "email",
    maxlength: "254",
  });
  const error = el("p", { class: "error", role: "alert" });
  const send = el("button", { type: "submit", class: "primary" }, "Send");
  const cancel = el("button", { type: "button" }, "Cancel");
  const form = el(
    "form",
    { novalidate: "" },
    el("h2", { id: "sb-title" }, "Send feedback"),
    el("label", { for: "sb-text" }, "Your feedback"),
    textBox,
    el("label", { for: "sb-email" }, "E-mail ", el("span", {}, "(optional, if you would like an answer)")),
    emailBox,
    error,
    el("div", { class: "actions" }, cancel, send),
  );
  const dialog = el("dialog", { "aria-labelledby": "sb-title" }, form);
  root.append(dialog);

  let timer = 0;
  const close = () => dialog.open && dialog.close();
  dialog.addEventListener("close", () => {
    clearTimeout(timer);
    host.remove();
    open = null;
    if (button.isConnected) button.focus();
  });
  cancel.addEventListener("click", close);

  const problem = (message, field) => {
    error.textContent = message;
    for (const box of [textBox, emailBox]) box.setAttribute("aria-invalid", String(box === field));
    if (field) field.focus();
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = textBox.value.trim();
    const email = emailBox.value.trim();
    if (!settings.token || !settings.project)
      return problem("This feedback button has no data-logsnag-token or data-logsnag-project.");
    if (!text) return problem("Please write your feedback first.", textBox);
    if (!emailBox.checkValidity()) return problem("Please enter a valid e-mail address, or leave it empty.", emailBox);
    problem("");
    send.disabled = true;
    send.textContent = "Sending…";
    try {
      await post(settings, text, email);
    } catch (failure) {
      send.disabled = false;
      send.textContent = "Send";
      return problem(`Your feedback could not be sent. ${failure.message}`);
    }
    const done = el("button", { type: "button", class: "primary" }, "Close");
    done.addEventListener("click", close);
    form.replaceWith(
      el(
        "div",
        {},
        el("h2", { id: "sb-title" }, "Thank you!"),
        el("p", { role: "status" }, "Your feedback was sent."),
        el("div", { class: "actions" }, done),
      ),
    );
    done.focus();
    timer = setTimeout(close, 4000);
  });

  document.body.append(host);
  dialog.showModal();
  textBox.focus();
  open = dialog;
}

if (!window[LOADED]) {
  window[LOADED] = true;
  // Delegated, so buttons added later work too.
  document.addEventListener("click", (event) => {
    try {
      const button = event
        .composedPath()
        .find((node) => node instanceof Element && node.hasAttribute("data-logsnag-feedback"));
      if (!button || (open && open.isConnected)) return; // one form at a time (unless the page removed it)
      event.preventDefault();
      openDialog(button);
    } catch (error) {
      console.error("[Signalboard feedback]", error);
    }
  });
}

import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { component } from "../alpine.ts";

/** The error shape's message (or a plain one when the answer is not ours). */
async function messageOf(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON: a proxy's page, say
  }
  return `The server answered ${response.status}. Try again.`;
}

/** POSTs the component's hidden fields (its CSRF or form token) and `extra` as a form, and reads JSON. */
async function post(root: HTMLElement, url: string, extra: Record<string, string> = {}): Promise<unknown> {
  const body = new URLSearchParams();
  for (const input of root.querySelectorAll<HTMLInputElement>("input[name]")) body.set(input.name, input.value);
  for (const [name, value] of Object.entries(extra)) body.set(name, value);
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
    body,
  });
  if (!response.ok) throw new Error(await messageOf(response));
  return response.json();
}

/** The browser's own refusal (the person cancelled, no passkey here) in words. */
function wordsFor(error: unknown): string {
  const name = error instanceof Error ? error.name : "";
  if (name === "NotAllowedError") return "No passkey was used (cancelled, or none on this device for this site).";
  if (name === "InvalidStateError") return "This device has a passkey for your account already.";
  return error instanceof Error ? error.message : String(error);
}

/**
 * A passkey's button: adding one in Settings → Account (data-mode="register"), or signing in with
 * one (data-mode="sign_in" alone, "second_step" after the password). data-options and data-action
 * name the routes: the first gives the options for navigator.credentials, the second takes the answer.
 */
export const passkey = component(() => ({
  busy: false,
  error: "",
  get failed() {
    return this.error !== "";
  },
  async run(ceremony: () => Promise<void>) {
    this.busy = true;
    this.error = "";
    try {
      await ceremony();
    } catch (error) {
      this.error = wordsFor(error);
    } finally {
      this.busy = false;
    }
  },
  async register() {
    const { options, action } = this.$root.dataset;
    await this.run(async () => {
      const optionsJSON = (await post(this.$root, options!)) as Parameters<typeof startRegistration>[0]["optionsJSON"];
      const answer = await startRegistration({ optionsJSON });
      const done = (await post(this.$root, action!, { response: JSON.stringify(answer) })) as { next: string };
      window.location.assign(done.next);
    });
  },
  async signIn() {
    const { options, action } = this.$root.dataset;
    await this.run(async () => {
      const optionsJSON = (await post(this.$root, options!)) as Parameters<
        typeof startAuthentication
      >[0]["optionsJSON"];
      const answer = await startAuthentication({ optionsJSON });
      const done = (await post(this.$root, action!, { response: JSON.stringify(answer) })) as { next: string };
      window.location.assign(done.next);
    });
  },
}));

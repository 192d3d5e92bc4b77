import { paths } from "../paths.ts";
import { type Html, html } from "../html.ts";

export function errorPage(status: number, message: string): Html {
  const title =
    status === 404
      ? "Not found"
      : status === 403
        ? "Not allowed"
        : status >= 500
          ? "Something went wrong"
          : "That did not work";
  return html`<section class="auth card error-page">
<h1>${title}</h1>
<p>${message}</p>
<p><a href="${paths.home}">Back to the dashboard</a></p>
</section>`;
}

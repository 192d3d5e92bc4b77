// GitHub: X-Hub-Signature-256 is "sha256=" and the HMAC-SHA256 of the raw body with the webhook's
// secret. The event's name is X-GitHub-Event and the payload's action (push, release.published,
// workflow_run.completed, issues.opened, pull_request.closed); each delivery is stored once by
// X-GitHub-Delivery. GitHub's ping (sent when a webhook is made) is answered and records nothing.
import { z } from "zod";
import { BadRequest, ValidationError } from "../../errors.ts";
import { LIMITS } from "../input-fields.ts";
import { at, defineHookKind, eventName, fit, hmacHex, markdownText, markdownUrl, sameDigest, tagsOf } from "./kind.ts";

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

/** The branch a payload is about: a push's ref, a run's head branch, a pull request's head. */
function branchOf(body: unknown): string | undefined {
  const ref = str(at(body, "ref"));
  if (ref?.startsWith("refs/heads/")) return ref.slice("refs/heads/".length);
  return (
    str(at(body, "workflow_run.head_branch")) ??
    str(at(body, "check_suite.head_branch")) ??
    str(at(body, "check_run.check_suite.head_branch")) ??
    str(at(body, "pull_request.head.ref")) ??
    str(at(body, "release.target_commitish"))
  );
}

/** What the event is about, in a line or a few, with its link. */
function describe(event: string, body: unknown): string | undefined {
  // Titles and commit messages are anyone's words (an issue on a public repository): shown as text.
  const text = (value: unknown) => (str(value) === undefined ? undefined : markdownText(fit(value, 300)!));
  const link = (title: unknown, url: unknown) =>
    str(url) ? `[${text(str(title) ?? url)}](${markdownUrl(str(url)!)})` : text(title);
  switch (event) {
    case "push": {
      const commits = (at(body, "commits") as { message?: unknown }[] | undefined) ?? [];
      const lines = Array.isArray(commits)
        ? commits.slice(0, 20).map((c) => `- ${markdownText(fit(str(c?.message)?.split("\n")[0] ?? "", 200)!)}`)
        : [];
      return [link(str(at(body, "compare")) ? "Compare" : undefined, at(body, "compare")), ...lines]
        .filter(Boolean)
        .join("\n");
    }
    case "release":
      return link(at(body, "release.name") ?? at(body, "release.tag_name"), at(body, "release.html_url"));
    case "workflow_run":
      return link(
        `${str(at(body, "workflow_run.name")) ?? "workflow"}: ${str(at(body, "workflow_run.conclusion")) ?? str(at(body, "workflow_run.status")) ?? ""}`,
        at(body, "workflow_run.html_url"),
      );
    case "issues":
      return link(at(body, "issue.title"), at(body, "issue.html_url"));
    case "pull_request":
      return link(at(body, "pull_request.title"), at(body, "pull_request.html_url"));
    default:
      return link(at(body, "repository.full_name"), at(body, "repository.html_url"));
  }
}

export const github = defineHookKind({
  label: "GitHub",
  defaultChannel: "github",
  secret: "required",
  config: z.object({}).strict(),
  verify(d, secret) {
    const given = d.headers.get("x-hub-signature-256");
    if (!given)
      return "The X-Hub-Signature-256 header is missing: set this hook's secret as the webhook's secret in GitHub.";
    if (!given.startsWith("sha256=")) return 'The X-Hub-Signature-256 header must start with "sha256=".';
    if (sameDigest(hmacHex(secret ?? "", d.body), given.slice("sha256=".length))) return null;
    return "The X-Hub-Signature-256 signature does not match: check that this hook's secret is the webhook's secret.";
  },
  events(body, d) {
    // GitHub sends both with every delivery: without them there is no name, and nothing to store it once by.
    const event = d.headers.get("x-github-event");
    if (!event) throw new BadRequest("The X-GitHub-Event header is missing: GitHub names each delivery's event in it.");
    const delivery = d.headers.get("x-github-delivery");
    if (!delivery)
      throw new BadRequest("The X-GitHub-Delivery header is missing: GitHub sends each delivery's id in it.");
    if (body === null || typeof body !== "object" || Array.isArray(body))
      throw ValidationError.field(
        "",
        "invalid_github",
        "The body must be the JSON object of GitHub's webhook payload.",
      );
    if (event === "ping") return [];
    const action = str(at(body, "action"));
    const conclusion =
      str(at(body, "workflow_run.conclusion")) ??
      str(at(body, "check_run.conclusion")) ??
      str(at(body, "check_suite.conclusion")) ??
      str(at(body, "workflow_job.conclusion"));
    const merged = at(body, "pull_request.merged");
    return [
      {
        key: `github:${delivery}`,
        input: {
          channel: "",
          event: eventName(action ? `${event}.${action}` : event, "github event"),
          description: fit(describe(event, body), LIMITS.description),
          parser: "markdown",
          icon: conclusion === "failure" ? "❌" : "🐙",
          tags: tagsOf([
            ["repository", str(at(body, "repository.full_name"))],
            ["branch", branchOf(body)],
            ["actor", str(at(body, "sender.login")) ?? str(at(body, "pusher.name"))],
            ["conclusion", conclusion],
            ["merged", typeof merged === "boolean" ? merged : undefined],
            ["tag", str(at(body, "release.tag_name"))],
          ]),
        },
      },
    ];
  },
});

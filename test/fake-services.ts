// Protocol-faithful stand-ins for the services integrations send to, which cannot be reached from
// here: Telegram's Bot API, Gotify, Pushover and a Matrix homeserver, on one local HTTP server.
// Each checks the method, path, authentication and body the way the service documents them and
// answers as it does (its error shapes included), so a request the real service would refuse is
// refused here too. What each one would show is kept for tests: Telegram's text after parsing its
// HTML (refused, as Telegram does, when the markup is not what it accepts), Matrix's events (one
// per transaction id, as a homeserver keeps them), Gotify's and Pushover's messages.
//   core.telegram.org/bots/api#sendmessage · gotify.net/api-docs · pushover.net/api ·
//   spec.matrix.org/latest/client-server-api/#put_matrixclientv3roomsroomidsendeventtypetxnid

export type TelegramMessage = { chatId: string; text: string; html: string; silent: boolean; links: string[] };
export type GotifyMessage = { token: string; title: string; message: string; priority: number; extras: unknown };
export type PushoverMessage = {
  user: string;
  title: string;
  message: string;
  priority: number;
  url: string;
  retry?: number;
  expire?: number;
};
export type MatrixEvent = {
  roomId: string;
  txnId: string;
  token: string;
  content: { msgtype: string; body: string; format?: string; formatted_body?: string };
};

const TELEGRAM_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "a",
  "code",
  "pre",
  "blockquote",
  "tg-spoiler",
  "span",
  "tg-emoji",
]);

/** Telegram's HTML style: its tags only, nested and closed; entities &lt; &gt; &amp; &quot; and numeric ones. The text shown, or why it cannot be parsed. */
export function parseTelegramHtml(html: string): { text: string; links: string[] } | { error: string } {
  const open: string[] = [];
  const links: string[] = [];
  let text = "";
  const token =
    /<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w-]+(?:="[^"]*"|='[^']*')?)*)\s*>|&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);|([<>&])|([^<>&]+)/gy;
  let m: RegExpExecArray | null;
  while ((m = token.exec(html))) {
    const [, closing, tag, attrs, entity, bare, plain] = m;
    if (plain !== undefined) text += plain;
    else if (bare !== undefined)
      return { error: `Bad Request: can't parse entities: Character '${bare}' is reserved and must be escaped` };
    else if (entity !== undefined) {
      const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };
      if (entity.startsWith("#"))
        text += String.fromCodePoint(entity[1] === "x" ? parseInt(entity.slice(2), 16) : Number(entity.slice(1)));
      else if (named[entity]) text += named[entity];
      else return { error: `Bad Request: can't parse entities: Unsupported entity "&${entity};"` };
    } else {
      const name = tag!.toLowerCase();
      if (!TELEGRAM_TAGS.has(name))
        return { error: `Bad Request: can't parse entities: Unsupported start tag "${name}"` };
      if (closing) {
        if (open.pop() !== name) return { error: `Bad Request: can't parse entities: Unexpected end tag "${name}"` };
      } else {
        open.push(name);
        if (name === "a") {
          const href = /href="([^"]*)"/.exec(attrs ?? "")?.[1];
          if (href === undefined) return { error: "Bad Request: can't parse entities: a tag without href" };
          links.push(
            href
              .replace(/&amp;/g, "&")
              .replace(/&quot;/g, '"')
              .replace(/&lt;/g, "<")
              .replace(/&gt;/g, ">"),
          );
        }
      }
    }
  }
  if (token.lastIndex !== 0 && token.lastIndex < html.length) return { error: "Bad Request: can't parse entities" };
  if (open.length)
    return {
      error: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${open.at(-1)}"`,
    };
  return { text, links };
}

export async function startFakeServices() {
  const telegram = {
    tokens: new Set<string>(),
    chats: new Set<string>(),
    messages: [] as TelegramMessage[],
    refused: [] as string[],
  };
  const gotify = { tokens: new Set<string>(), messages: [] as GotifyMessage[] };
  const pushover = {
    apps: new Set<string>(),
    users: new Set<string>(),
    messages: [] as PushoverMessage[],
    refused: [] as unknown[],
  };
  const matrix = {
    tokens: new Map<string, string>(),
    rooms: new Map<string, Set<string>>(),
    events: [] as MatrixEvent[],
    byTxn: new Map<string, string>(),
  };
  /** Statuses to answer the next requests of a service with, before answering normally. */
  const failures: Record<
    "telegram" | "gotify" | "pushover" | "matrix",
    { status: number; headers?: Record<string, string> }[]
  > = { telegram: [], gotify: [], pushover: [], matrix: [] };
  const json = (body: unknown, status = 200) => Response.json(body, { status });

  function failing(service: keyof typeof failures): Response | null {
    const next = failures[service].shift();
    return next
      ? new Response(JSON.stringify({ ok: false, error_code: next.status, description: "as told" }), {
          status: next.status,
          headers: { "Content-Type": "application/json", ...next.headers },
        })
      : null;
  }

  async function sendMessage(request: Request, token: string): Promise<Response> {
    if (!telegram.tokens.has(token)) return json({ ok: false, error_code: 401, description: "Unauthorized" }, 401);
    if (!request.headers.get("content-type")?.startsWith("application/json"))
      return json({ ok: false, error_code: 400, description: "Bad Request: message text is empty" }, 400);
    const body = (await request.json()) as Record<string, unknown>;
    const chatId = String(body.chat_id ?? "");
    if (!telegram.chats.has(chatId))
      return json({ ok: false, error_code: 400, description: "Bad Request: chat not found" }, 400);
    if (typeof body.text !== "string" || !body.text.trim())
      return json({ ok: false, error_code: 400, description: "Bad Request: message text is empty" }, 400);
    const parsed =
      body.parse_mode === "HTML"
        ? parseTelegramHtml(body.text)
        : body.parse_mode === undefined
          ? { text: body.text, links: [] }
          : { error: `Bad Request: unsupported parse_mode ${String(body.parse_mode)} in this fake` };
    if ("error" in parsed) {
      telegram.refused.push(parsed.error);
      return json({ ok: false, error_code: 400, description: parsed.error }, 400);
    }
    if (parsed.text.length > 4096)
      return json({ ok: false, error_code: 400, description: "Bad Request: message is too long" }, 400);
    telegram.messages.push({
      chatId,
      text: parsed.text,
      html: body.text,
      silent: body.disable_notification === true,
      links: parsed.links,
    });
    return json({
      ok: true,
      result: {
        message_id: telegram.messages.length,
        chat: { id: Number(chatId) || chatId },
        date: Math.floor(Date.now() / 1000),
        text: parsed.text,
      },
    });
  }

  async function gotifyMessage(request: Request, url: URL): Promise<Response> {
    const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const token = request.headers.get("x-gotify-key") ?? url.searchParams.get("token") ?? bearer ?? "";
    if (!gotify.tokens.has(token))
      return json(
        {
          error: "Unauthorized",
          errorCode: 401,
          errorDescription: "you need to provide a valid access token or user credentials to access this api",
        },
        401,
      );
    const body = (await request.json().catch(() => null)) as Record<string, unknown> | null;
    if (!body || typeof body.message !== "string" || !body.message)
      return json({ error: "Bad Request", errorCode: 400, errorDescription: "Field 'message' is required" }, 400);
    if (
      body.priority !== undefined &&
      (!Number.isInteger(body.priority) || (body.priority as number) < 0 || (body.priority as number) > 10)
    )
      return json(
        { error: "Bad Request", errorCode: 400, errorDescription: "priority must be 0-10 in this fake" },
        400,
      );
    gotify.messages.push({
      token,
      title: String(body.title ?? ""),
      message: body.message,
      priority: (body.priority as number) ?? 0,
      extras: body.extras,
    });
    return json({
      id: gotify.messages.length,
      appid: 1,
      message: body.message,
      title: body.title ?? "",
      priority: body.priority ?? 0,
      date: new Date().toISOString(),
    });
  }

  async function pushoverMessage(request: Request): Promise<Response> {
    const type = request.headers.get("content-type") ?? "";
    const fields: Record<string, string> = type.startsWith("application/json")
      ? ((await request.json()) as Record<string, string>)
      : Object.fromEntries(new URLSearchParams(await request.text()));
    const refuse = (errors: string[], extra: Record<string, string>) => {
      pushover.refused.push(errors);
      return json({ ...extra, errors, status: 0, request: crypto.randomUUID() }, 400);
    };
    if (!pushover.apps.has(fields.token ?? "")) return refuse(["application token is invalid"], { token: "invalid" });
    if (!pushover.users.has(fields.user ?? ""))
      return refuse(["user identifier is not a valid user, group, or subscribed user key"], { user: "invalid" });
    if (!fields.message) return refuse(["message cannot be blank"], { message: "cannot be blank" });
    if (fields.message.length > 1024) return refuse(["message is too long"], { message: "is too long" });
    if ((fields.title ?? "").length > 250) return refuse(["title is too long"], { title: "is too long" });
    if ((fields.url ?? "").length > 512) return refuse(["url is too long"], { url: "is too long" });
    const priority = Number(fields.priority ?? 0);
    if (!Number.isInteger(priority) || priority < -2 || priority > 2)
      return refuse(["priority is invalid"], { priority: "invalid" });
    if (priority === 2 && !(Number(fields.retry) >= 30 && Number(fields.expire) > 0 && Number(fields.expire) <= 10800))
      return refuse(["retry and expire are required with emergency priority"], { retry: "invalid" });
    pushover.messages.push({
      user: fields.user!,
      title: fields.title ?? "",
      message: fields.message,
      priority,
      url: fields.url ?? "",
      retry: fields.retry ? Number(fields.retry) : undefined,
      expire: fields.expire ? Number(fields.expire) : undefined,
    });
    return json({
      status: 1,
      request: crypto.randomUUID(),
      ...(priority === 2 ? { receipt: crypto.randomUUID().replace(/-/g, "").slice(0, 30) } : {}),
    });
  }

  async function matrixSend(request: Request, roomId: string, txnId: string): Promise<Response> {
    const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (!token) return json({ errcode: "M_MISSING_TOKEN", error: "Missing access token" }, 401);
    const user = matrix.tokens.get(token);
    if (!user) return json({ errcode: "M_UNKNOWN_TOKEN", error: "Unknown access token" }, 401);
    if (!matrix.rooms.get(roomId)?.has(user))
      return json({ errcode: "M_FORBIDDEN", error: `User ${user} not in room ${roomId}` }, 403);
    const content = (await request.json().catch(() => null)) as MatrixEvent["content"] | null;
    if (!content || typeof content.msgtype !== "string" || typeof content.body !== "string")
      return json({ errcode: "M_BAD_JSON", error: "msgtype and body are required" }, 400);
    if (
      content.format !== undefined &&
      (content.format !== "org.matrix.custom.html" || typeof content.formatted_body !== "string")
    )
      return json({ errcode: "M_BAD_JSON", error: "format must be org.matrix.custom.html with formatted_body" }, 400);
    const key = `${token} ${txnId}`;
    const known = matrix.byTxn.get(key);
    if (known) return json({ event_id: known }); // the same transaction again: the same event, not a second one
    const eventId = `$${crypto.randomUUID()}`;
    matrix.byTxn.set(key, eventId);
    matrix.events.push({ roomId, txnId, token, content });
    return json({ event_id: eventId });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const tg = /^\/bot([^/]+)\/sendMessage$/.exec(url.pathname);
      if (tg) {
        if (request.method !== "POST" && request.method !== "GET")
          return json({ ok: false, error_code: 405, description: "Method Not Allowed" }, 405);
        return failing("telegram") ?? sendMessage(request, tg[1]!);
      }
      if (url.pathname === "/message") {
        if (request.method !== "POST") return json({ error: "Not Found", errorCode: 404 }, 404);
        return failing("gotify") ?? gotifyMessage(request, url);
      }
      if (url.pathname === "/1/messages.json") {
        if (request.method !== "POST") return json({ status: 0, errors: ["method not allowed"] }, 405);
        return failing("pushover") ?? pushoverMessage(request);
      }
      const mx = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/.exec(url.pathname);
      if (mx) {
        if (request.method !== "PUT") return json({ errcode: "M_UNRECOGNIZED", error: "Unrecognized request" }, 405);
        return failing("matrix") ?? matrixSend(request, decodeURIComponent(mx[1]!), decodeURIComponent(mx[2]!));
      }
      return json({ error: "not found" }, 404);
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    telegram,
    gotify,
    pushover,
    matrix,
    failures,
    /** A Matrix user with this access token, joined to this room. */
    joinMatrix(token: string, user: string, roomId: string): void {
      matrix.tokens.set(token, user);
      if (!matrix.rooms.has(roomId)) matrix.rooms.set(roomId, new Set());
      matrix.rooms.get(roomId)!.add(user);
    },
    stop: () => void server.stop(true),
  };
}

export type FakeServices = Awaited<ReturnType<typeof startFakeServices>>;

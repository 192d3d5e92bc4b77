// Stripe: the Stripe-Signature header (t=<unix seconds>,v1=<hex>[,v1=...]) is HMAC-SHA256 of
// "<t>.<raw body>" with the endpoint's signing secret (whsec_...); any v1 may match (Stripe sends
// two while a secret is rolled), and t must be within five minutes of our clock. Each event is named
// by its type (invoice.paid), stored once by its id (evt_...).
import { z } from "zod";
import { ValidationError } from "../../errors.ts";
import { LIMITS } from "../input-fields.ts";
import { at, defineHookKind, eventName, fit, hmacHex, sameDigest, tagsOf } from "./kind.ts";

export const STRIPE_TOLERANCE_SECONDS = 300;

/** Currencies Stripe counts in whole units (its docs' zero-decimal list), and those in thousandths. */
const ZERO_DECIMAL = new Set("bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf".split(" "));
const THREE_DECIMAL = new Set("bhd jod kwd omr tnd".split(" "));

/** An amount in the currency's main unit (1999 USD cents → 19.99; 500 JPY → 500). */
export function mainUnit(amount: number, currency: string): number {
  const c = currency.toLowerCase();
  const divisor = ZERO_DECIMAL.has(c) ? 1 : THREE_DECIMAL.has(c) ? 1000 : 100;
  return amount / divisor;
}

/** Where an object is shown in Stripe's dashboard, by its type; unknown types link to the event. */
const DASHBOARD_PATH: Record<string, string> = {
  payment_intent: "payments",
  charge: "payments",
  invoice: "invoices",
  customer: "customers",
  subscription: "subscriptions",
  product: "products",
  price: "prices",
  refund: "refunds",
  payout: "payouts",
  dispute: "disputes",
  coupon: "coupons",
  checkout_session: "checkout/sessions",
};

const AMOUNT_FIELDS = ["amount_paid", "amount_total", "amount", "amount_due", "amount_refunded"];
/** A refund's events (charge.refunded, charge.refund.updated) are about what was refunded, not the charge's whole amount. */
const REFUND_AMOUNT_FIELDS = ["amount_refunded", ...AMOUNT_FIELDS];

function verify(header: string | null, body: Uint8Array, secret: string, now: number): string | null {
  if (!header) return "The Stripe-Signature header is missing: this URL takes only deliveries signed by Stripe.";
  let t: string | null = null;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const [k, v] = part.trim().split("=", 2);
    if (k === "t" && v) t = v;
    if (k === "v1" && v) v1.push(v);
  }
  if (t === null || !/^\d{1,12}$/.test(t) || !v1.length)
    return "The Stripe-Signature header has no timestamp (t=) or no v1 signature.";
  if (Math.abs(now / 1000 - Number(t)) > STRIPE_TOLERANCE_SECONDS)
    return `The Stripe-Signature timestamp is more than ${STRIPE_TOLERANCE_SECONDS / 60} minutes from this server's clock: a replayed delivery, or a clock that is wrong.`;
  const expected = hmacHex(secret, `${t}.`, body);
  if (v1.some((s) => sameDigest(expected, s))) return null;
  return "The Stripe-Signature does not match: check that this hook's secret is the endpoint's signing secret (whsec_...).";
}

export const stripe = defineHookKind({
  label: "Stripe",
  defaultChannel: "stripe",
  secret: "required",
  config: z.object({}).strict(),
  verify: (d, secret) => verify(d.headers.get("stripe-signature"), d.body, secret ?? "", d.now),
  events(body) {
    const type = at(body, "type");
    const id = at(body, "id");
    // Every event Stripe sends has both: without them there is nothing to name it by or to store it once by.
    if (typeof id !== "string" || id === "")
      throw ValidationError.field("id", "invalid_stripe", "id: must be the Stripe event's id (evt_...)");
    if (typeof type !== "string" || type === "")
      throw ValidationError.field(
        "type",
        "invalid_stripe",
        "type: must be the Stripe event's type, such as invoice.paid",
      );
    const object = at(body, "data.object");
    const objectType = at(object, "object");
    const objectId = at(object, "id");
    const live = at(body, "livemode") === true;
    const currency = at(object, "currency");
    const fields = typeof type === "string" && /\.refund/.test(type) ? REFUND_AMOUNT_FIELDS : AMOUNT_FIELDS;
    const amountField = fields.find((f) => typeof at(object, f) === "number");
    const amount =
      amountField && typeof currency === "string" ? mainUnit(at(object, amountField) as number, currency) : undefined;
    const customer = objectType === "customer" ? objectId : at(object, "customer");
    const path = typeof objectType === "string" ? DASHBOARD_PATH[objectType.replace(".", "_")] : undefined;
    const base = `https://dashboard.stripe.com/${live ? "" : "test/"}`;
    const link =
      path && typeof objectId === "string"
        ? `${base}${path}/${encodeURIComponent(objectId)}`
        : `${base}events/${encodeURIComponent(id)}`;
    const what = [objectType, objectId].filter((s) => typeof s === "string").join(" ");
    const amountText = amount !== undefined ? ` · ${amount} ${String(currency).toUpperCase()}` : "";
    const description = link ? `[${what || "The event"}](${link}) in Stripe's dashboard${amountText}` : undefined;
    return [
      {
        key: `stripe:${id}`,
        input: {
          channel: "",
          event: eventName(type, "stripe event"),
          description: fit(description, LIMITS.description),
          parser: "markdown",
          icon: "💳",
          tags: tagsOf([
            ["customer", typeof customer === "string" ? customer : undefined],
            ["amount", amount],
            ["currency", typeof currency === "string" ? currency.toLowerCase() : undefined],
            ["livemode", live],
          ]),
        },
      },
    ];
  },
});

// Reads the google.rpc.Status an OTLP export's error answers in protobuf, with protobufjs's own
// reflection from the messages' definitions (google/rpc/status.proto, error_details.proto, any.proto).
import protobuf from "protobufjs";

const root = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: "int32", id: 1 },
                message: { type: "string", id: 2 },
                details: { rule: "repeated", type: "google.protobuf.Any", id: 3 },
              },
            },
            ErrorInfo: {
              fields: {
                reason: { type: "string", id: 1 },
                domain: { type: "string", id: 2 },
              },
            },
          },
        },
        protobuf: {
          nested: { Any: { fields: { type_url: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } } },
        },
      },
    },
  },
});
const Status = root.lookupType("google.rpc.Status");
const ErrorInfo = root.lookupType("google.rpc.ErrorInfo");

/** The Status in an error's body: its message, and its ErrorInfo's reason (the API's error code). */
export async function otlpStatus(
  response: Response,
): Promise<{ message: string; error: string | null; domain: string | null }> {
  expect(response.headers.get("content-type")).toBe("application/x-protobuf");
  const status = Status.decode(new Uint8Array(await response.arrayBuffer())) as unknown as {
    message: string;
    details: { type_url: string; value: Uint8Array }[];
  };
  const info = status.details.find((d) => d.type_url === "type.googleapis.com/google.rpc.ErrorInfo");
  const decoded = info ? (ErrorInfo.decode(info.value) as unknown as { reason: string; domain: string }) : null;
  return { message: status.message, error: decoded?.reason ?? null, domain: decoded?.domain ?? null };
}

import { expect } from "bun:test";

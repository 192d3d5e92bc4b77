import type { DeviceSummary } from "../domain/device-admin.ts";
import {
  type Command,
  configFrom,
  managementOptions,
  parse,
  table,
  UsageError,
  when,
  withServices,
} from "./command.ts";

export const device: Command = {
  summary: "list or remove the devices that get push notifications",
  usage: "signalboard device list | device remove ID",
  async run(argv) {
    const { values, positionals } = parse(argv, { ...managementOptions });
    const [action, id, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (action === "remove" && id !== undefined && !/^\d{1,15}$/.test(id))
      throw new UsageError(`device remove takes a device's id (a number that device list shows), got "${id}"`);
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ deviceAdmin: devices }) => {
      if (action === "list" && id === undefined) {
        const rows = (await devices.list()).map((d) => [
          String(d.id),
          printable(d.username),
          printable(d.deviceName),
          d.pushService,
          when(d.createdAt),
          when(d.lastSuccessAt),
          lastError(d),
        ]);
        console.log(
          table([["ID", "USER", "DEVICE", "PUSH SERVICE", "CREATED", "LAST SUCCESS", "LAST ERROR"], ...rows]),
        );
        return 0;
      }
      if (action === "remove" && id !== undefined) {
        const removed = await devices.remove(Number(id));
        console.log(
          `Removed device ${removed.id} "${printable(removed.deviceName)}" of ${printable(removed.username)} (push service ${removed.pushService}); it gets no more notifications.`,
        );
        return 0;
      }
      throw new UsageError("expected list or remove ID");
    });
  },
};

function lastError(d: DeviceSummary): string {
  return d.lastErrorAt ? `${when(d.lastErrorAt)} ${printable(d.lastError ?? "")}`.trimEnd() : "-";
}

/** A device's name is typed by a dashboard user: control characters would reach the operator's terminal. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}

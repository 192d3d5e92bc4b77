import { setLogLevel } from "../logger.ts";
import { startServer } from "../server.ts";
import { type Command, configFrom, parse, UsageError } from "./command.ts";

export const serve: Command = {
  summary: "run the server (the default command)",
  usage: "signalboard serve [--port N] [--host H] [--data-dir DIR] [...settings]",
  async run(argv) {
    const { values, positionals } = parse(argv, {});
    // A stray word must not go unnoticed: the server would start instead of what was meant.
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}": serve takes only settings`);
    const config = configFrom(values);
    setLogLevel(config.logLevel);
    const running = await startServer(config);
    const shutdown = () => {
      setTimeout(() => process.exit(1), 4800).unref(); // a last resort; stop() finishes well before
      void running.stop().then(() => process.exit(0));
    };
    process.once("SIGTERM", shutdown);
    process.once("SIGINT", shutdown);
    return new Promise<number>(() => {}); // runs until a signal
  },
};

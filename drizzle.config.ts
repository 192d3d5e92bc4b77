import { defineConfig } from "drizzle-kit";

// drizzle-kit is used only to generate SQL migrations from src/store/sqlite/schema.ts; the server applies
// them itself at start (src/store/sqlite/migrate.ts), from copies embedded in the binary.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/sqlite/schema.ts",
  out: "./drizzle/sqlite",
});

import { defineConfig } from "drizzle-kit";

// drizzle-kit is used only to generate SQL migrations from src/store/schema.ts; the server applies
// them itself at start (src/store/migrate.ts), from copies embedded in the binary.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/schema.ts",
  out: "./drizzle",
});

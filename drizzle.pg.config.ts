import { defineConfig } from "drizzle-kit";

// The PostgreSQL migrations, generated from src/store/pg/schema.ts into drizzle/pg/; the server
// applies them itself at start (src/store/pg/migrate.ts), from copies embedded in the binary.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/pg/schema.ts",
  out: "./drizzle/pg",
});

// Imported `with { type: "file" }` by src/web/site-scripts.ts: the import is the file's path.
declare const path: string;
export default path;

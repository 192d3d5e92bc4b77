// The version, from package.json: the one number `signalboard version`, /healthz, the dashboard's
// foot and install.sh's backups show. CHANGELOG.md says what each brought.
import pkg from "../package.json";

export const VERSION: string = pkg.version;

// `npm run check:client`: the client package installed the way a user outside this repository
// installs it (packed, into an empty folder), type-checked and run (scripts/lib/client-package.mjs).
import { checkClientPackage } from "./lib/client-package.mjs";

try {
  await checkClientPackage();
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
}

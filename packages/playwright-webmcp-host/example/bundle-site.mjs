// Run by `npm pack` (the package's `prepack`): copies the repository's demo shop into
// example/site, so that the packed example serves its own site outside the repository.
import { cp, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../../../demo/site', import.meta.url));
const to = fileURLToPath(new URL('./site', import.meta.url));
if (!(await stat(from).catch(() => null))) throw new Error(`no demo shop at ${from}: pack the package from its repository`);
await rm(to, { recursive: true, force: true });
await cp(from, to, { recursive: true });

// The hostcore binary the tests drive and the temporary directories they
// make, shared by every test file here. The binary is HOSTCORE_BIN, or
// hostcore built from the repository root with go build.
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
/** @type {string[]} */
const dirs = [];

/**
 * tempDir makes a directory (its real path) that removeTempDirs removes.
 * @param {string} prefix
 */
export function tempDir(prefix) {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

/** removeTempDirs removes every directory tempDir made. */
export function removeTempDirs() {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** hostcoreBinary is HOSTCORE_BIN, or hostcore built now into a temporary directory. */
export function hostcoreBinary() {
  const given = process.env.HOSTCORE_BIN;
  if (given) return given;
  const bin = join(tempDir("hostcore-bin-"), "hostcore");
  execFileSync("go", ["build", "-o", bin, "."], { cwd: repoRoot, stdio: "inherit" });
  return bin;
}

// Compiles AssemblyScript guests in process with asc's API, for the SDK's
// own tests (a plugin project tests its built .wasm instead).

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The SDK's directory (sdk/assemblyscript). */
export const sdkDir = path.dirname(here);

/**
 * Compiles an AssemblyScript entry file in process with the SDK's build
 * options and returns the WebAssembly.Module. runtime defaults to the
 * SDK's (minimal), optimize to the release level.
 */
export async function compile(entry, { runtime = "minimal", optimize = "-O3z" } = {}) {
  const asc = await import("assemblyscript/asc");
  const out = {};
  const abortFn = path.relative(path.dirname(entry), path.join(sdkDir, "assembly", "abort")) + "/corralAbort";
  const { error, stderr } = await asc.main(
    [path.basename(entry), "--outFile", "out.wasm", "--runtime", runtime, "--exportStart", "_initialize", optimize, "--use", "abort=" + abortFn],
    {
      readFile: async (name, baseDir) => {
        try {
          return await readFile(path.resolve(path.dirname(entry), baseDir, name), "utf8");
        } catch {
          return null;
        }
      },
      writeFile: (name, contents) => {
        out[name] = contents;
      },
      listFiles: () => [],
      stderr: { write: () => true },
      stdout: { write: () => true },
    },
  );
  if (error) throw new Error(`asc ${entry}: ${error.message}\n${stderr}`);
  return WebAssembly.compile(out["out.wasm"]);
}

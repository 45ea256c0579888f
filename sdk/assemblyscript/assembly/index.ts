// The corral guest SDK for AssemblyScript: a plugin registers what it
// serves on a Plugin, hands it to serve(), and re-exports the three ABI
// functions from its entry file:
//
//   import { Plugin, ReadRequest, ReadResponse, serve } from "./corral/index";
//   export { corral_abi_v1, corral_buffer, corral_call } from "./corral/index";
//
//   const p = new Plugin("hello", "1.0.0").scheme("hello");
//   p.resource({ uri: "hello://world", name: "world" }, (req: ReadRequest, res: ReadResponse): void => {
//     res.text(req.uri, "hi");
//   });
//   serve(p);
//
// Build with the minimal runtime (see asconfig.json): the SDK frees the
// previous call's garbage at the start of every call and encodes into
// reused buffers, so a pooled instance does not grow from call to call.

import { Writer } from "./json";
import { hostSetResult } from "./host";
import { Plugin } from "./plugin";

export * from "./abort";
export * from "./json";
export * from "./base64";
export * from "./host";
export * from "./manifest";
export * from "./request";
export * from "./plugin";

/** The ABI minor this SDK is written against (abi/ABI.md §2). */
export const ABI_MINOR = 4;

let served: Plugin | null = null;
// The manifest, encoded once by serve.
const manifest = new Writer();
// The registration mistakes, encoded once as the error every call answers.
const broken = new Writer();
// The response of the current call.
const out = new Writer();
// The request buffer handed to the host (abi/ABI.md §5). A global keeps it
// reachable; the collector never moves it.
let request = new ArrayBuffer(0);

/**
 * Makes p the plugin this module serves. Call it once, at the top level of
 * the module, after registering everything.
 */
export function serve(p: Plugin): void {
  served = p;
  const errs = p.errors();
  manifest.reset();
  broken.reset();
  if (errs.length > 0) {
    broken.byte(0x7b).key("code", true).str("internal");
    broken.key("message").str("corral: plugin " + p.name + ": " + errs.join("; ")).byte(0x7d);
    return;
  }
  p.writeManifest(manifest);
}

/** The version marker export: the ABI minor. */
export function corral_abi_v1(): i32 {
  return ABI_MINOR;
}

// @ts-ignore: decorator
@inline const MIN_REQUEST = 4096;
// @ts-ignore: decorator
@inline const MAX_REQUEST: u32 = 1 << 30;

/** Returns the request buffer, of at least size bytes, or 0. */
export function corral_buffer(size: u32): usize {
  if (size > MAX_REQUEST) return 0;
  if (<u32>request.byteLength < size || request.byteLength == 0) {
    request = new ArrayBuffer(<i32>max(size, MIN_REQUEST));
  }
  return changetype<usize>(request);
}

/** Handles one operation whose request is the buffer's first len bytes. */
export function corral_call(op: i32, len: u32): i32 {
  // Nothing of the previous call is referenced any more but from globals:
  // free it before this call allocates.
  __collect();
  let st: i32;
  const p = served;
  if (len > <u32>request.byteLength) {
    out.reset().raw('{"code":"invalid_params","message":"corral: request length outside the buffer"}');
    st = 1;
  } else if (p == null) {
    out.reset().raw('{"code":"internal","message":"corral: no plugin served (call serve at the top level)"}');
    st = 1;
  } else if (broken.len > 0) {
    out.reset().bytes(broken.ptr, broken.len);
    st = 1;
  } else if (op == 1) {
    out.reset().bytes(manifest.ptr, manifest.len);
    st = 0;
  } else {
    st = p.handle(op, changetype<usize>(request), len, out);
  }
  hostSetResult(out.ptr, out.len);
  return st;
}

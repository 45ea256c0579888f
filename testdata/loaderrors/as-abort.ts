// as-abort.ts: an AssemblyScript guest built without `--use abort=`: asc
// then imports env.abort, which no WASI host provides.
@external("corral_v1", "set_result")
declare function set_result(ptr: usize, len: u32): void;

const buf = new ArrayBuffer(65536);

export function corral_abi_v1(): i32 {
  return 2;
}

export function corral_buffer(size: u32): usize {
  assert(size <= <u32>buf.byteLength, "request too large");
  return changetype<usize>(buf);
}

export function corral_call(op: i32, len: u32): i32 {
  const manifest = String.UTF8.encode('{"name":"asguest","version":"1","abi":1,"schemes":["asguest"]}');
  set_result(changetype<usize>(manifest), <u32>manifest.byteLength);
  return op == 1 ? 0 : 1;
}

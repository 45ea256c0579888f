// A failed assertion or an allocation failure in a guest: the message goes
// to standard error, whose tail the host writes to the operator's log
// when the instance fails (abi/ABI.md §14), then the instance traps.

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_write")
declare function fdWrite(fd: u32, iovs: usize, iovsLen: usize, written: usize): u16;

// Static memory for the message, so that reporting needs no allocation.
// @ts-ignore: decorator
@lazy const scratch = memory.data(1024);

function put(at: usize, s: string): usize {
  const room = <usize>1008 - at;
  const n = <usize>String.UTF8.byteLength(s);
  if (n > room) return at;
  return at + String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, scratch + 16 + at);
}

/** Appends ":" and the decimal digits of v without allocating. */
function putNumber(at: usize, v: u32): usize {
  if (at + 11 > 1008) return at;
  store<u8>(scratch + 16 + at, 0x3a);
  at++;
  let digits: usize = 1;
  for (let t = v; t >= 10; t /= 10) digits++;
  let p = scratch + 16 + at + digits;
  do {
    p--;
    store<u8>(p, <u8>(0x30 + v % 10));
    v /= 10;
  } while (v != 0);
  return at + digits;
}

/**
 * Reports an abort on standard error and traps; the build passes
 * `--use abort=…/abort/corralAbort`.
 */
export function corralAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let n = put(0, "abort: ");
  n = put(n, message != null ? message : "(no message)");
  if (fileName != null) {
    n = put(n, " at ");
    n = put(n, fileName);
    n = putNumber(n, line);
    n = putNumber(n, column);
  }
  n = put(n, "\n");
  store<usize>(scratch, scratch + 16);
  store<usize>(scratch, n, sizeof<usize>());
  fdWrite(2, scratch, 1, scratch + 8);
  unreachable();
}

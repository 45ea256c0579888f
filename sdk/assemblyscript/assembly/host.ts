// The host functions of import module corral_v1 (abi/ABI.md §8) and the
// capability helpers over them: log, notify, kv, files, http, config and
// progress. Arguments are encoded into reused scratch buffers; outputs are
// fetched with take (§9).

import { Value, Writer, parse } from "./json";
import { base64Decode, base64Encode } from "./base64";

// @ts-ignore: decorator
@external("corral_v1", "set_result")
export declare function hostSetResult(ptr: usize, len: usize): void;
// @ts-ignore: decorator
@external("corral_v1", "take")
declare function hostTake(ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "log")
declare function hostLog(level: i32, ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "notify")
declare function hostNotify(kind: i32, ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "progress")
declare function hostProgress(progress: f64, total: f64, ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "kv_get")
declare function hostKVGet(kptr: usize, klen: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "kv_set")
declare function hostKVSet(kptr: usize, klen: usize, vptr: usize, vlen: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "kv_delete")
declare function hostKVDelete(kptr: usize, klen: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "file_read")
declare function hostFileRead(ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "file_stat")
declare function hostFileStat(ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "file_list")
declare function hostFileList(ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "file_roots")
declare function hostFileRoots(): i32;
// @ts-ignore: decorator
@external("corral_v1", "http_fetch")
declare function hostHTTPFetch(ptr: usize, len: usize): i32;
// @ts-ignore: decorator
@external("corral_v1", "config_get")
declare function hostConfigGet(ptr: usize, len: usize): i32;

/** The errnos host functions return (abi/ABI.md §10); OK is success. */
export enum Errno {
  OK = 0,
  Denied = -1,
  NotFound = -2,
  Invalid = -3,
  Quota = -4,
  TooLarge = -5,
  IO = -6,
  RateLimited = -7,
  Timeout = -8,
  /** The host's output did not decode (not an ABI errno). */
  BadOutput = -100,
}

/** A short lowercase name for an errno, for messages. */
export function errnoName(e: Errno): string {
  switch (e) {
    case Errno.OK:
      return "ok";
    case Errno.Denied:
      return "permission denied";
    case Errno.NotFound:
      return "not found";
    case Errno.Invalid:
      return "invalid argument";
    case Errno.Quota:
      return "quota exceeded";
    case Errno.TooLarge:
      return "too large";
    case Errno.IO:
      return "i/o error";
    case Errno.RateLimited:
      return "rate limited";
    case Errno.Timeout:
      return "timeout";
    case Errno.BadOutput:
      return "malformed host output";
  }
  return "errno " + (<i32>e).toString();
}

/**
 * The outcome of a host call that produces a value: `ok` and `value`, or
 * the errno that says why not.
 */
export class Result<T> {
  constructor(
    /** OK, or why the call failed. */
    public errno: Errno,
    private v: T | null,
  ) {}

  /** Whether the call succeeded. */
  get ok(): bool {
    return this.errno == Errno.OK;
  }

  /** The value of a successful call; reading it after a failure traps. */
  get value(): T {
    return changetype<T>(assert(this.v, "corral: value of a failed host call"));
  }

  /** The value, or def when the call failed. */
  or(def: T): T {
    const v = this.v;
    return this.errno == Errno.OK && v != null ? v : def;
  }
}

// Scratch buffers for the arguments of host calls, reused every call.
const argA = new Writer();
const argB = new Writer();
// The buffer outputs are taken into before they are decoded.
const takeBuf = new Writer();

function status(r: i32): Errno {
  return r < 0 ? changetype<Errno>(r) : Errno.OK;
}

/** Takes n pending bytes into takeBuf; returns OK or an errno. */
function takeInto(n: i32): Errno {
  takeBuf.reset();
  if (n < 0) return changetype<Errno>(n);
  if (n == 0) return Errno.OK;
  takeBuf.grow(<usize>n);
  const got = hostTake(takeBuf.ptr, <usize>n);
  if (got < 0) return changetype<Errno>(got);
  takeBuf.len = <usize>got;
  return Errno.OK;
}

function bytesOutput(n: i32): Result<Uint8Array> {
  const e = takeInto(n);
  if (e != Errno.OK) return new Result<Uint8Array>(e, null);
  const out = new Uint8Array(<i32>takeBuf.len);
  memory.copy(out.dataStart, takeBuf.ptr, takeBuf.len);
  return new Result<Uint8Array>(Errno.OK, out);
}

function stringOutput(n: i32): Result<string> {
  const e = takeInto(n);
  if (e != Errno.OK) return new Result<string>(e, null);
  return new Result<string>(Errno.OK, takeBuf.toString());
}

function jsonOutput(n: i32): Result<Value> {
  const e = takeInto(n);
  if (e != Errno.OK) return new Result<Value>(e, null);
  const v = parse(takeBuf.ptr, takeBuf.len);
  if (v == null) return new Result<Value>(Errno.BadOutput, null);
  return new Result<Value>(Errno.OK, v);
}

/** Log levels of the log host function. */
export enum Level {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
}

/**
 * Writes msg to the operator's log (the log capability). During a call it
 * also reaches the client whose request is served, as
 * notifications/message, when that request asked for that level.
 */
export function log(level: Level, msg: string): Errno {
  argA.reset().raw(msg);
  return status(hostLog(level, argA.ptr, argA.len));
}

/** Notifications to subscribed clients (the notify capability). */
export namespace notify {
  /** The resource at uri (in one of the plugin's schemes) changed. */
  export function resourceUpdated(uri: string): Errno {
    argA.reset().raw(uri);
    return status(hostNotify(1, argA.ptr, argA.len));
  }
  /** The plugin's resource list changed. */
  export function resourcesListChanged(): Errno {
    return status(hostNotify(2, 0, 0));
  }
  /** The prompt list changed. */
  export function promptsListChanged(): Errno {
    return status(hostNotify(3, 0, 0));
  }
  /** The tool list changed. */
  export function toolsListChanged(): Errno {
    return status(hostNotify(4, 0, 0));
  }
}

/**
 * Reports the progress of the call being served to its client (ABI 1.1).
 * total is the expected final value, or 0 when unknown; each report must
 * be greater than the previous one of the call. Needs no capability.
 */
export function progress(value: f64, total: f64 = 0, message: string = ""): Errno {
  argA.reset().raw(message);
  return status(hostProgress(value, total, argA.ptr, argA.len));
}

/**
 * The plugin's private key-value store (the kv capability), shared by all
 * its instances and kept across restarts.
 */
export namespace kv {
  /** The bytes stored under key; NotFound when there are none. */
  export function get(key: string): Result<Uint8Array> {
    argA.reset().raw(key);
    return bytesOutput(hostKVGet(argA.ptr, argA.len));
  }
  /** The value under key as UTF-8 text. */
  export function getString(key: string): Result<string> {
    argA.reset().raw(key);
    return stringOutput(hostKVGet(argA.ptr, argA.len));
  }
  /** Stores val under key. */
  export function set(key: string, val: Uint8Array): Errno {
    argA.reset().raw(key);
    return status(hostKVSet(argA.ptr, argA.len, val.dataStart, <usize>val.length));
  }
  /** Stores text under key as UTF-8. */
  export function setString(key: string, val: string): Errno {
    argA.reset().raw(key);
    argB.reset().raw(val);
    return status(hostKVSet(argA.ptr, argA.len, argB.ptr, argB.len));
  }
  /** Deletes key; deleting a missing key succeeds. */
  export function remove(key: string): Errno {
    argA.reset().raw(key);
    return status(hostKVDelete(argA.ptr, argA.len));
  }
}

/** A file or directory under the granted roots (file_stat, file_list). */
export class FileInfo {
  path: string = "";
  name: string = "";
  size: i64 = 0;
  dir: bool = false;
  /** RFC 3339 time of the last change, or "". */
  modTime: string = "";

  static from(v: Value): FileInfo {
    const f = new FileInfo();
    f.path = v.getString("path");
    f.name = v.getString("name");
    f.size = <i64>v.getNumber("size");
    f.dir = v.getBool("dir");
    f.modTime = v.getString("modTime");
    return f;
  }
}

/**
 * Read-only access to the roots the operator granted (the files
 * capability). Paths are absolute and slash-separated, as in file:// URIs.
 */
export namespace files {
  /** The whole content of a regular file. */
  export function read(path: string): Result<Uint8Array> {
    argA.reset().raw(path);
    return bytesOutput(hostFileRead(argA.ptr, argA.len));
  }
  /** A file's content as UTF-8 text. */
  export function readString(path: string): Result<string> {
    argA.reset().raw(path);
    return stringOutput(hostFileRead(argA.ptr, argA.len));
  }
  /** Describes a file or directory. */
  export function stat(path: string): Result<FileInfo> {
    argA.reset().raw(path);
    const r = jsonOutput(hostFileStat(argA.ptr, argA.len));
    if (!r.ok || !r.value.isObject) return new Result<FileInfo>(r.ok ? Errno.BadOutput : r.errno, null);
    return new Result<FileInfo>(Errno.OK, FileInfo.from(r.value));
  }
  /** The entries of a directory, sorted by name. */
  export function list(path: string): Result<FileInfo[]> {
    argA.reset().raw(path);
    const r = jsonOutput(hostFileList(argA.ptr, argA.len));
    if (!r.ok || !r.value.isArray) return new Result<FileInfo[]>(r.ok ? Errno.BadOutput : r.errno, null);
    const items = r.value.items;
    const out = new Array<FileInfo>(items.length);
    for (let i = 0; i < items.length; i++) out[i] = FileInfo.from(items[i]);
    return new Result<FileInfo[]>(Errno.OK, out);
  }
  /** The granted roots. */
  export function roots(): Result<string[]> {
    const r = jsonOutput(hostFileRoots());
    if (!r.ok || !r.value.isArray) return new Result<string[]>(r.ok ? Errno.BadOutput : r.errno, null);
    const items = r.value.items;
    const out = new Array<string>(items.length);
    for (let i = 0; i < items.length; i++) out[i] = items[i].string;
    return new Result<string[]>(Errno.OK, out);
  }
}

/** An outbound HTTP request (http_fetch). */
export class HttpRequest {
  method: string = "GET";
  url: string = "";
  headers: Map<string, string> = new Map();
  body: Uint8Array | null = null;
}

/** The answer to an HttpRequest; any status is a successful fetch. */
export class HttpResponse {
  status: i32 = 0;
  headers: Map<string, string> = new Map();
  body: Uint8Array = new Uint8Array(0);

  /** The body as UTF-8 text. */
  text(): string {
    return String.UTF8.decodeUnsafe(this.body.dataStart, <usize>this.body.length);
  }
}

/**
 * Outbound HTTP to the hosts the operator granted (the http capability);
 * redirects, size caps and address checks are the host's.
 */
export namespace http {
  /** Performs req. */
  export function fetch(req: HttpRequest): Result<HttpResponse> {
    const w = argA.reset();
    w.byte(0x7b).key("method", true).str(req.method).key("url").str(req.url);
    const keys = req.headers.keys();
    if (keys.length > 0) {
      w.key("headers").byte(0x7b);
      for (let i = 0; i < keys.length; i++) {
        w.key(keys[i], i == 0).str(req.headers.get(keys[i]));
      }
      w.byte(0x7d);
    }
    const body = req.body;
    if (body != null && body.length > 0) w.key("body").str(base64Encode(body));
    w.byte(0x7d);
    const r = jsonOutput(hostHTTPFetch(w.ptr, w.len));
    if (!r.ok || !r.value.isObject) return new Result<HttpResponse>(r.ok ? Errno.BadOutput : r.errno, null);
    const v = r.value;
    const resp = new HttpResponse();
    resp.status = <i32>v.getNumber("status");
    const h = v.get("headers");
    if (h != null) resp.headers = h.stringMap();
    const b = v.get("body");
    if (b != null && b.isString) {
      const decoded = base64Decode(b.string);
      if (decoded == null) return new Result<HttpResponse>(Errno.BadOutput, null);
      resp.body = decoded;
    }
    return new Result<HttpResponse>(Errno.OK, resp);
  }
  /** GETs url. */
  export function get(url: string, headers: Map<string, string> | null = null): Result<HttpResponse> {
    const req = new HttpRequest();
    req.url = url;
    if (headers != null) req.headers = headers;
    return fetch(req);
  }
  /** POSTs body with contentType to url. */
  export function post(url: string, contentType: string, body: Uint8Array): Result<HttpResponse> {
    const req = new HttpRequest();
    req.method = "POST";
    req.url = url;
    req.headers.set("Content-Type", contentType);
    req.body = body;
    return fetch(req);
  }
}

/** The operator's settings for the plugin (the config capability). */
export namespace config {
  /** The value of key; NotFound when it is not set. */
  export function get(key: string): Result<string> {
    argA.reset().raw(key);
    return stringOutput(hostConfigGet(argA.ptr, argA.len));
  }
}

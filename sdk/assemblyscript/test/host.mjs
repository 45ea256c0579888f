// A stand-in for the corral host, written from abi/ABI.md, for running
// AssemblyScript guests under node's WebAssembly: the take pattern, the
// capability checks, the kv store, files, config and http, and records of
// what the guest logged, notified and reported.

export const Errno = { denied: -1, notFound: -2, invalid: -3, quota: -4, tooLarge: -5, io: -6, rateLimited: -7, timeout: -8 };

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

/** A host for one instance of a guest module. */
export class FakeHost {
  /**
   * @param {object} o
   * @param {string[]} [o.caps] granted capabilities
   * @param {Map<string, Uint8Array>} [o.kv]
   * @param {Record<string, string>} [o.files] path -> content, under o.roots
   * @param {string[]} [o.roots]
   * @param {Record<string, string>} [o.config]
   * @param {(req: object) => object} [o.http] answers an HTTPRequest with an HTTPResponse
   */
  constructor(o = {}) {
    this.caps = new Set(o.caps ?? []);
    this.kv = o.kv ?? new Map();
    this.files = o.files ?? {};
    this.roots = o.roots ?? [];
    this.config = o.config ?? {};
    this.http = o.http ?? (() => ({ status: 404 }));
    this.logs = [];
    this.notifies = [];
    this.progress = [];
    this.stderr = "";
    this.inCall = false;
    this.result = null;
    this.pending = null;
    this.bufPtr = 0;
    this.bufCap = 0;
  }

  bytes(ptr, len) {
    const mem = new Uint8Array(this.memory.buffer);
    if (ptr + len > mem.length) throw new Error(`contract: range ${ptr}+${len} outside memory of ${mem.length}`);
    return mem.slice(ptr, ptr + len);
  }

  str(ptr, len) {
    return dec.decode(this.bytes(ptr, len));
  }

  stage(bytes) {
    this.pending = bytes;
    return bytes.length;
  }

  stageJSON(v) {
    return this.stage(enc.encode(JSON.stringify(v)));
  }

  can(cap) {
    return this.caps.has(cap);
  }

  imports() {
    const h = this;
    return {
      corral_v1: {
        set_result(ptr, len) {
          if (!h.inCall) throw new Error("contract: set_result outside corral_call");
          if (h.result != null) throw new Error("contract: set_result twice");
          h.result = h.bytes(ptr, len);
        },
        take(ptr, len) {
          if (h.pending == null) return Errno.notFound;
          if (len < h.pending.length) return Errno.tooLarge;
          h.bytes(ptr, len);
          new Uint8Array(h.memory.buffer).set(h.pending, ptr);
          const n = h.pending.length;
          h.pending = null;
          return n;
        },
        log(level, ptr, len) {
          const msg = h.str(ptr, len);
          if (!h.can("log")) return Errno.denied;
          if (level < 0 || level > 3) return Errno.invalid;
          h.logs.push({ level, msg });
          return 0;
        },
        notify(kind, ptr, len) {
          const payload = h.str(ptr, len);
          if (!h.can("notify")) return Errno.denied;
          if (kind < 1 || kind > 4 || (kind > 1 && len > 0)) return Errno.invalid;
          h.notifies.push({ kind, payload });
          return 0;
        },
        progress(progress, total, ptr, len) {
          const msg = h.str(ptr, len);
          const last = h.progress.length ? h.progress[h.progress.length - 1].progress : -1;
          if (!Number.isFinite(progress) || progress < 0 || progress <= last || !Number.isFinite(total) || total < 0) {
            return Errno.invalid;
          }
          h.progress.push({ progress, total, msg });
          return 0;
        },
        kv_get(kptr, klen) {
          const key = h.str(kptr, klen);
          if (!h.can("kv")) return Errno.denied;
          if (klen == 0 || klen > 1024) return Errno.invalid;
          const v = h.kv.get(key);
          return v === undefined ? Errno.notFound : h.stage(v);
        },
        kv_set(kptr, klen, vptr, vlen) {
          const key = h.str(kptr, klen);
          const val = h.bytes(vptr, vlen);
          if (!h.can("kv")) return Errno.denied;
          if (klen == 0 || klen > 1024) return Errno.invalid;
          h.kv.set(key, val);
          return 0;
        },
        kv_delete(kptr, klen) {
          const key = h.str(kptr, klen);
          if (!h.can("kv")) return Errno.denied;
          h.kv.delete(key);
          return 0;
        },
        file_read(ptr, len) {
          const p = h.str(ptr, len);
          if (!h.can("files") || !h.under(p)) return Errno.denied;
          const c = h.files[p];
          return c === undefined ? Errno.notFound : h.stage(enc.encode(c));
        },
        file_stat(ptr, len) {
          const p = h.str(ptr, len);
          if (!h.can("files") || !h.under(p)) return Errno.denied;
          const info = h.info(p);
          return info == null ? Errno.notFound : h.stageJSON(info);
        },
        file_list(ptr, len) {
          const dir = h.str(ptr, len);
          if (!h.can("files") || !h.under(dir)) return Errno.denied;
          const names = new Set();
          for (const p of Object.keys(h.files)) {
            if (p.startsWith(dir + "/")) names.add(p.slice(dir.length + 1).split("/")[0]);
          }
          if (names.size == 0) return Errno.notFound;
          return h.stageJSON([...names].sort().map((n) => h.info(dir + "/" + n)));
        },
        file_roots() {
          if (!h.can("files")) return Errno.denied;
          return h.stageJSON(h.roots);
        },
        http_fetch(ptr, len) {
          const raw = h.str(ptr, len);
          if (!h.can("http")) return Errno.denied;
          let req;
          try {
            req = JSON.parse(raw);
          } catch {
            return Errno.invalid;
          }
          h.lastHTTP = req;
          return h.stageJSON(h.http(req));
        },
        config_get(ptr, len) {
          const key = h.str(ptr, len);
          if (!h.can("config")) return Errno.denied;
          const v = h.config[key];
          return v === undefined ? Errno.notFound : h.stage(enc.encode(v));
        },
      },
      wasi_snapshot_preview1: {
        fd_write(fd, iovs, n, written) {
          const view = new DataView(h.memory.buffer);
          let total = 0;
          for (let i = 0; i < n; i++) {
            const p = view.getUint32(iovs + i * 8, true);
            const l = view.getUint32(iovs + i * 8 + 4, true);
            if (fd == 2) h.stderr += h.str(p, l);
            total += l;
          }
          view.setUint32(written, total, true);
          return 0;
        },
      },
    };
  }

  under(p) {
    return p.startsWith("/") && !p.split("/").includes("..") && this.roots.some((r) => p == r || p.startsWith(r + "/"));
  }

  info(p) {
    const name = p.slice(p.lastIndexOf("/") + 1);
    if (this.files[p] !== undefined) {
      return { path: p, name, size: enc.encode(this.files[p]).length, modTime: "2026-07-01T09:30:00Z" };
    }
    const isDir = Object.keys(this.files).some((f) => f.startsWith(p + "/"));
    return isDir ? { path: p, name, dir: true, modTime: "2026-07-01T09:30:00Z" } : null;
  }

  /** Instantiates module and runs _initialize, as the host does. */
  async instantiate(module) {
    const inst = await WebAssembly.instantiate(module, this.imports());
    this.exports = inst.exports;
    this.memory = inst.exports.memory;
    if (inst.exports._initialize) inst.exports._initialize();
    return this;
  }

  /**
   * Makes one call: op and a request (an object, encoded as JSON, or a
   * string sent as is). Returns the status, the response text and, when it
   * parses, its JSON.
   */
  call(op, req = {}) {
    const bytes = typeof req == "string" ? enc.encode(req) : enc.encode(JSON.stringify(req));
    if (bytes.length > this.bufCap || this.bufCap == 0) {
      const size = Math.max(bytes.length, 1024);
      this.bufPtr = this.exports.corral_buffer(size) >>> 0;
      if (this.bufPtr == 0) throw new Error("corral_buffer returned 0");
      this.bufCap = size;
    }
    new Uint8Array(this.memory.buffer).set(bytes, this.bufPtr);
    this.inCall = true;
    this.result = null;
    this.pending = null;
    this.progress = [];
    let status;
    try {
      status = this.exports.corral_call(op, bytes.length);
    } finally {
      this.inCall = false;
    }
    if (this.result == null) throw new Error("the guest returned without set_result");
    const text = dec.decode(this.result);
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status, text, json };
  }
}

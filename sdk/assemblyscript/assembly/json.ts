// JSON for the guest: a strict parser of UTF-8 request bytes into Values,
// and a Writer that encodes into unmanaged, reusable memory.

/** The kind of a JSON value. */
export enum Kind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

/**
 * A parsed JSON value. Objects keep their members in order; `get` finds
 * one by name. Values are garbage: the SDK frees them before the next call.
 */
export class Value {
  kind: Kind = Kind.Null;
  boolean: bool = false;
  number: f64 = 0;
  string: string = "";
  /** The elements of an array, or the member values of an object. */
  items: Value[] = [];
  /** The member names of an object, one per item. */
  keys: string[] = [];

  get isNull(): bool {
    return this.kind == Kind.Null;
  }
  get isObject(): bool {
    return this.kind == Kind.Object;
  }
  get isArray(): bool {
    return this.kind == Kind.Array;
  }
  get isString(): bool {
    return this.kind == Kind.String;
  }
  get isNumber(): bool {
    return this.kind == Kind.Number;
  }
  get isBool(): bool {
    return this.kind == Kind.Bool;
  }

  /** The member named key of an object, or null. */
  get(key: string): Value | null {
    if (this.kind != Kind.Object) return null;
    const keys = this.keys;
    for (let i = 0, n = keys.length; i < n; i++) {
      if (unchecked(keys[i]) == key) return unchecked(this.items[i]);
    }
    return null;
  }

  /** Whether an object has a member named key. */
  has(key: string): bool {
    return this.get(key) != null;
  }

  /** The string member key, or def when it is absent or not a string. */
  getString(key: string, def: string = ""): string {
    const v = this.get(key);
    return v != null && v.kind == Kind.String ? v.string : def;
  }

  /** The number member key, or def when it is absent or not a number. */
  getNumber(key: string, def: f64 = 0): f64 {
    const v = this.get(key);
    return v != null && v.kind == Kind.Number ? v.number : def;
  }

  /** The boolean member key, or def when it is absent or not a boolean. */
  getBool(key: string, def: bool = false): bool {
    const v = this.get(key);
    return v != null && v.kind == Kind.Bool ? v.boolean : def;
  }

  /** The string members of an object as a map (other members are skipped). */
  stringMap(): Map<string, string> {
    const m = new Map<string, string>();
    for (let i = 0, n = this.keys.length; i < n; i++) {
      const v = unchecked(this.items[i]);
      if (v.kind == Kind.String) m.set(unchecked(this.keys[i]), v.string);
    }
    return m;
  }

  /** The value encoded as compact JSON. */
  toJSON(): string {
    const w = new Writer();
    w.value(this);
    return w.toString();
  }
}

/** Parses one JSON value from the UTF-8 bytes [ptr, ptr+len), or null. */
export function parse(ptr: usize, len: usize): Value | null {
  const p = new Parser(ptr, len);
  p.space();
  const v = p.value(0);
  if (v == null || p.failed) return null;
  p.space();
  return p.pos == len ? v : null;
}

/** Parses a JSON text held in a string, or null. */
export function parseString(s: string): Value | null {
  const buf = String.UTF8.encode(s);
  return parse(changetype<usize>(buf), <usize>buf.byteLength);
}

// @ts-ignore: decorator
@inline const MAX_DEPTH = 1000;

class Parser {
  failed: bool = false;
  pos: usize = 0;
  constructor(
    public base: usize,
    public len: usize,
  ) {}

  @inline peek(): u32 {
    return this.pos < this.len ? <u32>load<u8>(this.base + this.pos) : 0;
  }

  space(): void {
    while (this.pos < this.len) {
      const c = load<u8>(this.base + this.pos);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
      this.pos++;
    }
  }

  fail(): Value | null {
    this.failed = true;
    return null;
  }

  literal(word: string): bool {
    const n = <usize>word.length;
    if (this.pos + n > this.len) return false;
    for (let i: usize = 0; i < n; i++) {
      if (<u32>load<u8>(this.base + this.pos + i) != <u32>word.charCodeAt(<i32>i)) return false;
    }
    this.pos += n;
    return true;
  }

  value(depth: i32): Value | null {
    if (depth > MAX_DEPTH) return this.fail();
    const c = this.peek();
    const v = new Value();
    if (c == 0x7b /* { */) {
      this.pos++;
      v.kind = Kind.Object;
      this.space();
      if (this.peek() == 0x7d) {
        this.pos++;
        return v;
      }
      for (;;) {
        this.space();
        if (this.peek() != 0x22) return this.fail();
        const k = this.str();
        if (k == null) return this.fail();
        this.space();
        if (this.peek() != 0x3a /* : */) return this.fail();
        this.pos++;
        this.space();
        const item = this.value(depth + 1);
        if (item == null) return this.fail();
        v.keys.push(k);
        v.items.push(item);
        this.space();
        const d = this.peek();
        this.pos++;
        if (d == 0x2c) continue;
        if (d == 0x7d) return v;
        return this.fail();
      }
    }
    if (c == 0x5b /* [ */) {
      this.pos++;
      v.kind = Kind.Array;
      this.space();
      if (this.peek() == 0x5d) {
        this.pos++;
        return v;
      }
      for (;;) {
        this.space();
        const item = this.value(depth + 1);
        if (item == null) return this.fail();
        v.items.push(item);
        this.space();
        const d = this.peek();
        this.pos++;
        if (d == 0x2c) continue;
        if (d == 0x5d) return v;
        return this.fail();
      }
    }
    if (c == 0x22) {
      const s = this.str();
      if (s == null) return this.fail();
      v.kind = Kind.String;
      v.string = s;
      return v;
    }
    if (c == 0x74 && this.literal("true")) {
      v.kind = Kind.Bool;
      v.boolean = true;
      return v;
    }
    if (c == 0x66 && this.literal("false")) {
      v.kind = Kind.Bool;
      return v;
    }
    if (c == 0x6e && this.literal("null")) return v;
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.num(v);
    return this.fail();
  }

  num(v: Value): Value | null {
    const start = this.pos;
    if (this.peek() == 0x2d) this.pos++;
    const lead = this.peek();
    const n = this.digits();
    if (n == 0 || (lead == 0x30 && n > 1)) return this.fail(); // no leading zeros
    if (this.peek() == 0x2e) {
      this.pos++;
      if (this.digits() == 0) return this.fail();
    }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.pos++;
      const s = this.peek();
      if (s == 0x2b || s == 0x2d) this.pos++;
      if (this.digits() == 0) return this.fail();
    }
    v.kind = Kind.Number;
    v.number = parseFloat(String.UTF8.decodeUnsafe(this.base + start, this.pos - start));
    return v;
  }

  digits(): i32 {
    let n = 0;
    while (this.pos < this.len) {
      const c = load<u8>(this.base + this.pos);
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
      n++;
    }
    return n;
  }

  /** Reads a string token at pos (which holds the opening quote). */
  str(): string | null {
    this.pos++;
    const start = this.pos;
    // Fast path: no escapes.
    for (;;) {
      if (this.pos >= this.len) return null;
      const c = load<u8>(this.base + this.pos);
      if (c == 0x22) {
        const s = String.UTF8.decodeUnsafe(this.base + start, this.pos - start);
        this.pos++;
        return s;
      }
      if (c == 0x5c) break;
      if (c < 0x20) return null;
      this.pos++;
    }
    // Slow path: decode escapes into a UTF-8 scratch buffer.
    const w = new Writer();
    w.bytes(this.base + start, this.pos - start);
    for (;;) {
      if (this.pos >= this.len) return null;
      const c = load<u8>(this.base + this.pos);
      this.pos++;
      if (c == 0x22) break;
      if (c < 0x20) return null;
      if (c != 0x5c) {
        w.byte(c);
        continue;
      }
      const e = this.peek();
      this.pos++;
      switch (e) {
        case 0x22:
        case 0x5c:
        case 0x2f:
          w.byte(<u8>e);
          break;
        case 0x62:
          w.byte(0x08);
          break;
        case 0x66:
          w.byte(0x0c);
          break;
        case 0x6e:
          w.byte(0x0a);
          break;
        case 0x72:
          w.byte(0x0d);
          break;
        case 0x74:
          w.byte(0x09);
          break;
        case 0x75: {
          let cp = this.hex4();
          if (cp < 0) return null;
          if (cp >= 0xd800 && cp < 0xdc00 && this.peek() == 0x5c) {
            const save = this.pos;
            this.pos++;
            if (this.peek() == 0x75) {
              this.pos++;
              const lo = this.hex4();
              if (lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
              } else {
                this.pos = save;
              }
            } else {
              this.pos = save;
            }
          }
          if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd; // a lone surrogate
          w.codePoint(<u32>cp);
          break;
        }
        default:
          return null;
      }
    }
    const s = String.UTF8.decodeUnsafe(w.ptr, w.len);
    return s;
  }

  hex4(): i32 {
    if (this.pos + 4 > this.len) return -1;
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = <i32>load<u8>(this.base + this.pos);
      this.pos++;
      let d: i32;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else return -1;
      v = (v << 4) | d;
    }
    return v;
  }
}

/**
 * A growable byte buffer that encodes JSON as UTF-8. The SDK keeps one per
 * purpose in a global and resets it each call, so encoding a response
 * allocates nothing once the buffer has grown to its working size; a
 * Writer that is dropped is freed by the collector like any object.
 */
export class Writer {
  private buf: ArrayBuffer = new ArrayBuffer(0);
  /** The address of the first byte. */
  ptr: usize = changetype<usize>(this.buf);
  /** The number of bytes written. */
  len: usize = 0;

  /** Empties the buffer, keeping its memory. */
  reset(): Writer {
    this.len = 0;
    return this;
  }

  /** Makes room for n more bytes. */
  grow(n: usize): void {
    const need = this.len + n;
    const cap = <usize>this.buf.byteLength;
    if (need <= cap) return;
    let c = cap < 256 ? <usize>256 : cap << 1;
    while (c < need) c <<= 1;
    const nb = new ArrayBuffer(<i32>c);
    memory.copy(changetype<usize>(nb), this.ptr, this.len);
    this.buf = nb;
    this.ptr = changetype<usize>(nb);
  }

  byte(b: u8): Writer {
    this.grow(1);
    store<u8>(this.ptr + this.len, b);
    this.len++;
    return this;
  }

  /** Appends n raw bytes from memory. */
  bytes(src: usize, n: usize): Writer {
    this.grow(n);
    memory.copy(this.ptr + this.len, src, n);
    this.len += n;
    return this;
  }

  /** Appends s as UTF-8 without quoting (for JSON text and ASCII tokens). */
  raw(s: string): Writer {
    const n = <usize>s.length;
    this.grow(n * 3);
    this.len += String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, this.ptr + this.len);
    return this;
  }

  codePoint(cp: u32): Writer {
    this.grow(4);
    const p = this.ptr + this.len;
    if (cp < 0x80) {
      store<u8>(p, <u8>cp);
      this.len += 1;
    } else if (cp < 0x800) {
      store<u8>(p, <u8>(0xc0 | (cp >> 6)));
      store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 1);
      this.len += 2;
    } else if (cp < 0x10000) {
      store<u8>(p, <u8>(0xe0 | (cp >> 12)));
      store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 2);
      this.len += 3;
    } else {
      store<u8>(p, <u8>(0xf0 | (cp >> 18)));
      store<u8>(p, <u8>(0x80 | ((cp >> 12) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 2);
      store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 3);
      this.len += 4;
    }
    return this;
  }

  /**
   * Appends s as a quoted JSON string in UTF-8. A lone surrogate becomes
   * U+FFFD, so the output is always valid UTF-8.
   */
  str(s: string): Writer {
    const n = <usize>s.length;
    // At most 6 bytes per UTF-16 unit (\u00XX), plus the quotes.
    this.grow(n * 6 + 2);
    const src = changetype<usize>(s);
    let p = this.ptr + this.len;
    store<u8>(p++, 0x22);
    for (let i: usize = 0; i < n; i++) {
      let c = <u32>load<u16>(src + (i << 1));
      if (c < 0x80) {
        if (c >= 0x20 && c != 0x22 && c != 0x5c) {
          store<u8>(p++, <u8>c);
          continue;
        }
        store<u8>(p++, 0x5c);
        if (c == 0x22 || c == 0x5c) store<u8>(p++, <u8>c);
        else if (c == 0x0a) store<u8>(p++, 0x6e);
        else if (c == 0x0d) store<u8>(p++, 0x72);
        else if (c == 0x09) store<u8>(p++, 0x74);
        else {
          store<u32>(p, 0x30303075); // "u00"
          store<u8>(p, hexDigit(c >> 4), 3);
          store<u8>(p, hexDigit(c & 15), 4);
          p += 5;
        }
        continue;
      }
      if (c < 0x800) {
        store<u8>(p, <u8>(0xc0 | (c >> 6)));
        store<u8>(p, <u8>(0x80 | (c & 0x3f)), 1);
        p += 2;
        continue;
      }
      if (c >= 0xd800 && c < 0xe000) {
        if (c < 0xdc00 && i + 1 < n) {
          const lo = <u32>load<u16>(src + ((i + 1) << 1));
          if (lo >= 0xdc00 && lo < 0xe000) {
            const cp = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
            store<u8>(p, <u8>(0xf0 | (cp >> 18)));
            store<u8>(p, <u8>(0x80 | ((cp >> 12) & 0x3f)), 1);
            store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 2);
            store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 3);
            p += 4;
            i++;
            continue;
          }
        }
        c = 0xfffd; // a lone surrogate
      }
      store<u8>(p, <u8>(0xe0 | (c >> 12)));
      store<u8>(p, <u8>(0x80 | ((c >> 6) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | (c & 0x3f)), 2);
      p += 3;
    }
    store<u8>(p++, 0x22);
    this.len = p - this.ptr;
    return this;
  }

  /** Appends a JSON number; integral values are written without a fraction. */
  num(v: f64): Writer {
    if (!isFinite(v)) return this.raw("null");
    if (v == Math.floor(v) && Math.abs(v) < 9007199254740992) return this.int(<i64>v);
    return this.raw(v.toString());
  }

  int(v: i64): Writer {
    if (v < 0) {
      this.byte(0x2d);
      if (v == i64.MIN_VALUE) return this.raw("9223372036854775808");
      v = -v;
    }
    this.grow(20);
    let digits = 1;
    for (let t = v; t >= 10; t /= 10) digits++;
    let p = this.ptr + this.len + <usize>digits;
    do {
      p--;
      store<u8>(p, <u8>(0x30 + v % 10));
      v /= 10;
    } while (v != 0);
    this.len += <usize>digits;
    return this;
  }

  bool(b: bool): Writer {
    return this.raw(b ? "true" : "false");
  }

  /** Appends "key": (with a leading comma unless first). */
  key(k: string, first: bool = false): Writer {
    if (!first) this.byte(0x2c);
    this.str(k);
    return this.byte(0x3a);
  }

  /** Appends ,"key":"value" when value is not empty. */
  optStr(k: string, value: string): Writer {
    if (value.length > 0) this.key(k).str(value);
    return this;
  }

  /** Appends ,"key":<json> when json is not empty. */
  optRaw(k: string, json: string): Writer {
    if (json.length > 0) this.key(k).raw(json);
    return this;
  }

  /** Appends a list of strings as a JSON array. */
  strings(list: string[]): Writer {
    this.byte(0x5b);
    for (let i = 0, n = list.length; i < n; i++) {
      if (i > 0) this.byte(0x2c);
      this.str(unchecked(list[i]));
    }
    return this.byte(0x5d);
  }

  /** Appends a parsed value. */
  value(v: Value): Writer {
    switch (v.kind) {
      case Kind.Null:
        return this.raw("null");
      case Kind.Bool:
        return this.bool(v.boolean);
      case Kind.Number:
        return this.num(v.number);
      case Kind.String:
        return this.str(v.string);
      case Kind.Array: {
        this.byte(0x5b);
        for (let i = 0, n = v.items.length; i < n; i++) {
          if (i > 0) this.byte(0x2c);
          this.value(unchecked(v.items[i]));
        }
        return this.byte(0x5d);
      }
      default: {
        this.byte(0x7b);
        for (let i = 0, n = v.items.length; i < n; i++) {
          this.key(unchecked(v.keys[i]), i == 0);
          this.value(unchecked(v.items[i]));
        }
        return this.byte(0x7d);
      }
    }
  }

  /** The bytes written so far, decoded as a (managed) string. */
  toString(): string {
    return String.UTF8.decodeUnsafe(this.ptr, this.len);
  }
}

function hexDigit(d: u32): u8 {
  return <u8>(d < 10 ? 0x30 + d : 0x57 + d);
}

/** Returns s as a quoted JSON string, for building JSON text by hand. */
export function quote(s: string): string {
  const w = new Writer();
  w.str(s);
  return w.toString();
}

/**
 * Builds a JSON object member by member:
 * `new JSONObject().set("n", 3).setString("name", "x").toString()`.
 */
export class JSONObject {
  private w: Writer = new Writer();
  private n: i32 = 0;

  constructor() {
    this.w.byte(0x7b);
  }

  private k(key: string): Writer {
    return this.w.key(key, this.n++ == 0);
  }

  /** A number member. */
  set(key: string, v: f64): JSONObject {
    this.k(key).num(v);
    return this;
  }
  /** A string member. */
  setString(key: string, v: string): JSONObject {
    this.k(key).str(v);
    return this;
  }
  /** A boolean member. */
  setBool(key: string, v: bool): JSONObject {
    this.k(key).bool(v);
    return this;
  }
  /** A member whose value is JSON text (an object, an array, …). */
  setRaw(key: string, json: string): JSONObject {
    this.k(key).raw(json);
    return this;
  }
  /** An array of strings. */
  setStrings(key: string, v: string[]): JSONObject {
    this.k(key).strings(v);
    return this;
  }

  /** The object as JSON text. */
  toString(): string {
    return this.w.toString() + "}";
  }
}

// The Plugin a module registers what it serves on, and the dispatch of
// corral_call to its handlers.

import { Value, Writer, parse, parseString } from "./json";
import { Resource, Template, Prompt, Tool, TaskSupport, capabilities, templateVariables } from "./manifest";
import {
  Code,
  Completion,
  CompleteRequest,
  ListRequest,
  ListResponse,
  PromptRequest,
  PromptResponse,
  ReadRequest,
  ReadResponse,
  Reply,
  ToolRequest,
  ToolResponse,
  body,
} from "./request";

/** Reads a resource: fill res with contents, or an error. */
export type ReadHandler = (req: ReadRequest, res: ReadResponse) => void;
/** Lists one page of dynamic resources (at most req.limit). */
export type ListHandler = (req: ListRequest, res: ListResponse) => void;
/** Renders a prompt; required arguments were checked before. */
export type PromptHandler = (req: PromptRequest, res: PromptResponse) => void;
/** Runs a tool; required arguments were checked before. */
export type ToolHandler = (req: ToolRequest, res: ToolResponse) => void;
/** Suggests values for req.argument from its partial req.value. */
export type CompleteHandler = (req: CompleteRequest, res: Completion) => void;

class TemplateEntry {
  constructor(
    public read: ReadHandler,
    public complete: CompleteHandler | null,
    public canFill: string[],
  ) {}
}

class PromptEntry {
  constructor(
    public get: PromptHandler,
    public complete: CompleteHandler | null,
    public canFill: string[],
    public required: string[],
  ) {}
}

class ToolEntry {
  constructor(
    public call: ToolHandler,
    public required: string[],
  ) {}
}

/** s with ASCII letters lowercased (schemes are ASCII; no Unicode tables linked). */
export function asciiLower(s: string): string {
  let upper = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  if (!upper) return s;
  const codes = new Array<i32>(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    codes[i] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
  }
  return String.fromCharCodes(codes);
}

function isLowerAlnum(c: i32): bool {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
}

/** Whether s matches [a-z0-9][a-z0-9_-]{0,63}, the plugin name rule. */
export function validPluginName(s: string): bool {
  if (s.length < 1 || s.length > 64 || !isLowerAlnum(s.charCodeAt(0))) return false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isLowerAlnum(c) && c != 0x5f && c != 0x2d) return false;
  }
  return true;
}

/** Whether s matches [A-Za-z0-9_.-]{1,128}, the prompt and tool name rule. */
export function validName(s: string): bool {
  if (s.length < 1 || s.length > 128) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok = isLowerAlnum(c) || (c >= 0x41 && c <= 0x5a) || c == 0x5f || c == 0x2e || c == 0x2d;
    if (!ok) return false;
  }
  return true;
}

/** Whether s is a lowercase RFC 3986 scheme of at most 64 characters. */
export function validScheme(s: string): bool {
  if (s.length < 1 || s.length > 64) return false;
  const c0 = s.charCodeAt(0);
  if (c0 < 0x61 || c0 > 0x7a) return false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isLowerAlnum(c) && c != 0x2b && c != 0x2e && c != 0x2d) return false;
  }
  return true;
}

/**
 * What a plugin serves. Register everything at the top level of the
 * module, then hand the plugin to serve(). Registration mistakes are
 * collected (see errors()) and make every call, describe included, fail
 * with an internal error naming them, so the host refuses the plugin at
 * load with a clear message.
 */
export class Plugin {
  name: string;
  version: string;
  private title_: string = "";
  private description_: string = "";
  schemes: string[] = [];
  caps: string[] = [];
  requiredCaps: string[] = [];
  resources: Resource[] = [];
  templates: Template[] = [];
  prompts: Prompt[] = [];
  tools: Tool[] = [];
  private readers: Map<string, ReadHandler> = new Map();
  private templateEntries: Map<string, TemplateEntry> = new Map();
  private promptEntries: Map<string, PromptEntry> = new Map();
  private toolEntries: Map<string, ToolEntry> = new Map();
  private lister: ListHandler | null = null;
  private fallback: ReadHandler | null = null;
  private errs: string[] = [];

  /** Starts a plugin with its name ([a-z0-9][a-z0-9_-]{0,63}) and version. */
  constructor(name: string, version: string) {
    this.name = name;
    this.version = version;
  }

  /** Sets the human-readable title. */
  title(t: string): Plugin {
    this.title_ = t;
    return this;
  }

  /** Sets the description. */
  description(d: string): Plugin {
    this.description_ = d;
    return this;
  }

  private fail(msg: string): void {
    this.errs.push(msg);
  }

  /** Claims a URI scheme; every URI the plugin serves must use one of its schemes. */
  scheme(s: string): Plugin {
    s = asciiLower(s);
    if (!validScheme(s)) this.fail("scheme " + s + " is not a lowercase URI scheme");
    else if (this.schemes.includes(s)) this.fail("scheme " + s + " claimed twice");
    else this.schemes.push(s);
    return this;
  }

  /** Asks for a host capability (see Cap); only granted ones work, the others answer Denied. */
  request(cap: string): Plugin {
    if (!capabilities.includes(cap)) this.fail("unknown capability " + cap);
    else if (!this.caps.includes(cap)) this.caps.push(cap);
    return this;
  }

  /**
   * Asks for a capability the plugin cannot work without (ABI 1.2):
   * `corral plugin check` fails when the operator does not grant it.
   */
  require(cap: string): Plugin {
    this.request(cap);
    if (this.caps.includes(cap) && !this.requiredCaps.includes(cap)) this.requiredCaps.push(cap);
    return this;
  }

  /** Declares a static resource, listed by the host without calling the plugin, and its reader. */
  resource(r: Resource, read: ReadHandler): Plugin {
    if (r.uri.length == 0 || r.name.length == 0) this.fail("resource " + r.uri + " needs a uri and a name");
    else if (this.readers.has(r.uri)) this.fail("resource " + r.uri + " declared twice");
    else {
      this.readers.set(r.uri, read);
      this.resources.push(r);
    }
    return this;
  }

  /**
   * Declares a resource template, the reader of URIs matching it and,
   * optionally, a completion handler for its variables.
   */
  template(t: Template, read: ReadHandler, complete: CompleteHandler | null = null): Plugin {
    if (t.uriTemplate.length == 0 || t.name.length == 0) {
      this.fail("template " + t.uriTemplate + " needs a uriTemplate and a name");
      return this;
    }
    if (this.templateEntries.has(t.uriTemplate)) {
      this.fail("template " + t.uriTemplate + " declared twice");
      return this;
    }
    const vars = templateVariables(t.uriTemplate);
    if (complete != null && t.complete.length == 0) t.complete = vars;
    for (let i = 0; i < t.complete.length; i++) {
      if (!vars.includes(t.complete[i])) {
        this.fail("template " + t.uriTemplate + ": completable variable " + t.complete[i] + " is not in the template");
      }
    }
    if (complete == null && t.complete.length > 0) {
      this.fail("template " + t.uriTemplate + " declares completable variables but has no completion handler");
    }
    this.templateEntries.set(t.uriTemplate, new TemplateEntry(read, complete, t.complete));
    this.templates.push(t);
    return this;
  }

  /** Declares a prompt, its handler and, optionally, a completion handler for its arguments. */
  prompt(p: Prompt, get: PromptHandler, complete: CompleteHandler | null = null): Plugin {
    if (!validName(p.name)) {
      this.fail("prompt name " + p.name + " must match [A-Za-z0-9_.-]{1,128}");
      return this;
    }
    if (this.promptEntries.has(p.name)) {
      this.fail("prompt " + p.name + " declared twice");
      return this;
    }
    const names: string[] = [];
    const required: string[] = [];
    for (let i = 0; i < p.arguments.length; i++) {
      const a = p.arguments[i];
      if (a.name.length == 0 || names.includes(a.name)) {
        this.fail("prompt " + p.name + ": argument names must be non-empty and unique");
      }
      names.push(a.name);
      if (a.required) required.push(a.name);
    }
    if (complete != null && p.complete.length == 0) p.complete = names;
    for (let i = 0; i < p.complete.length; i++) {
      if (!names.includes(p.complete[i])) {
        this.fail("prompt " + p.name + ": completable argument " + p.complete[i] + " is not an argument");
      }
    }
    if (complete == null && p.complete.length > 0) {
      this.fail("prompt " + p.name + " declares completable arguments but has no completion handler");
    }
    this.promptEntries.set(p.name, new PromptEntry(get, complete, p.complete, required));
    this.prompts.push(p);
    return this;
  }

  /** Declares a tool and its handler. */
  tool(t: Tool, call: ToolHandler): Plugin {
    if (!validName(t.name)) {
      this.fail("tool name " + t.name + " must match [A-Za-z0-9_.-]{1,128}");
      return this;
    }
    if (this.toolEntries.has(t.name)) {
      this.fail("tool " + t.name + " declared twice");
      return this;
    }
    if (t.taskSupport.length > 0 && !t.tasks && t.taskSupport != TaskSupport.Forbidden) {
      this.fail("tool " + t.name + ": task support " + t.taskSupport + " is not forbidden, optional or required");
      return this;
    }
    if (t.taskDeadlineMs < 0 || t.taskDeadlineMs > 86400000) {
      this.fail("tool " + t.name + ": task deadline " + t.taskDeadlineMs.toString() + " ms is not between 1 and 86400000");
      return this;
    }
    if (!t.tasks && (t.inputFirst || t.taskDeadlineMs > 0)) {
      this.fail("tool " + t.name + ": inputFirst and taskDeadlineMs need task support optional or required");
      return this;
    }
    const required: string[] = [];
    if (t.inputSchema.length > 0) {
      const schema = parseString(t.inputSchema);
      if (schema == null || !schema.isObject || schema.getString("type") != "object") {
        this.fail("tool " + t.name + ': input schema must be a JSON object with type "object"');
        return this;
      }
      const req = schema.get("required");
      if (req != null && req.isArray) {
        for (let i = 0; i < req.items.length; i++) required.push(req.items[i].string);
      }
    }
    this.toolEntries.set(t.name, new ToolEntry(call, required));
    this.tools.push(t);
    return this;
  }

  /** Sets the lister of dynamic resources (static ones are listed by the host). */
  list(handler: ListHandler): Plugin {
    this.lister = handler;
    return this;
  }

  /**
   * Sets the reader of URIs in the plugin's schemes that are neither a
   * static resource nor matched to a template; without it they are not found.
   */
  reader(handler: ReadHandler): Plugin {
    this.fallback = handler;
    return this;
  }

  /** Every registration mistake, empty when there is none. */
  errors(): string[] {
    const errs = this.errs.slice(0);
    if (!validPluginName(this.name)) errs.push("plugin name " + this.name + " must match [a-z0-9][a-z0-9_-]{0,63}");
    if (this.version.length == 0) errs.push("plugin version is empty");
    for (let i = 0; i < this.resources.length; i++) {
      if (!this.owns(this.resources[i].uri)) errs.push("resource " + this.resources[i].uri + " is outside the plugin's schemes");
    }
    for (let i = 0; i < this.templates.length; i++) {
      const t = this.templates[i].uriTemplate;
      if (!this.owns(t)) errs.push("template " + t + " is outside the plugin's schemes");
    }
    if ((this.lister != null || this.fallback != null) && this.schemes.length == 0) {
      errs.push("a lister or reader needs a scheme");
    }
    return errs;
  }

  /** Whether uri uses one of the plugin's schemes. */
  owns(uri: string): bool {
    const colon = uri.indexOf(":");
    return colon > 0 && this.schemes.includes(asciiLower(uri.substring(0, colon)));
  }

  /** Encodes the manifest (describe's answer). */
  writeManifest(w: Writer): void {
    w.byte(0x7b).key("name", true).str(this.name).key("version").str(this.version).key("abi").int(1);
    w.optStr("title", this.title_).optStr("description", this.description_);
    if (this.schemes.length > 0) w.key("schemes").strings(this.schemes);
    if (this.resources.length > 0) {
      w.key("resources").byte(0x5b);
      for (let i = 0; i < this.resources.length; i++) {
        if (i > 0) w.byte(0x2c);
        this.resources[i].write(w);
      }
      w.byte(0x5d);
    }
    if (this.templates.length > 0) {
      w.key("templates").byte(0x5b);
      for (let i = 0; i < this.templates.length; i++) {
        if (i > 0) w.byte(0x2c);
        this.templates[i].write(w);
      }
      w.byte(0x5d);
    }
    if (this.prompts.length > 0) {
      w.key("prompts").byte(0x5b);
      for (let i = 0; i < this.prompts.length; i++) {
        if (i > 0) w.byte(0x2c);
        this.prompts[i].write(w);
      }
      w.byte(0x5d);
    }
    if (this.tools.length > 0) {
      w.key("tools").byte(0x5b);
      for (let i = 0; i < this.tools.length; i++) {
        if (i > 0) w.byte(0x2c);
        this.tools[i].write(w);
      }
      w.byte(0x5d);
    }
    if (this.caps.length > 0) w.key("capabilities").strings(this.caps);
    if (this.requiredCaps.length > 0) w.key("requiredCapabilities").strings(this.requiredCaps);
    if (this.lister != null) w.key("listsResources").bool(true);
    w.byte(0x7d);
  }

  /**
   * Runs one operation on the JSON request at [ptr, ptr+len) and writes
   * the response into out; returns the status (0 OK, 1 error, 2
   * input_required). Tests call it directly.
   */
  handle(op: i32, ptr: usize, len: usize, out: Writer): i32 {
    out.reset();
    body.reset();
    if (op == 1) {
      this.writeManifest(out);
      return 0;
    }
    const req = parse(ptr, len);
    if (req == null || !req.isObject) {
      return writeError(out, Code.InvalidParams, "malformed request", "");
    }
    switch (op) {
      case 2:
        return this.listOp(req, out);
      case 3:
        return this.readOp(req, out);
      case 4:
        return this.promptOp(req, out);
      case 5:
        return this.toolOp(req, out);
      case 6:
        return this.completeOp(req, out);
    }
    return writeError(out, Code.NotFound, "unknown operation", "");
  }

  private listOp(v: Value, out: Writer): i32 {
    const req = ListRequest.from(v);
    const res = new ListResponse();
    const list = this.lister;
    if (list != null) list(req, res);
    if (res.errorCode.length > 0) return writeError(out, res.errorCode, res.errorMessage, res.errorData);
    if (res.uris.length > req.limit) {
      return writeError(out, Code.Internal, "lister returned " + res.uris.length.toString() + " resources, over the limit of " + req.limit.toString(), "");
    }
    for (let i = 0; i < res.uris.length; i++) {
      if (!this.owns(res.uris[i])) return writeError(out, Code.Internal, "lister returned " + res.uris[i] + ", outside the plugin's schemes", "");
    }
    out.raw('{"resources":[').bytes(body.ptr, body.len).byte(0x5d);
    if (res.cursor.length > 0) out.key("nextCursor").str(res.cursor);
    out.byte(0x7d);
    return 0;
  }

  private readOp(v: Value, out: Writer): i32 {
    const req = ReadRequest.from(v);
    let read: ReadHandler | null = null;
    if (this.readers.has(req.uri)) read = this.readers.get(req.uri);
    else if (req.template.length > 0 && this.templateEntries.has(req.template)) read = this.templateEntries.get(req.template).read;
    else read = this.fallback;
    if (read == null) return writeError(out, Code.NotFound, "resource not found: " + req.uri, "");
    const res = new ReadResponse();
    read(req, res);
    const st = replied(res, out);
    if (st >= 0) return st;
    if (res.count == 0) return writeError(out, Code.Internal, "read handler returned no contents for " + req.uri, "");
    out.raw('{"contents":[').bytes(body.ptr, body.len).byte(0x5d);
    if (res.ttlMs >= 0) out.key("ttlMs").int(res.ttlMs);
    out.byte(0x7d);
    return 0;
  }

  private promptOp(v: Value, out: Writer): i32 {
    const req = PromptRequest.from(v);
    if (!this.promptEntries.has(req.name)) return writeError(out, Code.NotFound, "prompt " + req.name + " not found", "");
    const e = this.promptEntries.get(req.name);
    for (let i = 0; i < e.required.length; i++) {
      if (req.argument(e.required[i]).length == 0) {
        return writeError(out, Code.InvalidParams, "prompt " + req.name + ": missing required argument " + e.required[i], "");
      }
    }
    const res = new PromptResponse();
    e.get(req, res);
    const st = replied(res, out);
    if (st >= 0) return st;
    out.byte(0x7b);
    if (res.desc.length > 0) out.key("description", true).str(res.desc).byte(0x2c);
    out.raw('"messages":[').bytes(body.ptr, body.len).raw("]}");
    return 0;
  }

  private toolOp(v: Value, out: Writer): i32 {
    const req = ToolRequest.from(v);
    if (!this.toolEntries.has(req.name)) return writeError(out, Code.NotFound, "tool " + req.name + " not found", "");
    if (!req.arguments.isObject) return writeError(out, Code.InvalidParams, "tool " + req.name + ": arguments must be a JSON object", "");
    const e = this.toolEntries.get(req.name);
    const res = new ToolResponse();
    let missing = "";
    for (let i = 0; i < e.required.length; i++) {
      if (!req.arguments.has(e.required[i])) {
        missing = e.required[i];
        break;
      }
    }
    if (missing.length > 0) res.error("missing required argument " + missing);
    else e.call(req, res);
    const st = replied(res, out);
    if (st >= 0) return st;
    out.raw('{"content":[').bytes(body.ptr, body.len).byte(0x5d);
    if (res.structuredContent.length > 0) out.key("structuredContent").raw(res.structuredContent);
    if (res.isError) out.key("isError").bool(true);
    out.byte(0x7d);
    return 0;
  }

  private completeOp(v: Value, out: Writer): i32 {
    const req = CompleteRequest.from(v);
    let fn: CompleteHandler | null = null;
    let canFill: string[] = [];
    if (req.refType == "ref/prompt") {
      if (!this.promptEntries.has(req.refName)) return writeError(out, Code.NotFound, "prompt " + req.refName + " not found", "");
      const e = this.promptEntries.get(req.refName);
      fn = e.complete;
      canFill = e.canFill;
    } else if (req.refType == "ref/resource") {
      if (!this.templateEntries.has(req.refURI)) return writeError(out, Code.NotFound, "template " + req.refURI + " not found", "");
      const e = this.templateEntries.get(req.refURI);
      fn = e.complete;
      canFill = e.canFill;
    } else {
      return writeError(out, Code.InvalidParams, "unknown completion ref type " + req.refType, "");
    }
    const res = new Completion();
    if (fn != null && canFill.includes(req.argument)) {
      fn(req, res);
      if (res.errorCode.length > 0) return writeError(out, res.errorCode, res.errorMessage, res.errorData);
    }
    let total = res.totalMatches;
    if (total < res.n) total = res.n;
    out.raw('{"completion":{"values":').strings(res.values).key("total").int(total);
    if (total > res.values.length) out.key("hasMore").bool(true);
    out.raw("}}");
    return 0;
  }
}

/** Writes a guest error object and returns status 1. */
function writeError(out: Writer, code: string, message: string, data: string): i32 {
  out.reset().byte(0x7b).key("code", true).str(code).key("message").str(message);
  if (data.length > 0) out.key("data").raw(data);
  out.byte(0x7d);
  return 1;
}

/** Writes an error or input_required answer and returns its status, or -1 for a result. */
function replied(res: Reply, out: Writer): i32 {
  const ask = res.asking;
  if (ask != null) {
    out.reset();
    ask.write(out);
    return 2;
  }
  if (res.errorCode.length > 0) return writeError(out, res.errorCode, res.errorMessage, res.errorData);
  return -1;
}

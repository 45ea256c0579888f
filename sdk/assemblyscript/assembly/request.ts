// The requests handlers receive and the responses they fill in
// (abi/ABI.md §7.2–7.7).

import { Kind, Value, Writer, JSONObject } from "./json";
import { base64Encode } from "./base64";
import { Resource } from "./manifest";

/** Who a request is served for; the id may be empty for anonymous use. */
export class Principal {
  id: string = "";
  groups: string[] = [];

  static from(v: Value | null): Principal {
    const p = new Principal();
    if (v == null) return p;
    p.id = v.getString("id");
    const g = v.get("groups");
    if (g != null && g.isArray) {
      for (let i = 0; i < g.items.length; i++) {
        if (g.items[i].isString) p.groups.push(g.items[i].string);
      }
    }
    return p;
  }
}

/** A client's answer to an elicitation. */
export class Elicited {
  /** accept, decline or cancel. */
  action: string = "";
  /** The submitted form (an object) when accepted, or null. */
  content: Value | null = null;
}

/**
 * What a request carries for input_required (ABI 1.1): the client's
 * capabilities, its answers to earlier input requests and the handler's
 * own state from the answer that asked.
 */
export class Input {
  clientCapabilities: Value | null = null;
  inputResponses: Value | null = null;
  /** The state the handler returned with its input requests, or "". */
  state: string = "";

  static from(v: Value): Input {
    const in_ = new Input();
    in_.clientCapabilities = v.get("clientCapabilities");
    in_.inputResponses = v.get("inputResponses");
    in_.state = v.getString("state");
    return in_;
  }

  /** Whether the client declared a capability ("elicitation", "sampling", "roots"). */
  hasCapability(name: string): bool {
    const caps = this.clientCapabilities;
    if (caps == null) return false;
    const c = caps.get(name);
    return c != null && c.isObject;
  }

  private answer(key: string): Value | null {
    const r = this.inputResponses;
    if (r == null) return null;
    const a = r.get(key);
    return a != null && a.isObject ? a : null;
  }

  /** Whether the client answered the input request keyed key. */
  answered(key: string): bool {
    return this.answer(key) != null;
  }

  /** The client's answer to the elicitation keyed key, or null. */
  elicitation(key: string): Elicited | null {
    const a = this.answer(key);
    if (a == null) return null;
    const action = a.getString("action");
    if (action.length == 0) return null;
    const e = new Elicited();
    e.action = action;
    const c = a.get("content");
    if (c != null && c.isObject) e.content = c;
    return e;
  }

  /** The text of the client's answer to the sampling request keyed key, or null. */
  sampled(key: string): string | null {
    const a = this.answer(key);
    if (a == null) return null;
    const c = a.get("content");
    return c != null ? c.getString("text") : "";
  }

  /** The root URIs of the client's answer to the roots/list request keyed key, or null. */
  roots(key: string): string[] | null {
    const a = this.answer(key);
    if (a == null) return null;
    const out: string[] = [];
    const list = a.get("roots");
    if (list != null && list.isArray) {
      for (let i = 0; i < list.items.length; i++) out.push(list.items[i].getString("uri"));
    }
    return out;
  }
}

function stringMap(v: Value | null): Map<string, string> {
  return v != null && v.isObject ? v.stringMap() : new Map<string, string>();
}

function lookup(m: Map<string, string>, key: string): string {
  return m.has(key) ? m.get(key) : "";
}

/** A list_resources request: one page of the plugin's dynamic resources. */
export class ListRequest {
  /** "" for the first page, else a cursor the plugin returned. */
  cursor: string = "";
  /** The most resources the page may hold. */
  limit: i32 = 100;
  principal: Principal = new Principal();

  static from(v: Value): ListRequest {
    const r = new ListRequest();
    r.cursor = v.getString("cursor");
    const limit = <i32>v.getNumber("limit");
    if (limit > 0) r.limit = limit;
    r.principal = Principal.from(v.get("principal"));
    return r;
  }
}

/** A read_resource request. */
export class ReadRequest {
  uri: string = "";
  /** The template the host matched the URI to, or "". */
  template: string = "";
  /** The template's variables, percent-decoded. */
  variables: Map<string, string> = new Map();
  principal: Principal = new Principal();
  input: Input = new Input();

  /** The value of a template variable, or "". */
  variable(name: string): string {
    return lookup(this.variables, name);
  }

  static from(v: Value): ReadRequest {
    const r = new ReadRequest();
    r.uri = v.getString("uri");
    r.template = v.getString("template");
    r.variables = stringMap(v.get("variables"));
    r.principal = Principal.from(v.get("principal"));
    r.input = Input.from(v);
    return r;
  }
}

/** A get_prompt request. */
export class PromptRequest {
  name: string = "";
  arguments: Map<string, string> = new Map();
  principal: Principal = new Principal();
  input: Input = new Input();

  /** The value of an argument, or "". */
  argument(name: string): string {
    return lookup(this.arguments, name);
  }

  static from(v: Value): PromptRequest {
    const r = new PromptRequest();
    r.name = v.getString("name");
    r.arguments = stringMap(v.get("arguments"));
    r.principal = Principal.from(v.get("principal"));
    r.input = Input.from(v);
    return r;
  }
}

/** A call_tool request; arguments is the client's JSON object. */
export class ToolRequest {
  name: string = "";
  arguments: Value = new Value();
  principal: Principal = new Principal();
  input: Input = new Input();

  static from(v: Value): ToolRequest {
    const r = new ToolRequest();
    r.name = v.getString("name");
    const a = v.get("arguments");
    if (a != null && !a.isNull) r.arguments = a;
    else r.arguments.kind = Kind.Object;
    r.principal = Principal.from(v.get("principal"));
    r.input = Input.from(v);
    return r;
  }
}

/** A complete request for one argument of a prompt or template variable. */
export class CompleteRequest {
  /** "ref/prompt" or "ref/resource". */
  refType: string = "";
  /** The prompt's name (ref/prompt). */
  refName: string = "";
  /** The template (ref/resource). */
  refURI: string = "";
  /** The argument or variable being completed. */
  argument: string = "";
  /** Its partial value. */
  value: string = "";
  /** Values already chosen for other arguments. */
  arguments: Map<string, string> = new Map();
  principal: Principal = new Principal();

  static from(v: Value): CompleteRequest {
    const r = new CompleteRequest();
    const ref = v.get("ref");
    if (ref != null) {
      r.refType = ref.getString("type");
      r.refName = ref.getString("name");
      r.refURI = ref.getString("uri");
    }
    const a = v.get("argument");
    if (a != null) {
      r.argument = a.getString("name");
      r.value = a.getString("value");
    }
    r.arguments = stringMap(v.get("arguments"));
    r.principal = Principal.from(v.get("principal"));
    return r;
  }
}

/** Guest error codes (abi/ABI.md §10). */
export namespace Code {
  export const NotFound = "not_found";
  export const InvalidParams = "invalid_params";
  export const Internal = "internal";
  export const Unavailable = "unavailable";
}

/**
 * Input requests a handler sends instead of an answer (input_required):
 * keyed by names the handler chooses.
 */
export class InputRequests {
  state: string = "";
  keys: string[] = [];
  /** The requests as JSON objects ({"method": …, "params": …}). */
  requests: string[] = [];

  private add(key: string, method: string, params: string): InputRequests {
    this.keys.push(key);
    this.requests.push(new JSONObject().setString("method", method).setRaw("params", params).toString());
    return this;
  }

  /** A form elicitation: message and a JSON Schema object (JSON text) for the answer. */
  elicit(key: string, message: string, schema: string): InputRequests {
    const params = new JSONObject().setString("mode", "form").setString("message", message).setRaw("requestedSchema", schema);
    return this.add(key, "elicitation/create", params.toString());
  }

  /** A sampling request: one user text message. */
  sample(key: string, text: string, maxTokens: i32): InputRequests {
    const msg = new JSONObject()
      .setString("role", "user")
      .setRaw("content", new JSONObject().setString("type", "text").setString("text", text).toString());
    const params = new JSONObject().setRaw("messages", "[" + msg.toString() + "]").set("maxTokens", maxTokens);
    return this.add(key, "sampling/createMessage", params.toString());
  }

  /** A roots/list request. */
  listRoots(key: string): InputRequests {
    return this.add(key, "roots/list", "{}");
  }

  write(w: Writer): void {
    w.byte(0x7b);
    let first = true;
    if (this.keys.length > 0) {
      w.key("inputRequests", true).byte(0x7b);
      for (let i = 0; i < this.keys.length; i++) w.key(this.keys[i], i == 0).raw(this.requests[i]);
      w.byte(0x7d);
      first = false;
    }
    if (this.state.length > 0) w.key("state", first).str(this.state);
    w.byte(0x7d);
  }
}

// The body of the response being built (its list items), reused by every
// call: one call is served at a time.
export const body = new Writer();

/**
 * What every response can say instead of its result: a guest error or a
 * request for input. The first error set wins.
 */
export class Reply {
  /** The error code, or "" while the reply is not an error. */
  errorCode: string = "";
  errorMessage: string = "";
  /** Optional JSON text for the error's data member. */
  errorData: string = "";
  asking: InputRequests | null = null;
  /** The number of items in body. */
  protected n: i32 = 0;

  /** Fails with a guest error code (see Code) and a short message safe for clients. */
  fail(code: string, message: string, data: string = ""): void {
    if (this.errorCode.length > 0) return;
    this.errorCode = code.length > 0 ? code : Code.Internal;
    this.errorMessage = message;
    this.errorData = data;
  }
  /** The thing the request named does not exist. */
  notFound(message: string): void {
    this.fail(Code.NotFound, message);
  }
  /** The request's arguments are wrong. */
  invalidParams(message: string): void {
    this.fail(Code.InvalidParams, message);
  }
  /** The plugin failed. */
  internal(message: string): void {
    this.fail(Code.Internal, message);
  }
  /** A dependency is down; the client may retry. */
  unavailable(message: string): void {
    this.fail(Code.Unavailable, message);
  }

  /**
   * Asks the client for input before answering; state comes back (sealed
   * by the host) in the retried request's input.state.
   */
  needInput(state: string = ""): InputRequests {
    const r = new InputRequests();
    r.state = state;
    this.asking = r;
    return r;
  }

  /** Starts the next item of the body. */
  protected item(): Writer {
    if (this.n++ > 0) body.byte(0x2c);
    return body;
  }
}

function writeContents(w: Writer, uri: string, mimeType: string): void {
  w.byte(0x7b).key("uri", true).str(uri).optStr("mimeType", mimeType);
}

/** The contents of a resource read. */
export class ReadResponse extends Reply {
  /** A caching hint in milliseconds, or -1. */
  ttlMs: i64 = -1;

  /** Adds text contents (MCP TextResourceContents). */
  text(uri: string, text: string, mimeType: string = ""): ReadResponse {
    const w = this.item();
    writeContents(w, uri, mimeType);
    w.key("text").str(text).byte(0x7d);
    return this;
  }

  /** Adds binary contents (MCP BlobResourceContents). */
  blob(uri: string, data: Uint8Array, mimeType: string = ""): ReadResponse {
    const w = this.item();
    writeContents(w, uri, mimeType);
    w.key("blob").str(base64Encode(data)).byte(0x7d);
    return this;
  }

  /** Sets the caching hint. */
  ttl(ms: i64): ReadResponse {
    this.ttlMs = ms;
    return this;
  }

  get count(): i32 {
    return this.n;
  }
}

/** One page of dynamic resources. */
export class ListResponse extends Reply {
  cursor: string = "";
  uris: string[] = [];

  /** Adds a resource to the page. */
  add(r: Resource): ListResponse {
    r.write(this.item());
    this.uris.push(r.uri);
    return this;
  }

  /** Sets the cursor of the next page ("" after the last page). */
  next(cursor: string): ListResponse {
    this.cursor = cursor;
    return this;
  }
}

/** The messages of a rendered prompt. */
export class PromptResponse extends Reply {
  desc: string = "";

  /** Sets the description of the rendered prompt. */
  description(d: string): PromptResponse {
    this.desc = d;
    return this;
  }

  /** Adds a message whose content block is JSON text. */
  message(role: string, content: string): PromptResponse {
    this.item().byte(0x7b).key("role", true).str(role).key("content").raw(content).byte(0x7d);
    return this;
  }

  /** Adds a text message from the user. */
  user(text: string): PromptResponse {
    return this.textMessage("user", text);
  }

  /** Adds a text message from the assistant. */
  assistant(text: string): PromptResponse {
    return this.textMessage("assistant", text);
  }

  private textMessage(role: string, text: string): PromptResponse {
    const w = this.item();
    w.byte(0x7b).key("role", true).str(role);
    w.key("content").byte(0x7b).key("type", true).str("text").key("text").str(text).byte(0x7d).byte(0x7d);
    return this;
  }

  /** Adds a message embedding a text resource. */
  resource(role: string, uri: string, text: string, mimeType: string = ""): PromptResponse {
    const w = this.item();
    w.byte(0x7b).key("role", true).str(role);
    w.key("content").byte(0x7b).key("type", true).str("resource").key("resource");
    writeContents(w, uri, mimeType);
    w.key("text").str(text).byte(0x7d).byte(0x7d).byte(0x7d);
    return this;
  }
}

/** The result of a tool call (MCP CallToolResult). */
export class ToolResponse extends Reply {
  structuredContent: string = "";
  isError: bool = false;

  /** Adds a text content block. */
  text(text: string): ToolResponse {
    this.item().byte(0x7b).key("type", true).str("text").key("text").str(text).byte(0x7d);
    return this;
  }

  /** Adds an image content block. */
  image(data: Uint8Array, mimeType: string): ToolResponse {
    const w = this.item();
    w.byte(0x7b).key("type", true).str("image").key("data").str(base64Encode(data));
    w.key("mimeType").str(mimeType).byte(0x7d);
    return this;
  }

  /** Adds an embedded text resource. */
  resource(uri: string, text: string, mimeType: string = ""): ToolResponse {
    const w = this.item();
    w.byte(0x7b).key("type", true).str("resource").key("resource");
    writeContents(w, uri, mimeType);
    w.key("text").str(text).byte(0x7d).byte(0x7d);
    return this;
  }

  /** Adds a content block given as JSON text. */
  content(json: string): ToolResponse {
    this.item().raw(json);
    return this;
  }

  /** Sets the structured result (JSON text of an object). */
  structured(json: string): ToolResponse {
    this.structuredContent = json;
    return this;
  }

  /**
   * Reports that the tool ran but failed: a text the model sees, with
   * isError set (a protocol error is fail/invalidParams).
   */
  error(message: string): ToolResponse {
    this.isError = true;
    return this.text(message);
  }
}

/** The most values a completion holds (MCP's limit). */
export const MAX_COMPLETIONS = 100;

/** Completion values for one argument. */
export class Completion extends Reply {
  values: string[] = [];
  /** The number of matches overall, or -1 for the number of values added. */
  totalMatches: i32 = -1;

  /** Adds a value; values beyond 100 count toward the total only. */
  add(value: string): Completion {
    this.n++;
    if (this.values.length < MAX_COMPLETIONS) this.values.push(value);
    return this;
  }

  /** Sets the number of matches overall. */
  total(n: i32): Completion {
    this.totalMatches = n;
    return this;
  }
}

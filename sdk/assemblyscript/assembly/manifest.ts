// What a plugin declares in its manifest (abi/ABI.md §7.1): resources,
// templates, prompts and tools. Each is a plain class, so a declaration can
// be an object literal:
//
//   p.resource({ uri: "notes://index", name: "index", mimeType: "text/markdown" }, readIndex);

import { Writer } from "./json";

/** A static resource (MCP Resource). */
export class Resource {
  uri: string = "";
  name: string = "";
  title: string = "";
  description: string = "";
  mimeType: string = "";
  /** The size in bytes, or -1 when unknown. */
  size: i64 = -1;
  /** MCP annotations as JSON text, or "". */
  annotations: string = "";

  write(w: Writer): void {
    w.byte(0x7b).key("uri", true).str(this.uri).key("name").str(this.name);
    w.optStr("title", this.title).optStr("description", this.description).optStr("mimeType", this.mimeType);
    if (this.size >= 0) w.key("size").int(this.size);
    w.optRaw("annotations", this.annotations).byte(0x7d);
  }
}

/** An RFC 6570 resource template (MCP ResourceTemplate). */
export class Template {
  uriTemplate: string = "";
  name: string = "";
  title: string = "";
  description: string = "";
  mimeType: string = "";
  annotations: string = "";
  /**
   * The variables the plugin completes; left empty with a completion
   * handler, every variable of the template.
   */
  complete: string[] = [];

  write(w: Writer): void {
    w.byte(0x7b).key("uriTemplate", true).str(this.uriTemplate).key("name").str(this.name);
    w.optStr("title", this.title).optStr("description", this.description).optStr("mimeType", this.mimeType);
    w.optRaw("annotations", this.annotations);
    if (this.complete.length > 0) w.key("complete").strings(this.complete);
    w.byte(0x7d);
  }
}

/** An argument of a prompt. */
export class PromptArgument {
  name: string = "";
  title: string = "";
  description: string = "";
  /** Required arguments are checked by the host and the SDK before the handler runs. */
  required: bool = false;
}

/** A prompt (MCP Prompt). */
export class Prompt {
  name: string = "";
  title: string = "";
  description: string = "";
  arguments: PromptArgument[] = [];
  /**
   * The arguments the plugin completes; left empty with a completion
   * handler, every argument.
   */
  complete: string[] = [];

  write(w: Writer): void {
    w.byte(0x7b).key("name", true).str(this.name);
    w.optStr("title", this.title).optStr("description", this.description);
    if (this.arguments.length > 0) {
      w.key("arguments").byte(0x5b);
      for (let i = 0; i < this.arguments.length; i++) {
        const a = this.arguments[i];
        if (i > 0) w.byte(0x2c);
        w.byte(0x7b).key("name", true).str(a.name);
        w.optStr("title", a.title).optStr("description", a.description);
        if (a.required) w.key("required").bool(true);
        w.byte(0x7d);
      }
      w.byte(0x5d);
    }
    if (this.complete.length > 0) w.key("complete").strings(this.complete);
    w.byte(0x7d);
  }
}

/** A tool (MCP Tool). */
export class Tool {
  name: string = "";
  title: string = "";
  description: string = "";
  /**
   * A JSON Schema object as JSON text; "" means {"type":"object"}. Its
   * top-level "required" list is enforced before the handler runs.
   */
  inputSchema: string = "";
  outputSchema: string = "";
  annotations: string = "";
  /**
   * Whether the tool's calls run as MCP tasks (docs/tasks.md; ABI 1.3):
   * TaskSupport.Optional or TaskSupport.Required; "" or
   * TaskSupport.Forbidden never.
   */
  taskSupport: string = "";
  /** With task support, input is gathered before the task (ABI 1.3). */
  inputFirst: bool = false;
  /**
   * With task support, how long each run inside a task may take, in
   * milliseconds (1 to 86400000), in place of the call deadline; 0 keeps
   * the call deadline (ABI 1.4).
   */
  taskDeadlineMs: i64 = 0;

  /** Whether the tool runs as a task for a client that supports tasks. */
  get tasks(): bool {
    return this.taskSupport == TaskSupport.Optional || this.taskSupport == TaskSupport.Required;
  }

  write(w: Writer): void {
    w.byte(0x7b).key("name", true).str(this.name);
    w.optStr("title", this.title).optStr("description", this.description);
    w.key("inputSchema").raw(this.inputSchema.length > 0 ? this.inputSchema : '{"type":"object"}');
    w.optRaw("outputSchema", this.outputSchema).optRaw("annotations", this.annotations);
    if (this.tasks) {
      w.key("execution").byte(0x7b).key("taskSupport", true).str(this.taskSupport).byte(0x7d);
      if (this.inputFirst) w.key("inputFirst").bool(true);
      if (this.taskDeadlineMs > 0) w.key("taskDeadlineMs").int(this.taskDeadlineMs);
    }
    w.byte(0x7d);
  }
}

/** Values of Tool.taskSupport. */
export namespace TaskSupport {
  export const Forbidden = "forbidden";
  export const Optional = "optional";
  export const Required = "required";
}

/** Capability names a plugin may ask for (abi/ABI.md §11). */
export namespace Cap {
  export const Log = "log";
  export const Notify = "notify";
  export const KV = "kv";
  export const Files = "files";
  export const HTTP = "http";
  export const Config = "config";
}

/** All capability names. */
export const capabilities: string[] = [Cap.Log, Cap.Notify, Cap.KV, Cap.Files, Cap.HTTP, Cap.Config];

/**
 * The variable names of an RFC 6570 URI template in order of appearance,
 * without operators and modifiers.
 */
export function templateVariables(tmpl: string): string[] {
  const vars: string[] = [];
  let rest = tmpl;
  while (rest.length > 0) {
    const open = rest.indexOf("{");
    if (open < 0) break;
    const end = rest.indexOf("}", open);
    if (end < 0) break;
    let expr = rest.substring(open + 1, end);
    rest = rest.substring(end + 1);
    if (expr.length > 0 && "+#./;?&".includes(expr.charAt(0))) expr = expr.substring(1);
    const parts = expr.split(",");
    for (let i = 0; i < parts.length; i++) {
      let v = parts[i];
      const colon = v.indexOf(":");
      if (colon >= 0) v = v.substring(0, colon);
      const star = v.indexOf("*");
      if (star >= 0) v = v.substring(0, star);
      if (v.length > 0 && !vars.includes(v)) vars.push(v);
    }
  }
  return vars;
}

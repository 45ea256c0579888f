// A guest whose registration is wrong in several ways: every call must
// fail with an internal error naming each mistake.

import { Plugin, ReadRequest, ReadResponse, TaskSupport, ToolRequest, ToolResponse, serve } from "../assembly/index";
export { corral_abi_v1, corral_buffer, corral_call } from "../assembly/index";

function read(req: ReadRequest, res: ReadResponse): void {
  res.text(req.uri, "x");
}

function call(req: ToolRequest, res: ToolResponse): void {
  res.text("x");
}

const p = new Plugin("Bad Name", "").scheme("ok").scheme("ok").scheme("no way");
p.request("telepathy");
p.resource({ uri: "other://x", name: "x" }, read);
p.resource({ uri: "ok://y", name: "" }, read);
p.template({ uriTemplate: "ok://{a}", name: "t", complete: ["b"] }, read);
p.tool({ name: "bad tool" }, call);
p.tool({ name: "t", inputSchema: '{"type":"string"}' }, call);
p.tool({ name: "u" }, call);
p.tool({ name: "u" }, call);
p.tool({ name: "v", taskSupport: "sometimes" }, call);
p.tool({ name: "w", taskDeadlineMs: 1000 }, call);
p.tool({ name: "x", taskSupport: TaskSupport.Required, taskDeadlineMs: -1 }, call);
serve(p);

/*
 * corral_test.c: native unit tests of the C SDK (sdk/c/corral.c) against a
 * fake host: the JSON writer and reader, base64, the dispatcher and its
 * argument checks, buffer growth and the capability wrappers. Built and run
 * by `make test-sdk-c` with the host's clang (sanitizers on):
 *
 *   clang -std=c11 -g -fsanitize=address,undefined -I sdk/c -o t sdk/c/test/corral_test.c sdk/c/corral.c && ./t
 *
 * With -DBAD_SETUP the plugin registers mistakes instead, and the test
 * checks that every call reports them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"

void *corral_export_buffer(uint32_t size);
int32_t corral_export_call(int32_t op, uint32_t len);

static int failures;

#define CHECK(cond, ...)                                                  \
	do {                                                                  \
		if (!(cond)) {                                                    \
			failures++;                                                   \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);               \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
		}                                                                 \
	} while (0)

/* ---- The fake host ---------------------------------------------------- */

static char result[1 << 20];
static size_t result_len;
static int results; /* set_result calls in the current call */
static char pending[4096];
static int32_t pending_len = -1;
static char kv_value[64];
static int32_t kv_len = -1;
static char logged[256], notified[256];

static int32_t produce(const char *s, size_t n) {
	memcpy(pending, s, n);
	return pending_len = (int32_t)n;
}

void corral_host_set_result(const void *ptr, size_t len) {
	results++;
	memcpy(result, ptr, len < sizeof result ? len : sizeof result);
	result_len = len;
}
int32_t corral_host_take(void *ptr, size_t len) {
	if (pending_len < 0) return CORRAL_ENOTFOUND;
	if (len < (size_t)pending_len) return CORRAL_ETOOLARGE;
	memcpy(ptr, pending, (size_t)pending_len);
	int32_t n = pending_len;
	pending_len = -1;
	return n;
}
int32_t corral_host_log(int32_t level, const void *ptr, size_t len) {
	snprintf(logged, sizeof logged, "%d %.*s", level, (int)len, (const char *)ptr);
	return 0;
}
int32_t corral_host_notify(int32_t kind, const void *ptr, size_t len) {
	snprintf(notified, sizeof notified, "%d %.*s", kind, (int)len, (const char *)ptr);
	return 0;
}
int32_t corral_host_progress(double progress, double total, const void *ptr, size_t len) {
	(void)progress, (void)total, (void)ptr, (void)len;
	return 0;
}
int32_t corral_host_kv_get(const void *key, size_t klen) {
	(void)key, (void)klen;
	return kv_len < 0 ? CORRAL_ENOTFOUND : produce(kv_value, (size_t)kv_len);
}
int32_t corral_host_kv_set(const void *key, size_t klen, const void *value, size_t vlen) {
	(void)key, (void)klen;
	if (vlen > sizeof kv_value) return CORRAL_ETOOLARGE;
	memcpy(kv_value, value, vlen);
	kv_len = (int32_t)vlen;
	return 0;
}
int32_t corral_host_kv_delete(const void *key, size_t klen) {
	(void)key, (void)klen;
	kv_len = -1;
	return 0;
}
int32_t corral_host_file_read(const void *path, size_t plen) {
	return plen == 4 && memcmp(path, "/r/a", 4) == 0 ? produce("data", 4) : CORRAL_EDENIED;
}
int32_t corral_host_file_stat(const void *path, size_t plen) { return corral_host_file_read(path, plen); }
int32_t corral_host_file_list(const void *path, size_t plen) { return corral_host_file_read(path, plen); }
int32_t corral_host_file_roots(void) { return produce("[\"/r\"]", 6); }
int32_t corral_host_http_fetch(const void *request, size_t rlen) {
	static const char get[] = "{\"method\":\"GET\",\"url\":\"http://x/\\\"q\"}";
	static const char post[] = "{\"method\":\"POST\",\"url\":\"http://x/\",\"headers\":{\"Content-Type\":\"text/plain\"},"
	                           "\"body\":\"aGk/Pz4+\"}";
	if (!(rlen == sizeof get - 1 && memcmp(request, get, rlen) == 0) &&
	    !(rlen == sizeof post - 1 && memcmp(request, post, rlen) == 0))
		return CORRAL_EINVALID;
	static const char resp[] = "{\"status\":201,\"headers\":{\"A\":\"b\"},\"body\":\"aGk/Pz4+\"}";
	return produce(resp, sizeof resp - 1);
}
int32_t corral_host_config_get(const void *key, size_t klen) {
	return klen == 5 && memcmp(key, "motto", 5) == 0 ? produce("be\0brave", 8) : CORRAL_ENOTFOUND;
}

/* call sends one request and returns the status; the response is in result. */
static int call(int op, const char *req) {
	size_t n = strlen(req);
	char *buf = corral_export_buffer((uint32_t)(n > 1024 ? n : 1024));
	if (!buf) return -100;
	memcpy(buf, req, n);
	results = 0;
	int st = corral_export_call(op, (uint32_t)n);
	CHECK(results == 1, "op %d: set_result called %d times", op, results);
	result[result_len < sizeof result ? result_len : sizeof result - 1] = 0;
	return st;
}

static void expect(int op, const char *req, int status, const char *want) {
	int st = call(op, req);
	CHECK(st == status && strcmp(result, want) == 0, "op %d %s\n  got %d %s\n want %d %s", op, req, st, result, status, want);
}

/* ---- The plugin under test -------------------------------------------- */

static int read_text(corral_call *c) {
	corral_text_contents(c, corral_uri(c), "text/plain", corral_variable(c, "v") ? corral_variable(c, "v") : "static");
	return CORRAL_OK;
}

static int read_blob(corral_call *c) {
	corral_blob_contents(c, corral_uri(c), NULL, "hi?\?>>", 6);
	corral_ttl(c, 60000);
	return CORRAL_OK;
}

static int read_big(corral_call *c) {
	char *s = corral_alloc(200001);
	memset(s, 'x', 200000), s[200000] = 0;
	corral_text_contents(c, corral_uri(c), NULL, s);
	return CORRAL_OK;
}

static int read_none(corral_call *c) { return (void)c, CORRAL_OK; }

static int complete_asks(corral_call *c) { return corral_elicit(c, "k", "no", "{}"); }

static int complete_many(corral_call *c) {
	char v[8];
	for (int i = 0; i < 150; i++) {
		snprintf(v, sizeof v, "%s%d", corral_partial(c), i);
		corral_completion(c, v);
	}
	return CORRAL_OK;
}

static int get_prompt(corral_call *c) {
	corral_message_text(c, "user", corral_argument(c, "who"));
	corral_prompt_description(c, "d");
	return CORRAL_OK;
}

static int echo(corral_call *c) {
	corral_str raw = corral_argument_json(c, "x");
	char *s = corral_alloc(raw.len + 1);
	memcpy(s, raw.ptr, raw.len), s[raw.len] = 0;
	corral_tool_text(c, s);
	corral_tool_structured(c, "{\"ok\":true}");
	return CORRAL_OK;
}

static int ask(corral_call *c) {
	corral_str answer = corral_input_response(c, "k");
	if (!answer.ptr) {
		corral_elicit(c, "k", "Sure?", "{\"type\":\"object\",\"properties\":{}}");
		return corral_input_state(c, "s1");
	}
	corral_tool_text(c, corral_state(c));
	return CORRAL_OK;
}

static int caps(corral_call *c) {
	corral_str v;
	const char *motto;
	corral_http_response r;
	CHECK(corral_kv_get("k", &v) == CORRAL_ENOTFOUND, "kv_get of an unset key");
	CHECK(corral_kv_set("k", "12", 2) == 0 && corral_kv_get("k", &v) == 2 && memcmp(v.ptr, "12", 3) == 0, "kv round trip");
	CHECK(corral_kv_delete("k") == 0 && corral_kv_get("k", &v) == CORRAL_ENOTFOUND, "kv_delete");
	CHECK(corral_config_get("motto", &motto) == 8 && memcmp(motto, "be\0brave", 9) == 0, "config_get");
	CHECK(corral_config_get("nope", &motto) == CORRAL_ENOTFOUND, "config_get of an unset key");
	CHECK(corral_file_read("/r/a", &v) == 4 && strcmp(v.ptr, "data") == 0, "file_read");
	CHECK(corral_file_read("/etc", &v) == CORRAL_EDENIED, "file_read outside the roots");
	CHECK(corral_file_roots(&v) == 6, "file_roots");
	CHECK(corral_http_get("http://x/\"q", &r) == 0 && r.status == 201 && r.body.len == 6 && memcmp(r.body.ptr, "hi?\?>>", 6) == 0,
	      "http_get: %d %.*s", r.status, (int)r.body.len, r.body.ptr);
	CHECK(corral_http_post("http://x/", "text/plain", "hi?\?>>", 6, &r) == 0 && r.status == 201, "http_post");
	CHECK(corral_http_get("http://elsewhere/", &r) == CORRAL_EINVALID, "http_get passes on the host's errno");
	CHECK(corral_log(CORRAL_LOG_WARN, "w") == 0 && strcmp(logged, "2 w") == 0, "log: %s", logged);
	CHECK(corral_notify_updated("t://a") == 0 && strcmp(notified, "1 t://a") == 0, "notify: %s", notified);
	CHECK(corral_notify_list_changed(CORRAL_TOOLS_CHANGED) == 0 && strcmp(notified, "4 ") == 0, "notify: %s", notified);
	CHECK(strcmp(corral_errno_name(CORRAL_EQUOTA), "quota exceeded") == 0 && strcmp(corral_errno_name(-99), "host error") == 0,
	      "errno names");
	CHECK(corral_alloc(CORRAL_ARENA_SIZE + 1) == NULL, "the arena refuses more than its size");
	corral_tool_text(c, "done");
	return CORRAL_OK;
}

static int list(corral_call *c) {
	for (long i = 0; i < corral_limit(c) + 1; i++) {
		int r = corral_list_resource(c, (corral_resource_def){.uri = "t://d", .name = "d"});
		CHECK((i < corral_limit(c)) == (r == 0), "list_resource %ld of %ld: %d", i, corral_limit(c), r);
	}
	corral_next_cursor(c, corral_cursor(c)[0] ? "" : "p2");
	return CORRAL_OK;
}

void corral_setup(void) {
#ifdef BAD_SETUP
	corral_plugin("Bad", "");
	corral_scheme("t");
	corral_scheme("t");
	corral_resource((corral_resource_def){.uri = "u://x", .name = "x"}, read_text);
	corral_tool((corral_tool_def){.name = "t", .input_schema = "{\"type\":\"string\"}"}, echo);
	corral_tool((corral_tool_def){.name = "t1", .input_schema = "{\"type\":\"object\"}", .task_support = "sometimes"}, echo);
	corral_tool((corral_tool_def){.name = "t2", .input_schema = "{\"type\":\"object\"}", .task_deadline_ms = 1000}, echo);
	corral_tool((corral_tool_def){.name = "t3", .input_schema = "{\"type\":\"object\"}", .task_support = CORRAL_TASK_OPTIONAL, .task_deadline_ms = -1}, echo);
	corral_request("telepathy");
	corral_prompt((corral_prompt_def){.name = "p", .arguments = {{.name = "a"}, {.name = "a"}}}, get_prompt, NULL);
#else
	corral_plugin("t", "1");
	corral_title("T \"quoted\"");
	corral_scheme("t");
	corral_require(CORRAL_CAP_KV);
	corral_request(CORRAL_CAP_LOG);
	corral_request(CORRAL_CAP_KV);
	corral_resource((corral_resource_def){.uri = "t://s", .name = "s", .mime_type = "text/plain"}, read_text);
	corral_resource((corral_resource_def){.uri = "T://blob", .name = "b"}, read_blob);
	corral_resource((corral_resource_def){.uri = "t://big", .name = "big"}, read_big);
	corral_resource((corral_resource_def){.uri = "t://none", .name = "none"}, read_none);
	corral_template((corral_template_def){.uri_template = "t://v/{v}", .name = "v", .complete = "v"}, read_text, complete_many);
	corral_prompt((corral_prompt_def){.name = "p", .arguments = {{.name = "who", .required = 1}, {.name = "x"}}}, get_prompt, NULL);
	corral_prompt((corral_prompt_def){.name = "q2", .arguments = {{.name = "a"}}, .complete = "a"}, get_prompt, complete_asks);
	corral_tool((corral_tool_def){.name = "echo", .input_schema = "{\"type\":\"object\",\"required\":[\"x\"]}"}, echo);
	corral_tool((corral_tool_def){.name = "ask", .input_schema = "{\"type\":\"object\"}"}, ask);
	corral_tool((corral_tool_def){.name = "caps", .input_schema = "{\"type\":\"object\"}"}, caps);
	corral_tool((corral_tool_def){.name = "job", .input_schema = "{\"type\":\"object\"}", .task_support = CORRAL_TASK_OPTIONAL,
	                              .input_first = 1, .task_deadline_ms = 300000}, echo);
	corral_tool((corral_tool_def){.name = "plain", .input_schema = "{\"type\":\"object\"}", .task_support = CORRAL_TASK_FORBIDDEN}, echo);
	corral_lister(list);
#endif
}

/* ---- Tests ------------------------------------------------------------ */

static void test_writer(void) {
	char mem[64];
	corral_buf b = {mem, 0, sizeof mem, 0, 0};
	corral_buf_string(&b, "a\"\\\n\x01\xc3\xa9\xff\xe2\x82", 10);
	CHECK(b.len == 26 && memcmp(mem, "\"a\\\"\\\\\\n\\u0001\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", b.len) == 0,
	      "escaped: %.*s", (int)b.len, mem);
	b.len = 0;
	corral_buf_int(&b, -9007199254740993LL);
	corral_buf_raw(&b, " ", 1);
	corral_buf_int(&b, 0);
	CHECK(b.len == 19 && memcmp(mem, "-9007199254740993 0", 19) == 0, "ints: %.*s", (int)b.len, mem);
	corral_buf small = {mem, 0, 4, 0, 0};
	corral_buf_string(&small, "toolong", 7);
	CHECK(small.overflow && small.len == 1, "a fixed buffer overflows instead of growing");
}

static void test_reader(void) {
	const char *doc = " {\"a\" : [1, {\"b\":\"x\"}], \"\\u0063\": \"\\ud83d\\ude00\\u00e9\\n\\/\", \"n\": -42, \"t\": true,"
	                  " \"deep\": [[[[[[[[[[[]]]]]]]]]]], \"s\": \"}\"} ";
	corral_str obj = {doc, strlen(doc)}, v, e;
	CHECK(corral_json_member(obj, "c", &v) && strcmp(corral_json_cstr(v), "\xf0\x9f\x98\x80\xc3\xa9\n/") == 0,
	      "an escaped key and a surrogate pair");
	long long n = 0;
	int t = 0;
	CHECK(corral_json_member(obj, "n", &v) && corral_json_int(v, &n) && n == -42, "int");
	CHECK(corral_json_member(obj, "t", &v) && corral_json_bool(v, &t) && t == 1, "bool");
	CHECK(corral_json_member(obj, "s", &v) && strcmp(corral_json_cstr(v), "}") == 0, "a brace inside a string");
	CHECK(!corral_json_member(obj, "missing", &v) && !corral_json_member(obj, "b", &v), "absent and nested members");
	CHECK(corral_json_member(obj, "a", &v), "array member");
	int count = 0;
	for (corral_str it = v; corral_json_next(&it, &e);) count++;
	CHECK(count == 2 && e.len == 9 && memcmp(e.ptr, "{\"b\":\"x\"}", 9) == 0, "array elements: %d", count);
	count = 0;
	for (corral_str it = obj; corral_json_next(&it, &e);) count++;
	CHECK(count == 6, "object values: %d", count);
	CHECK(corral_json_cstr((corral_str){"12", 2}) == NULL && !corral_json_int((corral_str){"1.5", 3}, &n), "wrong types");
	corral_str broken = {"{\"a\":", 5};
	CHECK(!corral_json_member(broken, "a", &v), "a truncated object");
}

static void test_dispatch(void) {
#ifdef BAD_SETUP
	const char *want = "{\"code\":\"internal\",\"message\":\"plugin name must match [a-z0-9][a-z0-9_-]{0,63}: Bad; plugin "
	                   "version is empty; scheme claimed twice: t; tool input schema must be a JSON object with \\\"type\\\": "
	                   "\\\"object\\\": t; tool task_support must be forbidden, optional or required: t1; tool input_first and task_deadline_ms need "
	                   "task_support optional or required: t2; tool task_deadline_ms must be between 1 and 86400000: t3; unknown capability telepathy; prompt names an argument twice: p; resource outside the plugin's schemes: u://x\"}";
	expect(1, "{}", 1, want);
	expect(3, "{\"uri\":\"t://s\"}", 1, want);
#else
	expect(1, "{}", 0,
	       "{\"name\":\"t\",\"version\":\"1\",\"abi\":1,\"title\":\"T \\\"quoted\\\"\",\"schemes\":[\"t\"],"
	       "\"resources\":[{\"uri\":\"t://s\",\"name\":\"s\",\"mimeType\":\"text/plain\"},{\"uri\":\"T://blob\",\"name\":\"b\"},"
	       "{\"uri\":\"t://big\",\"name\":\"big\"},{\"uri\":\"t://none\",\"name\":\"none\"}],"
	       "\"templates\":[{\"uriTemplate\":\"t://v/{v}\",\"name\":\"v\",\"complete\":[\"v\"]}],"
	       "\"prompts\":[{\"name\":\"p\",\"arguments\":[{\"name\":\"who\",\"required\":true},{\"name\":\"x\"}]},"
	       "{\"name\":\"q2\",\"arguments\":[{\"name\":\"a\"}],\"complete\":[\"a\"]}],"
	       "\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"required\":[\"x\"]}},"
	       "{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"caps\",\"inputSchema\":{\"type\":\"object\"}},"
	       "{\"name\":\"job\",\"inputSchema\":{\"type\":\"object\"},\"execution\":{\"taskSupport\":\"optional\"},\"inputFirst\":true,\"taskDeadlineMs\":300000},"
	       "{\"name\":\"plain\",\"inputSchema\":{\"type\":\"object\"}}],"
	       "\"capabilities\":[\"kv\",\"log\"],\"requiredCapabilities\":[\"kv\"],\"listsResources\":true}");
	expect(3, "{\"uri\":\"t://s\",\"principal\":{\"id\":\"a\"}}", 0, "{\"contents\":[{\"uri\":\"t://s\",\"mimeType\":\"text/plain\",\"text\":\"static\"}]}");
	expect(3, "{\"uri\":\"T://blob\"}", 0, "{\"contents\":[{\"uri\":\"T://blob\",\"blob\":\"aGk/Pz4+\"}],\"ttlMs\":60000}");
	expect(3, "{\"uri\":\"t://v/a%2Fb\",\"template\":\"t://v/{v}\",\"variables\":{\"v\":\"a/b\"}}", 0,
	       "{\"contents\":[{\"uri\":\"t://v/a%2Fb\",\"mimeType\":\"text/plain\",\"text\":\"a/b\"}]}");
	expect(3, "{\"uri\":\"t://nothing\"}", 1, "{\"code\":\"not_found\",\"message\":\"resource not found: t://nothing\"}");
	expect(3, "{\"uri\":\"t://none\"}", 1, "{\"code\":\"internal\",\"message\":\"read handler returned no contents for t://none\"}");
	CHECK(call(3, "{\"uri\":\"t://big\"}") == 0 && result_len == 200042, "a response over the static buffer: %zu bytes", result_len);
	CHECK(call(3, "{\"uri\":\"t://s\"}") == 0 && result_len < 100, "the grown buffer serves small responses too");

	expect(4, "{\"name\":\"p\",\"arguments\":{\"who\":\"\\u00e9 \\\"x\\\"\"}}", 0,
	       "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"\xc3\xa9 \\\"x\\\"\"}}],\"description\":\"d\"}");
	expect(4, "{\"name\":\"p\",\"arguments\":{\"who\":\"\"}}", 1, "{\"code\":\"invalid_params\",\"message\":\"missing required argument who\"}");
	expect(4, "{\"name\":\"q\"}", 1, "{\"code\":\"not_found\",\"message\":\"prompt not found: q\"}");

	expect(5, "{\"name\":\"echo\",\"arguments\":{\"x\":[1, {\"y\":2}]}}", 0,
	       "{\"content\":[{\"type\":\"text\",\"text\":\"[1, {\\\"y\\\":2}]\"}],\"structuredContent\":{\"ok\":true}}");
	expect(5, "{\"name\":\"echo\",\"arguments\":{}}", 0,
	       "{\"content\":[{\"type\":\"text\",\"text\":\"missing required argument \\\"x\\\"\"}],\"isError\":true}");
	expect(5, "{\"name\":\"echo\"}", 0,
	       "{\"content\":[{\"type\":\"text\",\"text\":\"missing required argument \\\"x\\\"\"}],\"isError\":true}");
	expect(5, "{\"name\":\"echo\",\"arguments\":[1]}", 1,
	       "{\"code\":\"invalid_params\",\"message\":\"arguments must be a JSON object: tool echo\"}");
	expect(5, "{\"name\":\"nope\"}", 1, "{\"code\":\"not_found\",\"message\":\"tool not found: nope\"}");
	expect(5, "{\"name\":\"ask\"}", 2,
	       "{\"inputRequests\":{\"k\":{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":\"Sure?\","
	       "\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}},\"state\":\"s1\"}");
	expect(5, "{\"name\":\"ask\",\"inputResponses\":{\"k\":{\"action\":\"accept\"}},\"state\":\"s1\"}", 0,
	       "{\"content\":[{\"type\":\"text\",\"text\":\"s1\"}]}");
	expect(5, "{\"name\":\"caps\",\"arguments\":{}}", 0, "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");

	CHECK(call(6, "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"t://v/{v}\"},\"argument\":{\"name\":\"v\",\"value\":\"a\"}}") == 0 &&
	          strstr(result, "\"a99\"]") && !strstr(result, "a100") && strstr(result, "\"total\":150,\"hasMore\":true}}"),
	      "the first 100 of 150 completions: %.80s…", result);
	expect(6, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"who\",\"value\":\"a\"}}", 0,
	       "{\"completion\":{\"values\":[],\"total\":0}}");
	expect(6, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"q2\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}", 1,
	       "{\"code\":\"internal\",\"message\":\"input_required answers only a read, a prompt or a tool\"}");
	expect(6, "{\"ref\":{\"type\":\"ref/other\"},\"argument\":{\"name\":\"v\"}}", 1,
	       "{\"code\":\"invalid_params\",\"message\":\"unknown completion ref type ref/other\"}");

	CHECK(call(2, "{\"cursor\":\"\",\"limit\":2}") == 0 &&
	          strcmp(result, "{\"resources\":[{\"uri\":\"t://d\",\"name\":\"d\"},{\"uri\":\"t://d\",\"name\":\"d\"}],\"nextCursor\":\"p2\"}") == 0,
	      "list: %s", result);
	expect(99, "{}", 1, "{\"code\":\"not_found\",\"message\":\"unknown operation\"}");
	CHECK(corral_export_buffer(1u << 20) != NULL, "a 1 MiB request buffer");
#endif
}

int main(void) {
	test_writer();
	test_reader();
	test_dispatch();
	if (failures) {
		fprintf(stderr, "FAIL: %d checks\n", failures);
		return 1;
	}
	puts("ok");
	return 0;
}

/*
 * fuzz_request.c: a libFuzzer target for the C SDK: the first byte picks
 * the operation, the rest is the request, dispatched through corral_call
 * to a small plugin whose handlers read every field the SDK offers. The
 * host's requests are well-formed JSON; this checks that anything else
 * (truncated strings, lone escapes, deep nesting) neither crashes nor
 * reads out of bounds, and that set_result is called once per call.
 * `make test-sdk-c` runs it for a few seconds:
 *
 *   clang -g -fsanitize=fuzzer,address,undefined -I sdk/c -o f sdk/c/test/fuzz_request.c sdk/c/corral.c
 *   ./f -max_total_time=10
 */
#include <stdlib.h>
#include <string.h>

#include "corral.h"

void *corral_export_buffer(uint32_t size);
int32_t corral_export_call(int32_t op, uint32_t len);

static int results;

void corral_host_set_result(const void *ptr, size_t len) {
	(void)ptr, (void)len;
	results++;
}
int32_t corral_host_take(void *ptr, size_t len) { return (void)ptr, (void)len, CORRAL_ENOTFOUND; }
int32_t corral_host_log(int32_t level, const void *ptr, size_t len) { return (void)level, (void)ptr, (void)len, 0; }
int32_t corral_host_notify(int32_t kind, const void *ptr, size_t len) { return (void)kind, (void)ptr, (void)len, 0; }
int32_t corral_host_progress(double progress, double total, const void *ptr, size_t len) {
	return (void)progress, (void)total, (void)ptr, (void)len, 0;
}
int32_t corral_host_kv_get(const void *key, size_t klen) { return (void)key, (void)klen, CORRAL_ENOTFOUND; }
int32_t corral_host_kv_set(const void *key, size_t klen, const void *value, size_t vlen) {
	return (void)key, (void)klen, (void)value, (void)vlen, 0;
}
int32_t corral_host_kv_delete(const void *key, size_t klen) { return (void)key, (void)klen, 0; }
int32_t corral_host_file_read(const void *path, size_t plen) { return (void)path, (void)plen, CORRAL_EDENIED; }
int32_t corral_host_file_stat(const void *path, size_t plen) { return (void)path, (void)plen, CORRAL_EDENIED; }
int32_t corral_host_file_list(const void *path, size_t plen) { return (void)path, (void)plen, CORRAL_EDENIED; }
int32_t corral_host_file_roots(void) { return CORRAL_EDENIED; }
int32_t corral_host_http_fetch(const void *request, size_t rlen) { return (void)request, (void)rlen, CORRAL_EDENIED; }
int32_t corral_host_config_get(const void *key, size_t klen) { return (void)key, (void)klen, CORRAL_ENOTFOUND; }

/* walk visits every element of v, depth first, decoding what it can. */
static void walk(corral_str v, int depth) {
	long long n;
	int b;
	corral_json_cstr(v);
	corral_json_int(v, &n);
	corral_json_bool(v, &b);
	if (depth > 8) return;
	corral_str e;
	for (corral_str it = v; corral_json_next(&it, &e);) walk(e, depth + 1);
}

static int everything(corral_call *c) {
	corral_uri(c), corral_variable(c, "v"), corral_name(c), corral_argument(c, "a");
	corral_completing(c), corral_partial(c), corral_principal(c), corral_cursor(c), corral_state(c);
	walk(corral_argument_json(c, "a"), 0);
	walk(corral_input_response(c, "k"), 0);
	walk(corral_request_json(c), 0);
	switch (corral_op(c)) {
	case 3: corral_text_contents(c, "t://x", NULL, corral_argument(c, "a")); break;
	case 4: corral_message_text(c, "user", corral_uri(c)); break;
	case 5: corral_tool_text(c, corral_partial(c)); break;
	case 6: corral_completion(c, corral_cursor(c)); break;
	case 2: corral_list_resource(c, (corral_resource_def){.uri = "t://x", .name = "x"}); break;
	}
	return CORRAL_OK;
}

void corral_setup(void) {
	corral_plugin("fuzz", "1");
	corral_scheme("t");
	corral_resource((corral_resource_def){.uri = "t://s", .name = "s"}, everything);
	corral_template((corral_template_def){.uri_template = "t://v/{v}", .name = "v", .complete = "v"}, everything, everything);
	corral_prompt((corral_prompt_def){.name = "p", .arguments = {{.name = "a", .required = 1}}, .complete = "a"}, everything, everything);
	corral_tool((corral_tool_def){.name = "t", .input_schema = "{\"type\":\"object\",\"required\":[\"a\"]}"}, everything);
	corral_lister(everything);
	corral_reader(everything);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (size == 0) return 0;
	char *buf = corral_export_buffer((uint32_t)(size < 1024 ? 1024 : size));
	memcpy(buf, data + 1, size - 1);
	results = 0;
	corral_export_call(data[0] % 8, (uint32_t)(size - 1));
	if (results != 1) abort();
	return 0;
}

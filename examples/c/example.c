/*
 * example.c: the C port of the example provider every corral SDK ports
 * (docs/plugins.md §2); interop's TestJudge checks it over the wire.
 *
 *   clang --target=wasm32-wasi --sysroot=/usr -Oz -mexec-model=reactor \
 *         -Wl,--strip-all -I ../../sdk/c -o example.wasm example.c ../../sdk/c/corral.c
 */
#include <string.h>

#include "corral.h"

#define PLAIN "text/plain"
#define COUNTER_URI "example://counter"
#define COUNTER_KEY "counter"
#define NO_ARGUMENTS "{\"type\":\"object\",\"properties\":{}}"

/* The greetings, in the order completions list them. */
static const struct {
	const char *code, *greeting;
} languages[] = {{"de", "Hallo"}, {"en", "Hello"}, {"es", "Hola"}, {"fr", "Bonjour"}, {"it", "Ciao"}};
#define NLANGUAGES (sizeof languages / sizeof languages[0])

static const char *greeting(const char *code) {
	for (size_t i = 0; code && i < NLANGUAGES; i++)
		if (strcmp(languages[i].code, code) == 0) return languages[i].greeting;
	return NULL;
}

/* concat joins NULL-terminated parts into the call's arena. */
static const char *concat(const char *const *parts) {
	size_t n = 0;
	for (const char *const *p = parts; *p; p++) n += strlen(*p);
	char *s = corral_alloc(n + 1);
	if (!s) return "";
	for (n = 0; *parts; parts++) memcpy(s + n, *parts, strlen(*parts)), n += strlen(*parts);
	s[n] = 0;
	return s;
}

static int read_readme(corral_call *c) {
	corral_text_contents(c, corral_uri(c), PLAIN, "The corral example provider \xe2\x80\x94 one provider, four languages.");
	return CORRAL_OK;
}

/* count reads the counter into *n (0 when unset), or returns an errno. */
static int count(long long *n) {
	corral_str v;
	int r = corral_kv_get(COUNTER_KEY, &v);
	*n = 0;
	if (r == CORRAL_ENOTFOUND) return 0;
	if (r < 0) return r;
	return corral_json_int(v, n) ? 0 : CORRAL_EINVALID;
}

static const char *decimal(long long n) {
	char *s = corral_alloc(24);
	corral_buf b = {s, 0, 23, 0, 0};
	corral_buf_int(&b, n);
	s[b.len] = 0;
	return s;
}

static int read_counter(corral_call *c) {
	long long n;
	int r = count(&n);
	if (r < 0) return corral_error(c, CORRAL_UNAVAILABLE, corral_errno_name(r));
	corral_text_contents(c, corral_uri(c), PLAIN, decimal(n));
	return CORRAL_OK;
}

static int read_greeting(corral_call *c) {
	const char *g = greeting(corral_variable(c, "lang"));
	if (!g) return corral_error(c, CORRAL_NOT_FOUND, "no such greeting");
	corral_text_contents(c, corral_uri(c), PLAIN, g);
	return CORRAL_OK;
}

static int complete_lang(corral_call *c) {
	const char *partial = corral_partial(c);
	for (size_t i = 0; i < NLANGUAGES; i++)
		if (strncmp(languages[i].code, partial, strlen(partial)) == 0) corral_completion(c, languages[i].code);
	return CORRAL_OK;
}

static int greet(corral_call *c) {
	const char *lang = corral_argument(c, "lang");
	if (!lang || !*lang) lang = "en";
	const char *g = greeting(lang);
	if (!g) return corral_error(c, CORRAL_INVALID_PARAMS, concat((const char *[]){"unknown language: ", lang, NULL}));
	corral_message_text(c, "user", concat((const char *[]){"Say ", g, " to ", corral_argument(c, "name"), ".", NULL}));
	corral_message_resource(c, "user", concat((const char *[]){"example://greetings/", lang, NULL}), PLAIN, g);
	return CORRAL_OK;
}

static int shout(corral_call *c) {
	const char *text = corral_argument(c, "text");
	if (!text) return corral_tool_error(c, "text must be a string");
	char *up = (char *)concat((const char *[]){text, NULL});
	for (char *p = up; *p; p++)
		if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
	corral_tool_text(c, up);
	return CORRAL_OK;
}

static int kv_failed(corral_call *c, int errno_value) {
	return corral_tool_error(c, concat((const char *[]){"kv: ", corral_errno_name(errno_value), NULL}));
}

static int increment(corral_call *c) {
	long long n;
	int r = count(&n);
	if (r < 0) return kv_failed(c, r);
	const char *s = decimal(++n);
	if ((r = corral_kv_set(COUNTER_KEY, s, strlen(s))) < 0) return kv_failed(c, r);
	corral_notify_updated(COUNTER_URI); /* a dropped notification does not undo the count */
	corral_tool_text(c, concat((const char *[]){"count: ", s, NULL}));
	corral_tool_structured(c, concat((const char *[]){"{\"count\":", s, "}", NULL}));
	return CORRAL_OK;
}

static int reset(corral_call *c) {
	corral_str answer = corral_input_response(c, "confirm"), action, content, ok;
	if (!answer.ptr)
		return corral_elicit(c, "confirm", "Reset the counter?",
		                     "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}");
	const char *act = corral_json_member(answer, "action", &action) ? corral_json_cstr(action) : NULL;
	int yes = 0;
	if (corral_json_member(answer, "content", &content) && corral_json_member(content, "ok", &ok)) corral_json_bool(ok, &yes);
	if (!act || strcmp(act, "accept") != 0 || !yes) return corral_tool_text(c, "counter kept");
	int r = corral_kv_delete(COUNTER_KEY);
	if (r < 0) return kv_failed(c, r);
	corral_tool_text(c, "counter reset");
	return CORRAL_OK;
}

static int probe_failed(corral_call *c, const char *step, int errno_value) {
	return corral_tool_error(c, concat((const char *[]){step, ": ", corral_errno_name(errno_value), NULL}));
}

static int probe(corral_call *c) {
	const char *path = corral_argument(c, "path"), *url = corral_argument(c, "url");
	if (!path || !url) return corral_tool_error(c, "path and url must be strings");

	corral_progress(1, 3, "config");
	const char *motto;
	int r = corral_config_get("motto", &motto);
	if (r < 0) return probe_failed(c, "config", r);

	corral_progress(2, 3, "files");
	corral_str roots, info, entries, data, e, v;
	if ((r = corral_file_roots(&roots)) < 0) return probe_failed(c, "files", r);
	long long nroots = 0;
	for (corral_str it = roots; corral_json_next(&it, &e);) nroots++;
	if ((r = corral_file_stat(path, &info)) < 0) return probe_failed(c, "files", r);
	long long size = 0;
	if (corral_json_member(info, "size", &v)) corral_json_int(v, &size);
	const char *slash = strrchr(path, '/');
	char *dir = corral_alloc((size_t)(slash - path) + 2);
	size_t dl = slash > path ? (size_t)(slash - path) : 1;
	memcpy(dir, path, dl), dir[dl] = 0;
	if ((r = corral_file_list(dir, &entries)) < 0) return probe_failed(c, "files", r);
	const char *names = "";
	for (corral_str it = entries; corral_json_next(&it, &e);) {
		const char *name = corral_json_member(e, "name", &v) ? corral_json_cstr(v) : "?";
		names = concat((const char *[]){names, *names ? "," : "", name, NULL});
	}
	if ((r = corral_file_read(path, &data)) < 0) return probe_failed(c, "files", r);

	corral_progress(3, 3, "http");
	corral_http_response resp;
	if ((r = corral_http_get(url, &resp)) < 0) return probe_failed(c, "http", r);
	corral_log(CORRAL_LOG_INFO, "probe: done");

	char *body = corral_alloc(resp.body.len + 1), *file = corral_alloc(data.len + 1);
	memcpy(body, resp.body.ptr, resp.body.len), body[resp.body.len] = 0;
	memcpy(file, data.ptr, data.len), file[data.len] = 0;
	corral_tool_text(c, concat((const char *[]){"motto: ", motto, "\nroots: ", decimal(nroots), "\nfiles: ", names,
	                                            "\nsize: ", decimal(size), "\nfile: ", file, "\nhttp: ",
	                                            decimal(resp.status), " ", body, NULL}));
	return CORRAL_OK;
}

void corral_setup(void) {
	corral_plugin("example", "1.0.0");
	corral_title("Example provider");
	corral_scheme("example");
	corral_require(CORRAL_CAP_KV);
	corral_request(CORRAL_CAP_NOTIFY);
	corral_request(CORRAL_CAP_LOG);
	corral_request(CORRAL_CAP_CONFIG);
	corral_request(CORRAL_CAP_FILES);
	corral_request(CORRAL_CAP_HTTP);

	corral_resource((corral_resource_def){.uri = "example://readme", .name = "readme", .mime_type = PLAIN}, read_readme);
	corral_resource((corral_resource_def){.uri = COUNTER_URI, .name = "counter", .mime_type = PLAIN}, read_counter);
	corral_template((corral_template_def){.uri_template = "example://greetings/{lang}", .name = "greeting",
	                                      .mime_type = PLAIN, .complete = "lang"},
	                read_greeting, complete_lang);
	corral_prompt((corral_prompt_def){.name = "greet", .description = "Greet someone",
	                                  .arguments = {{.name = "name", .required = 1}, {.name = "lang"}},
	                                  .complete = "lang"},
	              greet, complete_lang);
	corral_tool((corral_tool_def){.name = "shout",
	                              .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
	                                              "\"required\":[\"text\"]}"},
	            shout);
	corral_tool((corral_tool_def){.name = "increment", .input_schema = NO_ARGUMENTS}, increment);
	corral_tool((corral_tool_def){.name = "reset", .input_schema = NO_ARGUMENTS}, reset);
	corral_tool((corral_tool_def){.name = "probe",
	                              .input_schema = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
	                                              "\"url\":{\"type\":\"string\"}},\"required\":[\"path\",\"url\"]}",
	                              .task_support = CORRAL_TASK_OPTIONAL,
	                              .task_deadline_ms = 60000},
	            probe);
}

/*
 * corral.h: the C SDK for corral plugins (abi/ABI.md, ABI 1.4).
 *
 * A plugin defines corral_setup(), which registers what the plugin serves,
 * and one handler per resource, template, prompt and tool. The SDK exports
 * corral_abi_v1, corral_buffer and corral_call (the linker exports memory),
 * builds the manifest, reads each request, dispatches it, checks required
 * prompt and tool arguments, and writes the response. Build with Debian's
 * clang, lld and wasi-libc (docs/plugins.md):
 *
 *   clang --target=wasm32-wasi --sysroot=/usr -Oz -mexec-model=reactor \
 *         -Wl,--strip-all -I sdk/c -o plugin.wasm plugin.c sdk/c/corral.c
 *
 * Memory: every buffer is static, and the SDK never calls malloc. The
 * request and response buffers start at CORRAL_BUFFER_SIZE and grow (into
 * new pages, at least doubling) only for a larger request or response than
 * any before; strings the SDK decodes for a handler and the outputs of host
 * functions live in a per-call arena of CORRAL_ARENA_SIZE bytes, reset when
 * the next call starts. Nothing else is allocated, so a pooled instance
 * does not grow call after call. Pointers the SDK hands a handler are
 * valid until the handler returns. Keys, paths and other strings passed to
 * the SDK are NUL-terminated; the raw corral_host_* imports take lengths.
 *
 * Strings are UTF-8 and NUL-terminated unless a corral_str (pointer and
 * length) is used. The JSON writer replaces invalid UTF-8 with U+FFFD, so
 * a response is always valid JSON.
 */
#ifndef CORRAL_H
#define CORRAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI minor this SDK is written against (abi/ABI.md §2). */
#define CORRAL_ABI_MINOR 4

#ifndef CORRAL_MAX_SCHEMES
#define CORRAL_MAX_SCHEMES 8
#endif
#ifndef CORRAL_MAX_RESOURCES
#define CORRAL_MAX_RESOURCES 64
#endif
#ifndef CORRAL_MAX_TEMPLATES
#define CORRAL_MAX_TEMPLATES 32
#endif
#ifndef CORRAL_MAX_PROMPTS
#define CORRAL_MAX_PROMPTS 32
#endif
#ifndef CORRAL_MAX_TOOLS
#define CORRAL_MAX_TOOLS 32
#endif
#ifndef CORRAL_MAX_ARGUMENTS
#define CORRAL_MAX_ARGUMENTS 16 /* arguments of one prompt */
#endif
#ifndef CORRAL_BUFFER_SIZE
#define CORRAL_BUFFER_SIZE 65536 /* initial request and response buffers */
#endif
#ifndef CORRAL_ARENA_SIZE
#define CORRAL_ARENA_SIZE 262144 /* per-call scratch: decoded strings, host outputs */
#endif

/* Statuses a handler returns (abi/ABI.md §10). */
enum {
	CORRAL_OK = 0,
	CORRAL_STATUS_ERROR = 1,
	CORRAL_STATUS_INPUT_REQUIRED = 2,
};

/* Errnos host functions return (abi/ABI.md §10); an unknown negative value
 * is a generic failure. */
enum {
	CORRAL_EDENIED = -1,
	CORRAL_ENOTFOUND = -2,
	CORRAL_EINVALID = -3,
	CORRAL_EQUOTA = -4,
	CORRAL_ETOOLARGE = -5,
	CORRAL_EIO = -6,
	CORRAL_ERATELIMITED = -7,
	CORRAL_ETIMEOUT = -8,
};

/* Guest error codes for corral_error. */
#define CORRAL_NOT_FOUND "not_found"
#define CORRAL_INVALID_PARAMS "invalid_params"
#define CORRAL_INTERNAL "internal"
#define CORRAL_UNAVAILABLE "unavailable"

/* Capabilities for corral_request and corral_require (abi/ABI.md §11). */
#define CORRAL_CAP_LOG "log"
#define CORRAL_CAP_NOTIFY "notify"
#define CORRAL_CAP_KV "kv"
#define CORRAL_CAP_FILES "files"
#define CORRAL_CAP_HTTP "http"
#define CORRAL_CAP_CONFIG "config"

/* Log levels for corral_log. */
enum { CORRAL_LOG_DEBUG = 0, CORRAL_LOG_INFO = 1, CORRAL_LOG_WARN = 2, CORRAL_LOG_ERROR = 3 };

/* Notification kinds for corral_notify_list_changed. */
enum { CORRAL_RESOURCES_CHANGED = 2, CORRAL_PROMPTS_CHANGED = 3, CORRAL_TOOLS_CHANGED = 4 };

/* A byte span: not NUL-terminated. ptr is NULL for "absent". */
typedef struct {
	const char *ptr;
	size_t len;
} corral_str;

/* One call in progress: what the handler reads its request from and
 * writes its answer to. */
typedef struct corral_call corral_call;

/* A handler returns CORRAL_OK after writing its result, or what
 * corral_error or corral_elicit returned. */
typedef int (*corral_handler)(corral_call *c);

/* ---- Registration, from corral_setup ---------------------------------- */

/* corral_setup is defined by the plugin: the SDK calls it once per
 * instance, before the first call, to register what the plugin serves. */
void corral_setup(void);

typedef struct {
	const char *uri, *name, *title, *description, *mime_type;
} corral_resource_def;

typedef struct {
	const char *uri_template, *name, *title, *description, *mime_type;
	const char *complete; /* completable variables, comma-separated ("topic,page") */
} corral_template_def;

typedef struct {
	const char *name, *title, *description;
	int required;
} corral_argument_def;

typedef struct {
	const char *name, *title, *description;
	corral_argument_def arguments[CORRAL_MAX_ARGUMENTS]; /* up to the first without a name */
	const char *complete; /* completable arguments, comma-separated */
} corral_prompt_def;

typedef struct {
	const char *name, *title, *description;
	const char *input_schema;  /* JSON Schema object (required) */
	const char *output_schema; /* optional JSON */
	const char *annotations;   /* optional JSON object */
	/* Tasks (docs/tasks.md): NULL or CORRAL_TASK_FORBIDDEN never runs as
	 * an MCP task; CORRAL_TASK_OPTIONAL or CORRAL_TASK_REQUIRED does for a
	 * client that supports tasks (ABI 1.3). With input_first, a call
	 * without answers runs as a plain call and the retry with the answers
	 * becomes the task (ABI 1.3). task_deadline_ms, 1 to 86400000, is how
	 * long each run inside a task may take in place of the call deadline;
	 * 0 keeps the call deadline (ABI 1.4). */
	const char *task_support;
	int input_first;
	long long task_deadline_ms;
} corral_tool_def;

/* Values of corral_tool_def.task_support. */
#define CORRAL_TASK_FORBIDDEN "forbidden"
#define CORRAL_TASK_OPTIONAL "optional"
#define CORRAL_TASK_REQUIRED "required"

/* Every string given to a registration function must outlive the instance
 * (string literals do). Mistakes (a missing name, a duplicate, a URI
 * outside the schemes, a full table) make describe fail with a message
 * naming the mistake, so the plugin does not load. */
void corral_plugin(const char *name, const char *version);
void corral_title(const char *title);
void corral_description(const char *description);
void corral_scheme(const char *scheme);
void corral_request(const char *capability); /* optional capability */
void corral_require(const char *capability); /* requested and required (ABI 1.2) */
void corral_resource(corral_resource_def d, corral_handler read);
void corral_template(corral_template_def d, corral_handler read, corral_handler complete);
void corral_prompt(corral_prompt_def d, corral_handler get, corral_handler complete);
void corral_tool(corral_tool_def d, corral_handler call);
void corral_lister(corral_handler list); /* dynamic resources: sets listsResources */
void corral_reader(corral_handler read); /* URIs neither static nor templated */

/* ---- The request ------------------------------------------------------ */

corral_str corral_request_json(corral_call *c); /* the whole request */
int corral_op(corral_call *c);                  /* 1 describe … 6 complete */
const char *corral_uri(corral_call *c);         /* read: the URI */
const char *corral_variable(corral_call *c, const char *name); /* read: a template variable */
const char *corral_name(corral_call *c);        /* prompt or tool name */
/* A prompt's, tool's or completion context's argument as a string; NULL
 * when absent or not a JSON string. */
const char *corral_argument(corral_call *c, const char *name);
corral_str corral_argument_json(corral_call *c, const char *name); /* raw JSON value */
const char *corral_completing(corral_call *c); /* complete: the argument's name */
const char *corral_partial(corral_call *c);    /* complete: its partial value */
const char *corral_principal(corral_call *c);  /* principal.id ("" if anonymous) */
const char *corral_cursor(corral_call *c);     /* list: "" for the first page */
long corral_limit(corral_call *c);             /* list: the most resources to return */
/* input_required (ABI 1.1): the client's answer keyed key (raw JSON), and the
 * state the guest returned, or NULL. */
corral_str corral_input_response(corral_call *c, const char *key);
const char *corral_state(corral_call *c);

/* ---- The answer ------------------------------------------------------- */

/* read_resource: add a content. */
int corral_text_contents(corral_call *c, const char *uri, const char *mime_type, const char *text);
int corral_blob_contents(corral_call *c, const char *uri, const char *mime_type, const void *data, size_t len);
void corral_ttl(corral_call *c, long long ms); /* read: ttlMs, a caching hint */
/* get_prompt: add a message (role "user" or "assistant"). */
int corral_message_text(corral_call *c, const char *role, const char *text);
int corral_message_resource(corral_call *c, const char *role, const char *uri, const char *mime_type,
                            const char *text);
void corral_prompt_description(corral_call *c, const char *description);
/* call_tool: add a text block; set structuredContent (a JSON object);
 * corral_tool_error adds a text and marks the result isError. Each
 * returns CORRAL_OK when it wrote, so `return corral_tool_error(c, "…");`
 * ends a handler (and a negative errno when the call is not a tool's). */
int corral_tool_text(corral_call *c, const char *text);
int corral_tool_structured(corral_call *c, const char *json);
int corral_tool_error(corral_call *c, const char *text);
/* complete: add a value (the SDK keeps the first 100, counts the rest in
 * total and sets hasMore). */
int corral_completion(corral_call *c, const char *value);
/* list_resources: add a resource; set the next page's cursor. */
int corral_list_resource(corral_call *c, corral_resource_def d);
void corral_next_cursor(corral_call *c, const char *cursor);
/* Any operation: answer a guest error instead (code CORRAL_NOT_FOUND, …).
 * Returns CORRAL_STATUS_ERROR, for `return corral_error(…);`. */
int corral_error(corral_call *c, const char *code, const char *message);
/* read, prompt, tool: ask the client for input first (ABI 1.1 §7.7). Each
 * returns CORRAL_STATUS_INPUT_REQUIRED. schema is a JSON object. */
int corral_elicit(corral_call *c, const char *key, const char *message, const char *schema);
int corral_input_state(corral_call *c, const char *state);

/* ---- Host capabilities (abi/ABI.md §8) -------------------------------- */

/* Each returns 0 (or a length) on success, or a negative errno. Outputs
 * are copied into the call's arena and valid until the handler returns. */
int corral_log(int level, const char *message);
int corral_notify_updated(const char *uri);
int corral_notify_list_changed(int kind);
int corral_progress(double progress, double total, const char *message);
int corral_kv_get(const char *key, corral_str *value);
int corral_kv_set(const char *key, const void *value, size_t len);
int corral_kv_delete(const char *key);
int corral_file_read(const char *path, corral_str *data);
int corral_file_stat(const char *path, corral_str *info_json);
int corral_file_list(const char *path, corral_str *entries_json);
int corral_file_roots(corral_str *roots_json);
int corral_http_fetch(const char *request_json, corral_str *response_json);
typedef struct {
	int status;
	corral_str headers; /* JSON object */
	corral_str body;    /* decoded */
} corral_http_response;
int corral_http_get(const char *url, corral_http_response *response);
int corral_http_post(const char *url, const char *content_type, const void *body, size_t len,
                     corral_http_response *response);
int corral_config_get(const char *key, const char **value);
const char *corral_errno_name(int errno_value); /* "denied", "not found", … */

/* The raw host imports (abi/ABI.md §8), for outputs larger than the
 * arena: call one, then corral_host_take its output (the length it
 * returned) into a buffer of your own. */
void corral_host_set_result(const void *ptr, size_t len);
int32_t corral_host_take(void *ptr, size_t len);
int32_t corral_host_log(int32_t level, const void *ptr, size_t len);
int32_t corral_host_notify(int32_t kind, const void *ptr, size_t len);
int32_t corral_host_progress(double progress, double total, const void *ptr, size_t len);
int32_t corral_host_kv_get(const void *key, size_t klen);
int32_t corral_host_kv_set(const void *key, size_t klen, const void *value, size_t vlen);
int32_t corral_host_kv_delete(const void *key, size_t klen);
int32_t corral_host_file_read(const void *path, size_t plen);
int32_t corral_host_file_stat(const void *path, size_t plen);
int32_t corral_host_file_list(const void *path, size_t plen);
int32_t corral_host_file_roots(void);
int32_t corral_host_http_fetch(const void *request, size_t rlen);
int32_t corral_host_config_get(const void *key, size_t klen);

/* ---- JSON and memory helpers ------------------------------------------ */

/* The value of member name of a JSON object; 1 if present. */
int corral_json_member(corral_str object, const char *name, corral_str *value);
/* Iterates the elements of an array (or the values of an object): start
 * with *iter = the array; each call sets *elem and returns 1, then 0. */
int corral_json_next(corral_str *iter, corral_str *elem);
/* A JSON string decoded into the arena (NUL-terminated), or NULL. */
const char *corral_json_cstr(corral_str value);
int corral_json_int(corral_str value, long long *out); /* 1 on success */
int corral_json_bool(corral_str value, int *out);      /* 1 on success */
/* Bytes from the call's arena, or NULL when it is exhausted. */
void *corral_alloc(size_t n);

/* A JSON writer over a buffer of your own (fixed: it never grows; a write
 * that does not fit sets overflow). */
typedef struct {
	char *ptr;
	size_t len, cap;
	int overflow;
	int grow; /* internal: the SDK's own buffers grow */
} corral_buf;
void corral_buf_raw(corral_buf *b, const char *s, size_t n);
void corral_buf_string(corral_buf *b, const char *s, size_t n); /* quoted and escaped */
void corral_buf_int(corral_buf *b, long long v);

#ifdef __cplusplus
}
#endif
#endif /* CORRAL_H */

/*
 * corral.c: the C SDK for corral plugins; see corral.h and abi/ABI.md.
 *
 * One translation unit: the ABI exports, the registration tables, the
 * dispatcher, a JSON reader over the host's requests, a JSON writer for the
 * responses, base64, and the host capability wrappers. Compiled natively
 * (anything but __wasm__) the imports are ordinary external functions, so
 * sdk/c/test/ links a fake host and tests the whole SDK with the host's
 * compiler.
 */
#include "corral.h"

#include <stdlib.h>
#include <string.h>

#ifdef __wasm__
#define IMPORT(n) __attribute__((import_module("corral_v1"), import_name(n)))
#define EXPORT(n) __attribute__((export_name(n)))
#else
#define IMPORT(n)
#define EXPORT(n)
#endif

/* The host imports, declared in corral.h; IMPORT names them for wasm-ld. */
IMPORT("set_result") void corral_host_set_result(const void *ptr, size_t len);
IMPORT("take") int32_t corral_host_take(void *ptr, size_t len);
IMPORT("log") int32_t corral_host_log(int32_t level, const void *ptr, size_t len);
IMPORT("notify") int32_t corral_host_notify(int32_t kind, const void *ptr, size_t len);
IMPORT("progress") int32_t corral_host_progress(double progress, double total, const void *ptr, size_t len);
IMPORT("kv_get") int32_t corral_host_kv_get(const void *key, size_t klen);
IMPORT("kv_set") int32_t corral_host_kv_set(const void *key, size_t klen, const void *value, size_t vlen);
IMPORT("kv_delete") int32_t corral_host_kv_delete(const void *key, size_t klen);
IMPORT("file_read") int32_t corral_host_file_read(const void *path, size_t plen);
IMPORT("file_stat") int32_t corral_host_file_stat(const void *path, size_t plen);
IMPORT("file_list") int32_t corral_host_file_list(const void *path, size_t plen);
IMPORT("file_roots") int32_t corral_host_file_roots(void);
IMPORT("http_fetch") int32_t corral_host_http_fetch(const void *request, size_t rlen);
IMPORT("config_get") int32_t corral_host_config_get(const void *key, size_t klen);

#define MAX_COMPLETIONS 100               /* abi/ABI.md §7.6 */
#define MAX_RESPONSE (8u << 20)           /* abi/ABI.md §12 */
#define REGISTRATION_ERRORS 1024          /* bytes of registration mistakes kept */

/* ---- Memory ----------------------------------------------------------- */

/* regrow returns a buffer of n bytes holding the first keep bytes of old,
 * for a buffer that outgrew its static one. On wasm the bytes are new
 * pages at the end of memory and old is abandoned (buffers only grow, each
 * time at least twice as large, so this costs at most the final size
 * again), which keeps malloc out of a plugin that does not use it;
 * natively (the tests) they come from malloc and realloc. */
static void *regrow(void *old, int old_static, size_t keep, size_t n) {
#ifdef __wasm__
	(void)old_static;
	size_t at = __builtin_wasm_memory_grow(0, (n + 65535) / 65536);
	if (at == (size_t)-1) return NULL;
	void *p = (void *)(at * 65536);
	memcpy(p, old, keep);
	return p;
#else
	if (!old_static) return realloc(old, n);
	void *p = malloc(n);
	if (p) memcpy(p, old, keep);
	return p;
#endif
}

static char request_static[CORRAL_BUFFER_SIZE];
static char *request_ptr = request_static;
static size_t request_cap = sizeof request_static;

static char response_static[CORRAL_BUFFER_SIZE];
static corral_buf out = {response_static, 0, sizeof response_static, 0, 1};

static _Alignas(16) char arena[CORRAL_ARENA_SIZE];
static size_t arena_used;

void *corral_alloc(size_t n) {
	size_t at = (arena_used + 7) & ~(size_t)7;
	if (at > sizeof arena || n > sizeof arena - at) return NULL;
	arena_used = at + n;
	return arena + at;
}

/* dup copies n bytes into the arena and NUL-terminates them. */
static const char *dup(const char *s, size_t n) {
	char *d = corral_alloc(n + 1);
	if (!d) return NULL;
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

/* ---- JSON writer ------------------------------------------------------ */

static int reserve(corral_buf *b, size_t n) {
	if (b->overflow) return 0;
	if (n <= b->cap - b->len) return 1;
	if (!b->grow || b->len + n > MAX_RESPONSE) {
		b->overflow = 1;
		return 0;
	}
	size_t cap = b->cap * 2;
	if (cap < b->len + n) cap = b->len + n;
	if (cap > MAX_RESPONSE) cap = MAX_RESPONSE;
	char *p = regrow(b->ptr, b->ptr == response_static, b->len, cap);
	if (!p) {
		b->overflow = 1;
		return 0;
	}
	b->ptr = p;
	b->cap = cap;
	return 1;
}

void corral_buf_raw(corral_buf *b, const char *s, size_t n) {
	if (!reserve(b, n)) return;
	memcpy(b->ptr + b->len, s, n);
	b->len += n;
}

static void raw(corral_buf *b, const char *s) { corral_buf_raw(b, s, strlen(s)); }

/* utf8_len returns the length of the valid UTF-8 sequence at s (n bytes
 * left), or 0 when it is not one (overlong, surrogate, over U+10FFFF,
 * truncated). */
static size_t utf8_len(const unsigned char *s, size_t n) {
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
	else return 0;
	if (n < len) return 0;
	unsigned cp = c & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
	return len;
}

void corral_buf_string(corral_buf *b, const char *str, size_t n) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	corral_buf_raw(b, "\"", 1);
	size_t run = 0; /* bytes copied as they are, flushed in one go */
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			run++, i++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = utf8_len(s + i, n - i);
			if (l) {
				run += l, i += l;
				continue;
			}
		}
		corral_buf_raw(b, (const char *)s + i - run, run);
		run = 0;
		char esc[6] = {'\\', 0};
		size_t el = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			if (c >= 0x80) { /* invalid UTF-8: U+FFFD */
				corral_buf_raw(b, "\xef\xbf\xbd", 3);
				i++;
				continue;
			}
			esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
			el = 6;
		}
		corral_buf_raw(b, esc, el);
		i++;
	}
	corral_buf_raw(b, (const char *)s + n - run, run);
	corral_buf_raw(b, "\"", 1);
}

static void str(corral_buf *b, const char *s) { corral_buf_string(b, s ? s : "", s ? strlen(s) : 0); }

void corral_buf_int(corral_buf *b, long long v) {
	char d[24];
	size_t i = sizeof d;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do d[--i] = (char)('0' + u % 10); while (u /= 10);
	if (v < 0) d[--i] = '-';
	corral_buf_raw(b, d + i, sizeof d - i);
}

/* member writes ,"name": (or without the comma for the first member). */
static void member(corral_buf *b, int *first, const char *name) {
	if (!*first) raw(b, ",");
	*first = 0;
	str(b, name);
	raw(b, ":");
}

static void opt(corral_buf *b, int *first, const char *name, const char *value) {
	if (value && *value) member(b, first, name), str(b, value);
}

/* csv writes a comma-separated list as a JSON array of strings. */
static void csv(corral_buf *b, const char *list) {
	raw(b, "[");
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (p != list) raw(b, ",");
		corral_buf_string(b, p, n);
		p = e ? e + 1 : p + n;
	}
	raw(b, "]");
}

static int in_csv(const char *list, const char *name) {
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && memcmp(p, name, n) == 0) return 1;
		p = e ? e + 1 : p + l;
	}
	return 0;
}

/* ---- JSON reader ------------------------------------------------------ */

static const char *ws(const char *p, const char *end) {
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
	return p;
}

/* string_end returns the byte after the closing quote of the string at p. */
static const char *string_end(const char *p, const char *end) {
	for (p++; p < end; p++) {
		if (*p == '\\') p++;
		else if (*p == '"') return p + 1;
	}
	return NULL;
}

/* value_end returns the byte after the JSON value at p, or NULL. Nesting
 * is counted, not recursed into, so depth costs no stack. */
static const char *value_end(const char *p, const char *end) {
	long depth = 0;
	do {
		p = ws(p, end);
		if (p >= end) return NULL;
		switch (*p) {
		case '"':
			if (!(p = string_end(p, end))) return NULL;
			break;
		case '{': case '[': depth++, p++; break;
		case '}': case ']':
			if (--depth < 0) return NULL;
			p++;
			break;
		case ',': case ':':
			if (depth == 0) return NULL;
			p++;
			break;
		default: /* number or literal */
			if (!(*p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'))) return NULL;
			while (p < end && (*p == '-' || *p == '+' || *p == '.' || (*p >= '0' && *p <= '9') ||
			                   (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
				p++;
		}
	} while (depth > 0);
	return p;
}

static unsigned hex4(const char *p) {
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
		else return 0x110000;
	}
	return v;
}

static size_t put_utf8(char *d, unsigned cp) {
	if (cp < 0x80) return d[0] = (char)cp, 1;
	if (cp < 0x800) return d[0] = (char)(0xc0 | cp >> 6), d[1] = (char)(0x80 | (cp & 0x3f)), 2;
	if (cp < 0x10000)
		return d[0] = (char)(0xe0 | cp >> 12), d[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
		       d[2] = (char)(0x80 | (cp & 0x3f)), 3;
	return d[0] = (char)(0xf0 | cp >> 18), d[1] = (char)(0x80 | (cp >> 12 & 0x3f)),
	       d[2] = (char)(0x80 | (cp >> 6 & 0x3f)), d[3] = (char)(0x80 | (cp & 0x3f)), 4;
}

/* unescape decodes the JSON string s (quotes included) into d, which has
 * room for s.len bytes (a decoded string is never longer), and returns its
 * length. */
static size_t unescape(corral_str s, char *d) {
	const char *p = s.ptr + 1, *end = s.ptr + s.len - 1;
	size_t n = 0;
	while (p < end) {
		if (*p != '\\') {
			d[n++] = *p++;
			continue;
		}
		if (++p >= end) break;
		char c = *p++;
		switch (c) {
		case 'n': d[n++] = '\n'; break;
		case 't': d[n++] = '\t'; break;
		case 'r': d[n++] = '\r'; break;
		case 'b': d[n++] = '\b'; break;
		case 'f': d[n++] = '\f'; break;
		case 'u': {
			unsigned cp = end - p >= 4 ? hex4(p) : 0x110000;
			p += end - p >= 4 ? 4 : end - p;
			if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
				unsigned lo = hex4(p + 2);
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
			n += put_utf8(d + n, cp);
			break;
		}
		default: d[n++] = c; /* \" \\ \/ */
		}
	}
	return n;
}

/* key_is reports whether the JSON string k decodes to name. */
static int key_is(corral_str k, const char *name) {
	size_t n = strlen(name);
	if (!memchr(k.ptr, '\\', k.len)) return k.len == n + 2 && memcmp(k.ptr + 1, name, n) == 0;
	char small[256];
	if (k.len > sizeof small) return 0; /* an escaped key this long is none of ours */
	size_t l = unescape(k, small);
	return l == n && memcmp(small, name, n) == 0;
}

static corral_str trim(corral_str s) {
	const char *p = ws(s.ptr, s.ptr + s.len), *e = s.ptr + s.len;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
	return (corral_str){p, (size_t)(e - p)};
}

int corral_json_member(corral_str obj, const char *name, corral_str *value) {
	if (!obj.ptr) return 0;
	obj = trim(obj);
	const char *p = obj.ptr, *end = obj.ptr + obj.len;
	if (p >= end || *p != '{') return 0;
	for (p = ws(p + 1, end); p < end && *p == '"';) {
		const char *ke = string_end(p, end);
		if (!ke) return 0;
		corral_str key = {p, (size_t)(ke - p)};
		p = ws(ke, end);
		if (p >= end || *p != ':') return 0;
		const char *v = ws(p + 1, end), *ve = value_end(v, end);
		if (!ve) return 0;
		if (key_is(key, name)) {
			*value = (corral_str){v, (size_t)(ve - v)};
			return 1;
		}
		p = ws(ve, end);
		if (p < end && *p == ',') p = ws(p + 1, end);
	}
	return 0;
}

int corral_json_next(corral_str *iter, corral_str *elem) {
	if (!iter->ptr) return 0;
	const char *p = ws(iter->ptr, iter->ptr + iter->len), *end = iter->ptr + iter->len;
	if (p < end && (*p == '[' || *p == '{' || *p == ',')) p = ws(p + 1, end);
	if (p >= end || *p == ']' || *p == '}') {
		iter->ptr = NULL, iter->len = 0;
		return 0;
	}
	const char *v = p, *ve = value_end(v, end);
	if (!ve) return iter->ptr = NULL, 0;
	const char *after = ws(ve, end);
	if (*v == '"' && after < end && *after == ':') { /* an object's key: its value follows */
		v = ws(after + 1, end);
		if (!(ve = value_end(v, end))) return iter->ptr = NULL, 0;
		after = ws(ve, end);
	}
	*elem = (corral_str){v, (size_t)(ve - v)};
	iter->ptr = after;
	iter->len = (size_t)(end - after);
	return 1;
}

const char *corral_json_cstr(corral_str v) {
	if (!v.ptr) return NULL;
	v = trim(v);
	if (v.len < 2 || v.ptr[0] != '"' || v.ptr[v.len - 1] != '"') return NULL;
	char *d = corral_alloc(v.len);
	if (!d) return NULL;
	d[unescape(v, d)] = 0;
	return d;
}

int corral_json_int(corral_str v, long long *out) {
	if (!v.ptr) return 0;
	v = trim(v);
	size_t i = 0;
	int neg = v.len > 0 && v.ptr[0] == '-';
	i += (size_t)neg;
	if (i >= v.len) return 0;
	unsigned long long n = 0;
	for (; i < v.len; i++) {
		if (v.ptr[i] < '0' || v.ptr[i] > '9' || n > (unsigned long long)1e17) return 0;
		n = n * 10 + (unsigned)(v.ptr[i] - '0');
	}
	*out = neg ? -(long long)n : (long long)n;
	return 1;
}

int corral_json_bool(corral_str v, int *out) {
	if (!v.ptr) return 0;
	v = trim(v);
	if (v.len == 4 && memcmp(v.ptr, "true", 4) == 0) return *out = 1, 1;
	if (v.len == 5 && memcmp(v.ptr, "false", 5) == 0) return *out = 0, 1;
	return 0;
}

/* ---- Base64 ----------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(corral_buf *b, const unsigned char *s, size_t n) {
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
		q[0] = b64[v >> 18], q[1] = b64[v >> 12 & 63];
		q[2] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		corral_buf_raw(b, q, 4);
	}
}

/* unbase64 decodes standard base64 (padding optional) into d and returns
 * the length, or -1 for a character outside the alphabet. */
static long unbase64(const char *s, size_t n, unsigned char *d) {
	unsigned v = 0;
	int bits = 0;
	long len = 0;
	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *at = memchr(b64, s[i], 64);
		if (!at || !s[i]) return -1;
		v = v << 6 | (unsigned)(at - b64);
		if ((bits += 6) >= 8) {
			bits -= 8;
			d[len++] = (unsigned char)(v >> bits);
		}
	}
	return len;
}

/* ---- Registration ----------------------------------------------------- */

typedef struct {
	corral_resource_def d;
	corral_handler read;
} resource_entry;
typedef struct {
	corral_template_def d;
	corral_handler read, complete;
} template_entry;
typedef struct {
	corral_prompt_def d;
	corral_handler get, complete;
} prompt_entry;
typedef struct {
	corral_tool_def d;
	corral_handler call;
	corral_str required; /* the schema's "required" array */
} tool_entry;

static struct {
	const char *name, *version, *title, *description;
	const char *schemes[CORRAL_MAX_SCHEMES];
	int nschemes;
	const char *caps[6], *required_caps[6];
	int ncaps, nrequired;
	resource_entry resources[CORRAL_MAX_RESOURCES];
	int nresources;
	template_entry templates[CORRAL_MAX_TEMPLATES];
	int ntemplates;
	prompt_entry prompts[CORRAL_MAX_PROMPTS];
	int nprompts;
	tool_entry tools[CORRAL_MAX_TOOLS];
	int ntools;
	corral_handler lister, reader;
	char errors[REGISTRATION_ERRORS];
	size_t nerrors;
	int set_up;
} reg;

/* mistake records a registration mistake, reported by every call. */
static void mistake(const char *what, const char *subject) {
	const char *parts[] = {reg.nerrors ? "; " : "", what, subject ? " " : "", subject ? subject : ""};
	for (size_t i = 0; i < 4; i++) {
		size_t n = strlen(parts[i]);
		if (n > sizeof reg.errors - 1 - reg.nerrors) n = sizeof reg.errors - 1 - reg.nerrors;
		memcpy(reg.errors + reg.nerrors, parts[i], n);
		reg.nerrors += n;
	}
	reg.errors[reg.nerrors] = 0;
}

static int empty(const char *s) { return !s || !*s; }

/* in_schemes reports whether uri starts with one of the schemes and ":". */
static int in_schemes(const char *uri) {
	const char *colon = strchr(uri, ':');
	if (!colon) return 0;
	size_t n = (size_t)(colon - uri);
	for (int i = 0; i < reg.nschemes; i++) {
		if (strlen(reg.schemes[i]) != n) continue;
		size_t j = 0;
		while (j < n && (uri[j] | 0x20) == reg.schemes[i][j]) j++;
		if (j == n) return 1;
	}
	return 0;
}

void corral_plugin(const char *name, const char *version) {
	size_t n = name ? strlen(name) : 0;
	int ok = n >= 1 && n <= 64;
	for (size_t i = 0; ok && i < n; i++) {
		char c = name[i];
		ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '_' || c == '-'));
	}
	if (!ok) mistake("plugin name must match [a-z0-9][a-z0-9_-]{0,63}:", name ? name : "(null)");
	if (empty(version)) mistake("plugin version is empty", NULL);
	reg.name = name, reg.version = version;
}

void corral_title(const char *title) { reg.title = title; }
void corral_description(const char *description) { reg.description = description; }

void corral_scheme(const char *scheme) {
	size_t n = scheme ? strlen(scheme) : 0;
	int ok = n >= 1 && n <= 64 && scheme[0] >= 'a' && scheme[0] <= 'z';
	for (size_t i = 1; ok && i < n; i++) {
		char c = scheme[i];
		ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-';
	}
	if (!ok) return mistake("scheme must be lowercase [a-z][a-z0-9+.-]*, at most 64:", scheme ? scheme : "(null)");
	for (int i = 0; i < reg.nschemes; i++)
		if (strcmp(reg.schemes[i], scheme) == 0) return mistake("scheme claimed twice:", scheme);
	if (reg.nschemes == CORRAL_MAX_SCHEMES) return mistake("too many schemes (CORRAL_MAX_SCHEMES):", scheme);
	reg.schemes[reg.nschemes++] = scheme;
}

static const char *const known_caps[] = {CORRAL_CAP_LOG,   CORRAL_CAP_NOTIFY, CORRAL_CAP_KV,
                                         CORRAL_CAP_FILES, CORRAL_CAP_HTTP,   CORRAL_CAP_CONFIG};

/* add_cap adds c to list (of at most 6) unless it is there; 0 if unknown. */
static int add_cap(const char **list, int *n, const char *c) {
	int known = 0;
	for (size_t i = 0; i < 6; i++) known |= c && strcmp(known_caps[i], c) == 0;
	if (!known) return 0;
	for (int i = 0; i < *n; i++)
		if (strcmp(list[i], c) == 0) return 1;
	list[(*n)++] = c;
	return 1;
}

void corral_request(const char *capability) {
	if (!add_cap(reg.caps, &reg.ncaps, capability)) mistake("unknown capability", capability);
}

void corral_require(const char *capability) {
	if (add_cap(reg.caps, &reg.ncaps, capability)) add_cap(reg.required_caps, &reg.nrequired, capability);
	else mistake("unknown capability", capability);
}

void corral_resource(corral_resource_def d, corral_handler read) {
	if (empty(d.uri) || empty(d.name)) return mistake("a resource needs a uri and a name:", d.uri);
	if (!read) return mistake("resource has no read handler:", d.uri);
	for (int i = 0; i < reg.nresources; i++)
		if (strcmp(reg.resources[i].d.uri, d.uri) == 0) return mistake("resource declared twice:", d.uri);
	if (reg.nresources == CORRAL_MAX_RESOURCES) return mistake("too many resources (CORRAL_MAX_RESOURCES):", d.uri);
	reg.resources[reg.nresources++] = (resource_entry){d, read};
}

/* has_variable reports whether the RFC 6570 template t has variable v. */
static int has_variable(const char *t, const char *v, size_t n) {
	for (const char *p = strchr(t, '{'); p; p = strchr(p, '{')) {
		const char *e = strchr(++p, '}');
		if (!e) return 0;
		if (*p && strchr("+#./;?&", *p)) p++;
		while (p < e) {
			size_t l = strcspn(p, ",:*}");
			if (l == n && memcmp(p, v, n) == 0) return 1;
			p += l;
			p += strcspn(p, ",}");
			if (*p == ',') p++;
		}
	}
	return 0;
}

void corral_template(corral_template_def d, corral_handler read, corral_handler complete) {
	if (empty(d.uri_template) || empty(d.name)) return mistake("a template needs a uriTemplate and a name:", d.uri_template);
	if (!read) return mistake("template has no read handler:", d.uri_template);
	if (!empty(d.complete) && !complete) return mistake("template lists completable variables but has no completion handler:", d.uri_template);
	for (const char *p = d.complete; p && *p;) {
		size_t n = strcspn(p, ",");
		if (!has_variable(d.uri_template, p, n)) return mistake("template completes a variable it does not have:", d.uri_template);
		p += n + (p[n] == ',');
	}
	for (int i = 0; i < reg.ntemplates; i++)
		if (strcmp(reg.templates[i].d.uri_template, d.uri_template) == 0) return mistake("template declared twice:", d.uri_template);
	if (reg.ntemplates == CORRAL_MAX_TEMPLATES) return mistake("too many templates (CORRAL_MAX_TEMPLATES):", d.uri_template);
	reg.templates[reg.ntemplates++] = (template_entry){d, read, complete};
}

static int nargs(const corral_prompt_def *d) {
	int n = 0;
	while (n < CORRAL_MAX_ARGUMENTS && d->arguments[n].name) n++;
	return n;
}

void corral_prompt(corral_prompt_def d, corral_handler get, corral_handler complete) {
	if (empty(d.name)) return mistake("a prompt needs a name", NULL);
	if (!get) return mistake("prompt has no handler:", d.name);
	if (!empty(d.complete) && !complete) return mistake("prompt lists completable arguments but has no completion handler:", d.name);
	int n = nargs(&d);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(d.arguments[i].name, d.arguments[j].name) == 0) return mistake("prompt names an argument twice:", d.name);
	for (const char *p = d.complete; p && *p;) {
		size_t l = strcspn(p, ",");
		int found = 0;
		for (int i = 0; i < n; i++) found |= strlen(d.arguments[i].name) == l && memcmp(d.arguments[i].name, p, l) == 0;
		if (!found) return mistake("prompt completes an argument it does not have:", d.name);
		p += l + (p[l] == ',');
	}
	for (int i = 0; i < reg.nprompts; i++)
		if (strcmp(reg.prompts[i].d.name, d.name) == 0) return mistake("prompt declared twice:", d.name);
	if (reg.nprompts == CORRAL_MAX_PROMPTS) return mistake("too many prompts (CORRAL_MAX_PROMPTS):", d.name);
	reg.prompts[reg.nprompts++] = (prompt_entry){d, get, complete};
}

void corral_tool(corral_tool_def d, corral_handler call) {
	if (empty(d.name)) return mistake("a tool needs a name", NULL);
	if (!call) return mistake("tool has no handler:", d.name);
	corral_str schema = {d.input_schema, d.input_schema ? strlen(d.input_schema) : 0}, type, required = {0};
	if (!corral_json_member(schema, "type", &type) || type.len != 8 || memcmp(type.ptr, "\"object\"", 8) != 0)
		return mistake("tool input schema must be a JSON object with \"type\": \"object\":", d.name);
	corral_json_member(schema, "required", &required);
	int tasks = d.task_support && (strcmp(d.task_support, CORRAL_TASK_OPTIONAL) == 0 || strcmp(d.task_support, CORRAL_TASK_REQUIRED) == 0);
	if (d.task_support && !tasks && strcmp(d.task_support, CORRAL_TASK_FORBIDDEN) != 0)
		return mistake("tool task_support must be forbidden, optional or required:", d.name);
	if (d.task_deadline_ms < 0 || d.task_deadline_ms > 86400000LL)
		return mistake("tool task_deadline_ms must be between 1 and 86400000:", d.name);
	if (!tasks && (d.input_first || d.task_deadline_ms))
		return mistake("tool input_first and task_deadline_ms need task_support optional or required:", d.name);
	for (int i = 0; i < reg.ntools; i++)
		if (strcmp(reg.tools[i].d.name, d.name) == 0) return mistake("tool declared twice:", d.name);
	if (reg.ntools == CORRAL_MAX_TOOLS) return mistake("too many tools (CORRAL_MAX_TOOLS):", d.name);
	reg.tools[reg.ntools++] = (tool_entry){d, call, required};
}

void corral_lister(corral_handler list) {
	if (!list) return mistake("nil lister", NULL);
	reg.lister = list;
}

void corral_reader(corral_handler read) {
	if (!read) return mistake("nil reader", NULL);
	reg.reader = read;
}

/* set_up runs corral_setup once, then checks what needs every registration. */
static void set_up(void) {
	if (reg.set_up) return;
	reg.set_up = 1;
	corral_setup();
	if (!reg.name) mistake("corral_setup did not call corral_plugin", NULL);
	for (int i = 0; i < reg.nresources; i++)
		if (!in_schemes(reg.resources[i].d.uri)) mistake("resource outside the plugin's schemes:", reg.resources[i].d.uri);
	for (int i = 0; i < reg.ntemplates; i++)
		if (!in_schemes(reg.templates[i].d.uri_template)) mistake("template outside the plugin's schemes:", reg.templates[i].d.uri_template);
	if ((reg.lister || reg.reader) && reg.nschemes == 0) mistake("a lister or reader needs a scheme", NULL);
}

static void manifest(corral_buf *b) {
	int f = 1;
	raw(b, "{");
	opt(b, &f, "name", reg.name);
	opt(b, &f, "version", reg.version);
	raw(b, ",\"abi\":1");
	opt(b, &f, "title", reg.title);
	opt(b, &f, "description", reg.description);
	raw(b, ",\"schemes\":[");
	for (int i = 0; i < reg.nschemes; i++) {
		if (i) raw(b, ",");
		str(b, reg.schemes[i]);
	}
	raw(b, "],\"resources\":[");
	for (int i = 0; i < reg.nresources; i++) {
		const corral_resource_def *d = &reg.resources[i].d;
		int g = 1;
		raw(b, i ? ",{" : "{");
		opt(b, &g, "uri", d->uri);
		opt(b, &g, "name", d->name);
		opt(b, &g, "title", d->title);
		opt(b, &g, "description", d->description);
		opt(b, &g, "mimeType", d->mime_type);
		raw(b, "}");
	}
	raw(b, "],\"templates\":[");
	for (int i = 0; i < reg.ntemplates; i++) {
		const corral_template_def *d = &reg.templates[i].d;
		int g = 1;
		raw(b, i ? ",{" : "{");
		opt(b, &g, "uriTemplate", d->uri_template);
		opt(b, &g, "name", d->name);
		opt(b, &g, "title", d->title);
		opt(b, &g, "description", d->description);
		opt(b, &g, "mimeType", d->mime_type);
		if (!empty(d->complete)) member(b, &g, "complete"), csv(b, d->complete);
		raw(b, "}");
	}
	raw(b, "],\"prompts\":[");
	for (int i = 0; i < reg.nprompts; i++) {
		const corral_prompt_def *d = &reg.prompts[i].d;
		int g = 1;
		raw(b, i ? ",{" : "{");
		opt(b, &g, "name", d->name);
		opt(b, &g, "title", d->title);
		opt(b, &g, "description", d->description);
		int n = nargs(d);
		if (n) {
			member(b, &g, "arguments");
			raw(b, "[");
			for (int a = 0; a < n; a++) {
				int h = 1;
				raw(b, a ? ",{" : "{");
				opt(b, &h, "name", d->arguments[a].name);
				opt(b, &h, "title", d->arguments[a].title);
				opt(b, &h, "description", d->arguments[a].description);
				if (d->arguments[a].required) raw(b, ",\"required\":true");
				raw(b, "}");
			}
			raw(b, "]");
		}
		if (!empty(d->complete)) member(b, &g, "complete"), csv(b, d->complete);
		raw(b, "}");
	}
	raw(b, "],\"tools\":[");
	for (int i = 0; i < reg.ntools; i++) {
		const corral_tool_def *d = &reg.tools[i].d;
		int g = 1;
		raw(b, i ? ",{" : "{");
		opt(b, &g, "name", d->name);
		opt(b, &g, "title", d->title);
		opt(b, &g, "description", d->description);
		member(b, &g, "inputSchema"), raw(b, d->input_schema);
		if (!empty(d->output_schema)) member(b, &g, "outputSchema"), raw(b, d->output_schema);
		if (!empty(d->annotations)) member(b, &g, "annotations"), raw(b, d->annotations);
		if (d->task_support && strcmp(d->task_support, CORRAL_TASK_FORBIDDEN) != 0) {
			member(b, &g, "execution"), raw(b, "{\"taskSupport\":"), str(b, d->task_support), raw(b, "}");
			if (d->input_first) member(b, &g, "inputFirst"), raw(b, "true");
			if (d->task_deadline_ms) member(b, &g, "taskDeadlineMs"), corral_buf_int(b, d->task_deadline_ms);
		}
		raw(b, "}");
	}
	raw(b, "],\"capabilities\":[");
	for (int i = 0; i < reg.ncaps; i++) {
		if (i) raw(b, ",");
		str(b, reg.caps[i]);
	}
	raw(b, "]");
	if (reg.nrequired) {
		raw(b, ",\"requiredCapabilities\":[");
		for (int i = 0; i < reg.nrequired; i++) {
			if (i) raw(b, ",");
			str(b, reg.required_caps[i]);
		}
		raw(b, "]");
	}
	if (reg.lister) raw(b, ",\"listsResources\":true");
	raw(b, "}");
}

/* ---- One call --------------------------------------------------------- */

enum shape { SHAPE_NONE, SHAPE_READ, SHAPE_PROMPT, SHAPE_TOOL, SHAPE_COMPLETE, SHAPE_LIST, SHAPE_ERROR, SHAPE_INPUT };

struct corral_call {
	int op;
	corral_str req;
	enum shape shape;
	int items;    /* contents, messages, blocks, values or resources written */
	long total;   /* completion values offered */
	int is_error; /* tool */
	const char *structured, *description, *next_cursor, *state;
	long limit;
	long long ttl_ms; /* read: the caching hint, when has_ttl */
	int has_ttl;
};

static corral_call call_state;

corral_str corral_request_json(corral_call *c) { return c->req; }
int corral_op(corral_call *c) { return c->op; }

/* field decodes the string at path a (then b, if not NULL) of the request. */
static const char *field(corral_call *c, const char *a, const char *b) {
	corral_str v;
	if (!corral_json_member(c->req, a, &v)) return NULL;
	if (b && !corral_json_member(v, b, &v)) return NULL;
	return corral_json_cstr(v);
}

const char *corral_uri(corral_call *c) { return field(c, "uri", NULL); }
const char *corral_variable(corral_call *c, const char *name) { return field(c, "variables", name); }
const char *corral_name(corral_call *c) { return field(c, "name", NULL); }
const char *corral_argument(corral_call *c, const char *name) { return field(c, "arguments", name); }
const char *corral_completing(corral_call *c) { return field(c, "argument", "name"); }
const char *corral_partial(corral_call *c) {
	const char *v = field(c, "argument", "value");
	return v ? v : "";
}
const char *corral_principal(corral_call *c) {
	const char *v = field(c, "principal", "id");
	return v ? v : "";
}
const char *corral_cursor(corral_call *c) {
	const char *v = field(c, "cursor", NULL);
	return v ? v : "";
}
long corral_limit(corral_call *c) { return c->limit; }
const char *corral_state(corral_call *c) { return field(c, "state", NULL); }

corral_str corral_argument_json(corral_call *c, const char *name) {
	corral_str v = {0}, args;
	if (corral_json_member(c->req, "arguments", &args)) corral_json_member(args, name, &v);
	return v;
}

corral_str corral_input_response(corral_call *c, const char *key) {
	corral_str v = {0}, all;
	if (corral_json_member(c->req, "inputResponses", &all)) corral_json_member(all, key, &v);
	return v;
}

/* item starts the next element of the result's array. */
static int item(corral_call *c, enum shape want) {
	if (c->shape != want) return 0;
	if (c->items++) raw(&out, ",");
	return 1;
}

static void text_contents(const char *uri, const char *mime_type, const char *text) {
	int f = 1;
	raw(&out, "{");
	opt(&out, &f, "uri", uri);
	opt(&out, &f, "mimeType", mime_type);
	member(&out, &f, "text"), str(&out, text);
	raw(&out, "}");
}

int corral_text_contents(corral_call *c, const char *uri, const char *mime_type, const char *text) {
	if (!item(c, SHAPE_READ)) return CORRAL_EINVALID;
	text_contents(uri, mime_type, text);
	return 0;
}

int corral_blob_contents(corral_call *c, const char *uri, const char *mime_type, const void *data, size_t len) {
	if (!item(c, SHAPE_READ)) return CORRAL_EINVALID;
	int f = 1;
	raw(&out, "{");
	opt(&out, &f, "uri", uri);
	opt(&out, &f, "mimeType", mime_type);
	raw(&out, ",\"blob\":\"");
	base64(&out, data, len);
	raw(&out, "\"}");
	return 0;
}

void corral_ttl(corral_call *c, long long ms) {
	c->ttl_ms = ms;
	c->has_ttl = ms >= 0;
}

int corral_message_text(corral_call *c, const char *role, const char *text) {
	if (!item(c, SHAPE_PROMPT)) return CORRAL_EINVALID;
	raw(&out, "{\"role\":"), str(&out, role);
	raw(&out, ",\"content\":{\"type\":\"text\",\"text\":"), str(&out, text);
	raw(&out, "}}");
	return 0;
}

int corral_message_resource(corral_call *c, const char *role, const char *uri, const char *mime_type, const char *text) {
	if (!item(c, SHAPE_PROMPT)) return CORRAL_EINVALID;
	raw(&out, "{\"role\":"), str(&out, role);
	raw(&out, ",\"content\":{\"type\":\"resource\",\"resource\":");
	text_contents(uri, mime_type, text);
	raw(&out, "}}");
	return 0;
}

void corral_prompt_description(corral_call *c, const char *description) {
	c->description = description ? dup(description, strlen(description)) : NULL;
}

int corral_tool_text(corral_call *c, const char *text) {
	if (!item(c, SHAPE_TOOL)) return CORRAL_EINVALID;
	raw(&out, "{\"type\":\"text\",\"text\":"), str(&out, text), raw(&out, "}");
	return 0;
}

int corral_tool_structured(corral_call *c, const char *json) {
	if (c->shape != SHAPE_TOOL) return CORRAL_EINVALID;
	if (!(c->structured = dup(json, strlen(json)))) return CORRAL_ETOOLARGE;
	return 0;
}

int corral_tool_error(corral_call *c, const char *text) {
	int r = corral_tool_text(c, text);
	if (r == 0) c->is_error = 1;
	return r;
}

int corral_completion(corral_call *c, const char *value) {
	if (c->shape != SHAPE_COMPLETE) return CORRAL_EINVALID;
	if (c->total++ >= MAX_COMPLETIONS) return 0;
	if (c->items++) raw(&out, ",");
	str(&out, value);
	return 0;
}

int corral_list_resource(corral_call *c, corral_resource_def d) {
	if (c->shape != SHAPE_LIST) return CORRAL_EINVALID;
	if (c->items >= c->limit) return CORRAL_ETOOLARGE;
	item(c, SHAPE_LIST);
	int f = 1;
	raw(&out, "{");
	opt(&out, &f, "uri", d.uri);
	opt(&out, &f, "name", d.name);
	opt(&out, &f, "title", d.title);
	opt(&out, &f, "description", d.description);
	opt(&out, &f, "mimeType", d.mime_type);
	raw(&out, "}");
	return 0;
}

void corral_next_cursor(corral_call *c, const char *cursor) {
	c->next_cursor = cursor ? dup(cursor, strlen(cursor)) : NULL;
}

int corral_error(corral_call *c, const char *code, const char *message) {
	c->shape = SHAPE_ERROR;
	out.len = 0, out.overflow = 0;
	raw(&out, "{\"code\":"), str(&out, empty(code) ? CORRAL_INTERNAL : code);
	raw(&out, ",\"message\":"), str(&out, message);
	raw(&out, "}");
	return CORRAL_STATUS_ERROR;
}

/* input starts (or continues) the input_required answer. */
static void input(corral_call *c) {
	if (c->shape != SHAPE_INPUT) {
		c->shape = SHAPE_INPUT;
		c->items = 0;
		out.len = 0, out.overflow = 0;
		raw(&out, "{\"inputRequests\":{");
	}
}

int corral_elicit(corral_call *c, const char *key, const char *message, const char *schema) {
	input(c);
	if (c->items++) raw(&out, ",");
	str(&out, key);
	raw(&out, ":{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":");
	str(&out, message);
	raw(&out, ",\"requestedSchema\":"), raw(&out, schema);
	raw(&out, "}}");
	return CORRAL_STATUS_INPUT_REQUIRED;
}

int corral_input_state(corral_call *c, const char *state) {
	input(c);
	c->state = state ? dup(state, strlen(state)) : NULL;
	return CORRAL_STATUS_INPUT_REQUIRED;
}

/* fail answers the guest error code with the message what followed by name. */
static int fail(corral_call *c, const char *code, const char *what, const char *name) {
	corral_buf b = {corral_alloc(512), 0, 512, 0, 0};
	if (b.ptr) {
		raw(&b, what);
		raw(&b, name ? name : "");
		corral_buf_raw(&b, "", 1);
	}
	return corral_error(c, code, b.ptr && !b.overflow ? b.ptr : what);
}

static int dispatch(corral_call *c) {
	switch (c->op) {
	case 1: /* describe */
		manifest(&out);
		return CORRAL_OK;
	case 2: { /* list_resources */
		c->shape = SHAPE_LIST;
		long long limit = 100;
		corral_str v;
		if (corral_json_member(c->req, "limit", &v) && corral_json_int(v, &limit) && limit > 0) c->limit = (long)limit;
		else c->limit = 100;
		raw(&out, "{\"resources\":[");
		return reg.lister ? reg.lister(c) : CORRAL_OK;
	}
	case 3: { /* read_resource */
		const char *uri = corral_uri(c);
		if (!uri) return corral_error(c, CORRAL_INVALID_PARAMS, "malformed request: no uri");
		corral_handler read = NULL;
		for (int i = 0; i < reg.nresources && !read; i++)
			if (strcmp(reg.resources[i].d.uri, uri) == 0) read = reg.resources[i].read;
		const char *tmpl = read ? NULL : field(c, "template", NULL);
		for (int i = 0; tmpl && i < reg.ntemplates && !read; i++)
			if (strcmp(reg.templates[i].d.uri_template, tmpl) == 0) read = reg.templates[i].read;
		if (!read) read = reg.reader;
		if (!read) return fail(c, CORRAL_NOT_FOUND, "resource not found: ", uri);
		c->shape = SHAPE_READ;
		raw(&out, "{\"contents\":[");
		int st = read(c);
		if (st == CORRAL_OK && c->shape == SHAPE_READ && c->items == 0)
			return fail(c, CORRAL_INTERNAL, "read handler returned no contents for ", uri);
		return st;
	}
	case 4: { /* get_prompt */
		const char *name = corral_name(c);
		prompt_entry *e = NULL;
		for (int i = 0; name && i < reg.nprompts && !e; i++)
			if (strcmp(reg.prompts[i].d.name, name) == 0) e = &reg.prompts[i];
		if (!e) return fail(c, CORRAL_NOT_FOUND, "prompt not found: ", name ? name : "");
		for (int i = 0; i < nargs(&e->d); i++) {
			const char *v = corral_argument(c, e->d.arguments[i].name);
			if (e->d.arguments[i].required && empty(v))
				return fail(c, CORRAL_INVALID_PARAMS, "missing required argument ", e->d.arguments[i].name);
		}
		c->shape = SHAPE_PROMPT;
		raw(&out, "{\"messages\":[");
		return e->get(c);
	}
	case 5: { /* call_tool */
		const char *name = corral_name(c);
		tool_entry *e = NULL;
		for (int i = 0; name && i < reg.ntools && !e; i++)
			if (strcmp(reg.tools[i].d.name, name) == 0) e = &reg.tools[i];
		if (!e) return fail(c, CORRAL_NOT_FOUND, "tool not found: ", name ? name : "");
		corral_str args = {0};
		if (corral_json_member(c->req, "arguments", &args)) {
			args = trim(args);
			if (args.len && args.ptr[0] != '{' && !(args.len == 4 && memcmp(args.ptr, "null", 4) == 0))
				return fail(c, CORRAL_INVALID_PARAMS, "arguments must be a JSON object: tool ", name);
		}
		c->shape = SHAPE_TOOL;
		raw(&out, "{\"content\":[");
		corral_str iter = e->required, req, v;
		while (corral_json_next(&iter, &req)) {
			const char *arg = corral_json_cstr(req);
			if (arg && !corral_json_member(args, arg, &v)) {
				corral_buf b = {corral_alloc(300), 0, 300, 0, 0};
				if (b.ptr) {
					raw(&b, "missing required argument ");
					str(&b, arg);
					corral_buf_raw(&b, "", 1);
				}
				corral_tool_error(c, b.ptr && !b.overflow ? b.ptr : "missing required argument");
				return CORRAL_OK;
			}
		}
		return e->call(c);
	}
	case 6: { /* complete */
		const char *type = field(c, "ref", "type");
		const char *arg = corral_completing(c);
		corral_handler fn = NULL;
		const char *can = NULL;
		if (type && strcmp(type, "ref/prompt") == 0) {
			const char *name = field(c, "ref", "name");
			prompt_entry *e = NULL;
			for (int i = 0; name && i < reg.nprompts && !e; i++)
				if (strcmp(reg.prompts[i].d.name, name) == 0) e = &reg.prompts[i];
			if (!e) return fail(c, CORRAL_NOT_FOUND, "prompt not found: ", name ? name : "");
			fn = e->complete, can = e->d.complete;
		} else if (type && strcmp(type, "ref/resource") == 0) {
			const char *uri = field(c, "ref", "uri");
			template_entry *e = NULL;
			for (int i = 0; uri && i < reg.ntemplates && !e; i++)
				if (strcmp(reg.templates[i].d.uri_template, uri) == 0) e = &reg.templates[i];
			if (!e) return fail(c, CORRAL_NOT_FOUND, "template not found: ", uri ? uri : "");
			fn = e->complete, can = e->d.complete;
		} else {
			return fail(c, CORRAL_INVALID_PARAMS, "unknown completion ref type ", type ? type : "");
		}
		c->shape = SHAPE_COMPLETE;
		raw(&out, "{\"completion\":{\"values\":[");
		return fn && arg && in_csv(can, arg) ? fn(c) : CORRAL_OK;
	}
	}
	return corral_error(c, CORRAL_NOT_FOUND, "unknown operation");
}

/* finish closes the result the handler wrote. */
static void finish(corral_call *c) {
	switch (c->shape) {
	case SHAPE_READ:
		raw(&out, "]");
		if (c->has_ttl) raw(&out, ",\"ttlMs\":"), corral_buf_int(&out, c->ttl_ms);
		raw(&out, "}");
		break;
	case SHAPE_PROMPT:
		raw(&out, "]");
		if (c->description) raw(&out, ",\"description\":"), str(&out, c->description);
		raw(&out, "}");
		break;
	case SHAPE_TOOL:
		raw(&out, "]");
		if (c->structured) raw(&out, ",\"structuredContent\":"), raw(&out, c->structured);
		if (c->is_error) raw(&out, ",\"isError\":true");
		raw(&out, "}");
		break;
	case SHAPE_COMPLETE:
		raw(&out, "],\"total\":"), corral_buf_int(&out, c->total);
		raw(&out, c->total > MAX_COMPLETIONS ? ",\"hasMore\":true}}" : "}}");
		break;
	case SHAPE_LIST:
		raw(&out, "]");
		if (!empty(c->next_cursor)) raw(&out, ",\"nextCursor\":"), str(&out, c->next_cursor);
		raw(&out, "}");
		break;
	case SHAPE_INPUT:
		if (c->items == 0) out.len = 0, raw(&out, "{"); /* state alone */
		else raw(&out, "}");
		if (c->state) raw(&out, c->items ? ",\"state\":" : "\"state\":"), str(&out, c->state);
		raw(&out, "}");
		break;
	case SHAPE_NONE:
	case SHAPE_ERROR: break;
	}
}

EXPORT("corral_abi_v1") int32_t corral_export_abi_v1(void) { return CORRAL_ABI_MINOR; }

EXPORT("corral_buffer") void *corral_export_buffer(uint32_t size) {
	if (size <= request_cap) return request_ptr;
	size_t cap = request_cap * 2 > size ? request_cap * 2 : size;
	char *p = regrow(request_ptr, request_ptr == request_static, 0, cap);
	if (!p) return NULL;
	request_ptr = p, request_cap = cap;
	return p;
}

EXPORT("corral_call") int32_t corral_export_call(int32_t op, uint32_t len) {
	set_up();
	corral_call *c = &call_state;
	*c = (corral_call){.op = op, .req = {request_ptr, len <= request_cap ? len : 0}};
	arena_used = 0;
	out.len = 0, out.overflow = 0;
	int status;
	if (reg.nerrors) status = corral_error(c, CORRAL_INTERNAL, reg.errors);
	else if (op != 1 && len > request_cap) status = corral_error(c, CORRAL_INVALID_PARAMS, "request larger than the buffer");
	else status = dispatch(c);
	if (c->shape == SHAPE_INPUT && (op < 3 || op > 5))
		status = corral_error(c, CORRAL_INTERNAL, "input_required answers only a read, a prompt or a tool");
	else if (c->shape == SHAPE_INPUT)
		status = CORRAL_STATUS_INPUT_REQUIRED;
	else if (status == CORRAL_STATUS_INPUT_REQUIRED)
		status = corral_error(c, CORRAL_INTERNAL, "handler returned input_required without asking for input");
	else if (status != CORRAL_OK && status != CORRAL_STATUS_ERROR && status != CORRAL_STATUS_INPUT_REQUIRED)
		status = corral_error(c, CORRAL_INTERNAL, "handler returned an unknown status");
	else if (status == CORRAL_STATUS_ERROR && c->shape != SHAPE_ERROR)
		status = corral_error(c, CORRAL_INTERNAL, "handler failed without corral_error");
	finish(c);
	if (out.overflow) status = corral_error(c, CORRAL_INTERNAL, "response over the SDK's buffer");
	corral_host_set_result(out.ptr, out.len);
	return status;
}

/* ---- Host capabilities ------------------------------------------------ */

/* output takes n pending bytes into the arena (NUL-terminated). */
static int output(int32_t n, corral_str *dst) {
	if (n < 0) return n;
	char *buf = corral_alloc((size_t)n + 1);
	if (!buf) return CORRAL_ETOOLARGE;
	if (n > 0) {
		int32_t got = corral_host_take(buf, (size_t)n);
		if (got < 0) return got;
	}
	buf[n] = 0;
	*dst = (corral_str){buf, (size_t)n};
	return n;
}

static size_t len0(const char *s) { return s ? strlen(s) : 0; }

int corral_log(int level, const char *message) { return corral_host_log(level, message, len0(message)); }
int corral_notify_updated(const char *uri) { return corral_host_notify(1, uri, len0(uri)); }
int corral_notify_list_changed(int kind) { return corral_host_notify(kind, NULL, 0); }
int corral_progress(double progress, double total, const char *message) {
	return corral_host_progress(progress, total, message, len0(message));
}
int corral_kv_get(const char *key, corral_str *value) { return output(corral_host_kv_get(key, len0(key)), value); }
int corral_kv_set(const char *key, const void *value, size_t len) { return corral_host_kv_set(key, len0(key), value, len); }
int corral_kv_delete(const char *key) { return corral_host_kv_delete(key, len0(key)); }
int corral_file_read(const char *path, corral_str *data) { return output(corral_host_file_read(path, len0(path)), data); }
int corral_file_stat(const char *path, corral_str *info) { return output(corral_host_file_stat(path, len0(path)), info); }
int corral_file_list(const char *path, corral_str *entries) { return output(corral_host_file_list(path, len0(path)), entries); }
int corral_file_roots(corral_str *roots) { return output(corral_host_file_roots(), roots); }
int corral_http_fetch(const char *request, corral_str *response) {
	return output(corral_host_http_fetch(request, len0(request)), response);
}

/* http sends method to url (with body as content_type when POST) and
 * decodes the response into *r. */
static int http(const char *method, const char *url, const char *content_type, const void *body, size_t len,
                corral_http_response *r) {
	size_t cap = len0(url) * 6 + len0(content_type) * 6 + (len + 2) / 3 * 4 + 96;
	corral_buf b = {corral_alloc(cap), 0, cap, 0, 0};
	if (!b.ptr) return CORRAL_ETOOLARGE;
	raw(&b, "{\"method\":"), str(&b, method), raw(&b, ",\"url\":"), str(&b, url);
	if (content_type) raw(&b, ",\"headers\":{\"Content-Type\":"), str(&b, content_type), raw(&b, "}");
	if (body) raw(&b, ",\"body\":\""), base64(&b, body, len), raw(&b, "\"");
	corral_buf_raw(&b, "}", 2);
	if (b.overflow) return CORRAL_ETOOLARGE;
	corral_str resp, status, rbody;
	int n = corral_http_fetch(b.ptr, &resp);
	if (n < 0) return n;
	long long st;
	if (!corral_json_member(resp, "status", &status) || !corral_json_int(status, &st)) return CORRAL_EIO;
	*r = (corral_http_response){.status = (int)st, .body = {"", 0}};
	corral_json_member(resp, "headers", &r->headers);
	if (corral_json_member(resp, "body", &rbody)) {
		rbody = trim(rbody);
		if (rbody.len < 2 || rbody.ptr[0] != '"') return CORRAL_EIO;
		unsigned char *d = corral_alloc(rbody.len);
		if (!d) return CORRAL_ETOOLARGE;
		long l = unbase64(rbody.ptr + 1, rbody.len - 2, d);
		if (l < 0) return CORRAL_EIO;
		r->body = (corral_str){(const char *)d, (size_t)l};
	}
	return 0;
}

int corral_http_get(const char *url, corral_http_response *r) { return http("GET", url, NULL, NULL, 0, r); }

int corral_http_post(const char *url, const char *content_type, const void *body, size_t len, corral_http_response *r) {
	return http("POST", url, content_type, body ? body : "", len, r);
}

int corral_config_get(const char *key, const char **value) {
	corral_str v;
	int n = output(corral_host_config_get(key, len0(key)), &v);
	if (n >= 0) *value = v.ptr;
	return n;
}

const char *corral_errno_name(int e) {
	static const char *const names[] = {"denied", "not found", "invalid", "quota exceeded",
	                                    "too large", "i/o error", "rate limited", "timeout"};
	return e <= -1 && e >= -8 ? names[-e - 1] : "host error";
}

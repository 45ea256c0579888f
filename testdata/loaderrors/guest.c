/* guest.c: a small corral guest in C (it answers describe), built by
   build.sh with and without the flags a plugin needs, to show what each
   mistake looks like at load time. */
#include <stdint.h>

__attribute__((import_module("corral_v1"), import_name("set_result"))) void set_result(const void *p, uint32_t n);

static char buf[65536];
static const char manifest[] = "{\"name\":\"cguest\",\"version\":\"1\",\"abi\":1,\"schemes\":[\"cguest\"]}";
static const char not_found[] = "{\"code\":\"not_found\",\"message\":\"unknown operation\"}";

#ifndef NO_MARKER
__attribute__((export_name("corral_abi_v1"))) int32_t abi_v1(void) { return 2; }
#endif

__attribute__((export_name("corral_buffer"))) void *buffer(uint32_t n) { return n <= sizeof buf ? buf : 0; }

__attribute__((export_name("corral_call"))) int32_t call(int32_t op, uint32_t len) {
	(void)len;
	if (op == 1) {
#ifdef DESCRIBE_TRAPS
		__builtin_trap();
#endif
		set_result(manifest, sizeof manifest - 1);
		return 0;
	}
	set_result(not_found, sizeof not_found - 1);
	return 1;
}

#ifdef COMMAND
int main(void) { return 0; }
#endif

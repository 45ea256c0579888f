/* env.c: a guest linked for no host (clang --target=wasm32 with
   --allow-undefined): the undefined host_log becomes an import from "env". */
#include <stdint.h>

extern void host_log(const char *msg);

__attribute__((export_name("corral_abi_v1"))) int32_t abi_v1(void) {
	host_log("hello");
	return 2;
}

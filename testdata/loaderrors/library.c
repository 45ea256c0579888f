/* library.c: an ordinary WASI reactor library, not a corral plugin: it
   exports none of corral's functions. */
#include <stdint.h>

__attribute__((export_name("add"))) int32_t add(int32_t a, int32_t b) { return a + b; }

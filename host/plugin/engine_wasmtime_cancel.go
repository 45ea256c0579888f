//go:build wasmtime

package plugin

/*
#include <stdint.h>
#include <stdlib.h>

typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;

// The wasmtime C API that wasmtime-go links but does not wrap. Weak, so
// that cgo's own link of this package alone resolves them to NULL; the
// binary's link finds them in libwasmtime.
extern void wasmtime_store_epoch_deadline_callback(wasmtime_store_t *store,
	wasmtime_error_t *(*func)(wasmtime_context_t *, void *, uint64_t *, uint8_t *),
	void *data, void (*finalizer)(void *)) __attribute__((weak));
extern wasmtime_error_t *wasmtime_error_new(const char *message) __attribute__((weak));

// corral_epoch is a store's watch on its running call: the call is
// stopped when stop is set (the caller gave up) or when left, the ticks
// to its deadline, runs out; last is the slice granted last.
typedef struct {
	int32_t stop;
	uint64_t left, last, slice;
} corral_epoch;

static wasmtime_error_t *corral_epoch_check(wasmtime_context_t *ctx, void *data, uint64_t *delta, uint8_t *kind) {
	(void)ctx;
	corral_epoch *e = data;
	e->left = e->left > e->last ? e->left - e->last : 0;
	if (__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE) || e->left == 0) return wasmtime_error_new("corral: call interrupted");
	e->last = e->left < e->slice ? e->left : e->slice;
	*delta = e->last;
	*kind = 0; // WASMTIME_UPDATE_DEADLINE_CONTINUE
	return NULL;
}

static corral_epoch *corral_epoch_install(void *store) {
	if (!wasmtime_store_epoch_deadline_callback || !wasmtime_error_new) return NULL;
	corral_epoch *e = calloc(1, sizeof *e);
	if (e) wasmtime_store_epoch_deadline_callback(store, corral_epoch_check, e, NULL);
	return e;
}
*/
import "C"

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
)

// epochSlice is how many epoch ticks a call runs between two looks at
// whether its caller gave up: the latency of a cancel.
const epochSlice = 10

// epochStopped is the message of the error a watched call stops with.
const epochStopped = "corral: call interrupted"

// epochWatch stops a store's running call when its context is done, not
// only at its deadline: epochs alone interrupt at a deadline fixed when
// the call starts, so a cancelled call without a near deadline would run
// on. The store's deadline callback (run by wasmtime on the call's own
// thread every epochSlice ticks) reads a flag the context sets.
type epochWatch struct {
	mu   sync.Mutex // a context's stop against free
	c    *C.corral_epoch
	gone bool
}

// watchEpochs installs the watch on store; nil when the linked wasmtime
// lacks the callback (the call then stops only at its deadline). free
// releases it once the store is closed.
func watchEpochs(store *wasmtime.Store) *epochWatch {
	// wasmtime-go keeps the C store as the first field of Store and has
	// no accessor for it (pinned: go.mod's wasmtime-go v39).
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(store))
	c := C.corral_epoch_install(ptr)
	if c == nil {
		return nil
	}
	return &epochWatch{c: c}
}

// arm sets the watch for a call of ticks to its deadline and returns the
// first epoch deadline to set, and the function that ends the watch.
func (w *epochWatch) arm(ctx context.Context, ticks uint64) (first uint64, release func() bool) {
	atomic.StoreInt32((*int32)(unsafe.Pointer(&w.c.stop)), 0)
	first = min(ticks, epochSlice)
	w.c.left, w.c.last, w.c.slice = C.uint64_t(ticks), C.uint64_t(first), epochSlice
	return first, context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.gone {
			atomic.StoreInt32((*int32)(unsafe.Pointer(&w.c.stop)), 1)
		}
	})
}

// free releases the watch of a closed store.
func (w *epochWatch) free() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gone {
		w.gone = true
		C.free(unsafe.Pointer(w.c))
	}
}

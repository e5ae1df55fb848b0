/*
 * trace_build.h - one trace as a tree: parent links, root choice, orphans,
 * cycles, client/server pairing, clock-skew handling, sibling overlap and
 * the critical path. Shared by the aggregate analysis and the waterfall.
 */
#ifndef TT_TRACE_BUILD_H
#define TT_TRACE_BUILD_H

#include <stdint.h>

#include "analysis.h"
#include "buf.h"
#include "store.h"

/* Working copy of one span. String fields are offsets into Trace.arena. */
typedef struct TSpan {
	size_t sid, pid, svc, name, host, cls, attrs, events; /* arena offsets */
	int kind;
	int64_t start, end;        /* as recorded */
	int64_t astart, aend;      /* adjusted: skew-corrected and clipped */
	int status;
	int has_queue;
	int64_t queue;
	int parent;                /* -1: root or orphan root */
	int first_child, next_sibling;
	int server;                /* CLIENT: paired SERVER child, else -1 */
	int client;                /* SERVER: the client it is paired with, else -1 */
	int orphan;                /* subtree root whose parent is missing */
	int outside;               /* wholly outside its parent: off the path */
	int excluded;              /* under an orphan root */
	int node;                  /* aggregate node id (set by the caller) */
	int comp;                  /* COMP_WAIT for a client span, else COMP_SERVICE */
	int64_t crit;              /* own time on the critical path (ns) */
	int64_t crit_queue;        /* queue time credited on the path (ns) */
	int on_path;
} TSpan;

typedef struct Trace {
	char trace_id[33];
	Buf arena;
	TSpan *sp;
	int n, cap;
	int root;                  /* -1: no root */
	int n_extra_roots;
	int n_orphans;
	int n_unpaired;
	int n_clipped;
	int n_skew;
	int n_late;                /* server spans outliving their client call */
	double skew_max_ms;
	int n_outside;
	int cyclic;
	int attrs_loaded;
} Trace;

void trace_init(Trace *t);
void trace_fini(Trace *t);
void trace_reset(Trace *t, const char *trace_id);
/* Appends a row (strings copied). */
void trace_add(Trace *t, const StoreSpanRow *r);

static inline const char *trace_str(const Trace *t, size_t off)
{
	return t->arena.p + off;
}

/* Links parents and children, picks the root, marks orphans, detects
 * cycles (t->cyclic), pairs client and server spans, adjusts for skew and
 * marks spans outside their parent. */
void trace_link(Trace *t);

/* Computes the critical path from the root (requires trace_link and, for
 * credit to land on nodes, TSpan.node/comp). Sets crit/crit_queue/on_path. */
void trace_critical_path(Trace *t);

/* Request latency at ingress in ns: root duration plus queue before it. */
int64_t trace_ingress_ns(const Trace *t);

#endif

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
	size_t db;                 /* db system of a database client span, or 0 */
	size_t peer;               /* a client span's peer.service / server.address, or 0 */
	size_t callee;             /* CLIENT: trace_callee(), set by trace_link(), or 0 */
	size_t route;              /* its route (common/route.h), 0: none or its name */
	int route_rule;            /* ROUTE_* of route, -1 none */
	int kind;
	int64_t start, end;        /* as recorded */
	int64_t astart, aend;      /* adjusted: skew-corrected and clipped */
	int status;
	int has_queue;
	int64_t queue;             /* queue wait, 0 when the row had a negative one */
	int64_t queue_row;         /* as the row had it */
	int parent;                /* -1: root or orphan root */
	int first_child, next_sibling;
	int server;                /* CLIENT: paired SERVER child, else -1 */
	int client;                /* SERVER: the client it is paired with, else -1 */
	int orphan;                /* subtree root whose parent is missing */
	int outside;               /* wholly outside its parent: off the path */
	int late;                  /* SERVER: outlived its call, which failed: late
	                            * work (the caller gave up; trace_link) */
	int excluded;              /* not part of the request (trace_link_entry():
	                            * above its entry) */
	int above;                 /* trace_link_entry(): outside the entry's
	                            * subtree (a caller's span above it) */
	int node;                  /* aggregate node id (set by the caller) */
	int comp;                  /* COMP_WAIT for a client span, else COMP_SERVICE */
	int64_t crit;              /* own time on the critical path (ns) */
	int64_t crit_queue;        /* queue time credited on the path (ns) */
	int on_path;
	/* The walks' tree (critical path, timing program): the recorded
	 * children, except that a container holds the siblings it covers
	 * (trace_link; see trace_holds()). */
	int wfirst, wnext;         /* first walk child, next walk sibling, -1 */
	int holder;                /* the container sibling that holds it, or -1 */
} TSpan;

typedef struct Trace {
	char trace_id[33];
	int64_t key;               /* its rows' trace key (0: rows without one) */
	Buf arena;
	TSpan *sp;
	int n, cap;
	int root;                  /* -1: no root. trace_link(): the parentless
	                            * span that starts first; trace_link_entry():
	                            * the entry (-1: the trace has none) */
	int top;                   /* the parentless span that starts first, -1 */
	int entry;                 /* the entry server span (trace_entry()), -1 */
	int n_above;               /* trace_link_entry(): spans left out, above
	                            * the entry */
	int n_extra_roots;
	int n_orphans;
	int n_unpaired;            /* client spans without a server span, except... */
	int n_db;                  /* ...database client spans: leaf calls */
	int n_clipped;
	int n_skew;
	int n_late;                /* server spans outliving their client call */
	double skew_max_ms;
	int n_outside;
	int n_held;                /* spans held by a container sibling */
	int cyclic;
	int attrs_loaded;
	int64_t tol_abs;           /* skew tolerance between siblings (trace_set_skew) */
	double tol_frac;
	int64_t upto;              /* the largest rowid of its rows */
	int id_cut;                /* trace_id holds only the start of the id */
	void *scratch;             /* trace_link()'s working memory, kept */
	size_t scratch_cap;
} Trace;

/* trace_init() sets the default skew tolerance; trace_reset() keeps it. */
void trace_init(Trace *t);
void trace_fini(Trace *t);
void trace_reset(Trace *t, const char *trace_id);
/* Appends a row (strings copied). */
void trace_add(Trace *t, const StoreSpanRow *r);
/* 1 when row r belongs to t (which has rows): the same trace key, or for
 * rows without one, the same trace id. */
int trace_same(const Trace *t, const StoreSpanRow *r);

static inline const char *trace_str(const Trace *t, size_t off)
{
	return t->arena.p + off;
}

/* Sets the sibling skew tolerance (NULL or unset: the default). */
void trace_set_skew(Trace *t, const SkewTolerance *skew);

/* Is the interval [as, ae] a serial predecessor of [bs, be] whose overlap
 * is within the tolerance? True when a starts before b, ends before b
 * ends, and 0 < ae - bs <= min(tol_abs, ANALYSIS_SKEW_ABS_CAP * d) +
 * tol_frac * d, d the shorter duration. */
int trace_skew_serial(const Trace *t, int64_t as, int64_t ae, int64_t bs, int64_t be);

/* Do siblings a and b (span indexes) run in parallel? They overlap in
 * time (adjusted times), neither is the other's serial predecessor
 * within the skew tolerance, and neither holds the other (a container
 * and what it covers are not a fan-out). */
int trace_siblings_parallel(const Trace *t, int a, int b);

/* Does container c hold span s in the walks' tree (directly, or through
 * a container it holds)? A *container* is a local span (INTERNAL or
 * unspecified kind) of its parent's service whose interval covers, within
 * the skew tolerance, every sibling it overlaps (a local one shorter than
 * itself), one of which at least is a call: a framework's handler or a wrapper recorded beside the
 * request's calls instead of above them (Spring Cloud Gateway's
 * FilteringWebHandler.handle). It holds those siblings: the critical path
 * and the timing program descend into it as into a parent, so its own
 * time is only its gaps. A wrapper recorded as the parent of its calls
 * (a servlet filter, an Express handler) is a parent already. */
int trace_holds(const Trace *t, int c, int s);

/* Links parents and children, picks the root, marks orphans, detects
 * cycles (t->cyclic), pairs client and server spans, adjusts for skew,
 * marks spans outside their parent and builds the walks' tree (wfirst,
 * wnext, holder: containers hold the siblings they cover); sets t->entry.
 * The whole trace, as the waterfall shows it. */
void trace_link(Trace *t);

/* The request of the trace (DESIGN.md, "Endpoint"): its entry span, which
 * trace_link*() set in t->entry, is
 *  - the root when the root is a SERVER span;
 *  - else the first SERVER span (earliest start, then lowest span id)
 *    with no SERVER span above it: the one below a load generator's or a
 *    browser's CLIENT root, or one whose caller is not in the data (its
 *    parent missing, as with an untraced caller);
 *  - else, in a trace without server spans, the root unless it is a
 *    CLIENT span (a client alone is not an endpoint);
 *  - else none (-1).
 * trace_link_entry() links the trace as trace_link() does, but with the
 * entry as its root: the spans above it (and the rest of the subtree it
 * hangs in) are excluded and counted in t->n_above, and pairing, skew
 * and the critical path start at it. t->root is the entry (-1: none);
 * t->top stays the trace's first parentless span. */
void trace_link_entry(Trace *t);

/* trace_link_entry(), then 1 when the trace is a request of the endpoint
 * (service, route): no parent cycle, an entry, and its service and route
 * (trace_route()); else 0. */
int trace_link_request(Trace *t, const char *service, const char *route);

/* The route of span s: its stored route, else its name. */
const char *trace_route(const Trace *t, int s);

/* When the request starts, for windows: the start of the trace's first
 * parentless span, else (a trace without one) of its earliest span, as
 * the store's windowed reads choose traces (store_spans_scan()). */
int64_t trace_request_start(const Trace *t);

/* Computes the critical path from the root (requires trace_link and, for
 * credit to land on nodes, TSpan.node/comp) over the walks' tree (a
 * container's contents are on it, not the container's whole length).
 * Sets crit/crit_queue/on_path.
 * Siblings within the skew tolerance of each other are serial on the path
 * and their overlap is split at its midpoint, so the crit + crit_queue of
 * every span except the root's own queue add up to the root's duration. */
void trace_critical_path(Trace *t);

/* Request latency at ingress in ns: root duration plus queue before it. */
int64_t trace_ingress_ns(const Trace *t);

/* The server's time inside client span s (which has a paired server) in
 * ns: the server span after clipping (small overruns, late work) and skew
 * centring, which keeps the server's own duration when it fits, and never
 * more than the call nor less than 0. The rest of the call is its
 * client-side wait. */
int64_t trace_server_in_call_ns(const Trace *t, int s);
/* The observation one unit of a request makes for its DAG node: span s
 * taken as a node of type (NODE_ROOT, NODE_CALL, NODE_LOCAL). f[] in ms,
 * NAN where unknown: total (a root: the ingress latency, queue included),
 * client wait and service (a call's split; a database call's client time
 * is its service; a local span is all service), queue (when the data
 * carries it). Returns TRACE_SPLIT_* flags. Needs trace_link(). The exact
 * analysis and the import-time aggregates both take their numbers here. */
enum { TRACE_F_TOTAL, TRACE_F_WAIT, TRACE_F_SERVICE, TRACE_F_QUEUE, TRACE_F_COUNT };
enum { TRACE_SPLIT_UNKNOWN = 2, TRACE_SPLIT_DB = 4 };
int trace_unit_split(const Trace *t, int s, int type, double f[TRACE_F_COUNT]);

/* What call s (a CLIENT span) is made to, as its own attributes name it:
 * its database system (a database call's server.address often names one
 * replica of many), else its peer (peer.service, server.address,
 * net.peer.name); for a call that names neither, what the calls of the
 * same service and span name under the same parent name, when they all
 * name the same; else "" (and for any other span). A DAG node is
 * (parent node, type, service, span name, this): an HTTP client names its
 * spans after the method alone ("GET"), so without it the calls one
 * service makes to two dependencies would be one node. Not the paired
 * server span's service: a call whose server span is missing, or arrives
 * in a later export, would then move from one node to another. */
const char *trace_callee(const Trace *t, int s);

#endif

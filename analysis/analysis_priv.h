/*
 * analysis_priv.h - what analysis.c shares with the other builders of an
 * Analysis (agg.c) and nobody else sees.
 */
#ifndef TT_ANALYSIS_PRIV_H
#define TT_ANALYSIS_PRIV_H

#include "analysis.h"

/* Sets d->mandatory, d->core and d->label (malloc'd) from model m (may be
 * NULL), matching d by dependency, or by service and operation. */
void analysis_node_semantics(const Model *m, DagNode *d);

/* Fills every node's children[] (n_children, in id order) from the
 * parent links of a->nodes[0 .. a->n_nodes). */
void analysis_link_children(Analysis *a);

#endif

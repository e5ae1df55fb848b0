/*
 * model.c - lookups, release and the file rendering of the plain endpoint
 * model. The writer is here rather than in importers/ because it needs no
 * JSON library (strings go through buf_add_json_str) and the dashboard,
 * which may not link cJSON, writes inferred models too.
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

const ModelNode *model_find_node(const Model *m, const char *service, const char *operation)
{
	if (m == NULL || service == NULL)
		return NULL;
	const ModelNode *any = NULL;
	for (int i = 0; i < m->n_nodes; i++) {
		const ModelNode *n = &m->nodes[i];
		if (n->service == NULL || strcmp(n->service, service) != 0)
			continue;
		if (n->operation == NULL)
			any = n;
		else if (operation && strcmp(n->operation, operation) == 0)
			return n;
	}
	return any;
}

void model_free(Model *m)
{
	if (m == NULL)
		return;
	free(m->path);
	free(m->endpoint);
	free(m->root_service);
	free(m->root_operation);
	free(m->class_key);
	for (int i = 0; i < m->n_classes; i++)
		free(m->classes[i]);
	free(m->classes);
	free(m->class_mix);
	for (int i = 0; i < m->n_nodes; i++) {
		free(m->nodes[i].service);
		free(m->nodes[i].operation);
		free(m->nodes[i].label);
		free(m->nodes[i].pool);
		free(m->nodes[i].why);
	}
	free(m->nodes);
	for (int i = 0; i < m->n_pools; i++) {
		ModelPool *p = &m->pools[i];
		free(p->name);
		free(p->kind);
		free(p->node);
		free(p->used_metric);
		free(p->max_metric);
		free(p->pending_metric);
		free(p->wait_metric);
		free(p->label_key);
		free(p->label_value);
		free(p->why);
	}
	free(m->pools);
	for (int i = 0; i < m->n_budgets; i++) {
		ModelBudget *b = &m->budgets[i];
		free(b->id);
		free(b->evidence);
		free(b->op);
		free(b->unit);
		free(b->label);
	}
	free(m->budgets);
	free(m->why_root);
	free(m->why_classes);
	free(m->why_objective);
	free(m);
}

/* ---- writing ------------------------------------------------------------ */

static void kv_str(Buf *b, const char *key, const char *v, int *first)
{
	if (v == NULL)
		return;
	buf_adds(b, *first ? "" : ", ");
	*first = 0;
	buf_add_json_str(b, key, strlen(key));
	buf_adds(b, ": ");
	buf_add_json_str(b, v, strlen(v));
}

static void kv_tri(Buf *b, const char *key, int v, int *first)
{
	if (v == MODEL_UNKNOWN)
		return;
	buf_adds(b, *first ? "" : ", ");
	*first = 0;
	buf_printf(b, "\"%s\": %s", key, v ? "true" : "false");
}

static void kv_num(Buf *b, const char *key, double v, int *first)
{
	buf_adds(b, *first ? "" : ", ");
	*first = 0;
	buf_printf(b, "\"%s\": %.17g", key, v);
}

void model_write_json(const Model *m, Buf *b)
{
	int first;
	buf_adds(b, "{\n");
	if (m->inferred)
		buf_adds(b, "  \"note\": \"drafted by tailtriage model infer; every \\\"why\\\" says what "
		            "in the data led to the field. Edit what the data cannot know (core, the "
		            "objective, budgets).\",\n");
	if (m->endpoint) {
		buf_adds(b, "  \"endpoint\": ");
		buf_add_json_str(b, m->endpoint, strlen(m->endpoint));
		buf_adds(b, ",\n");
	}
	if (m->root_service || m->root_operation || m->why_root) {
		buf_adds(b, "  \"root\": { ");
		first = 1;
		kv_str(b, "service", m->root_service, &first);
		kv_str(b, "operation", m->root_operation, &first);
		kv_str(b, "why", m->why_root, &first);
		buf_adds(b, " },\n");
	}
	if (m->objective_ms > 0 || m->why_objective) {
		buf_adds(b, "  \"objective\": { ");
		first = 1;
		if (m->objective_ms > 0) {
			kv_num(b, "percentile", m->objective_pct, &first);
			kv_num(b, "threshold_ms", m->objective_ms, &first);
		}
		kv_str(b, "why", m->why_objective, &first);
		buf_adds(b, " },\n");
	}
	if (m->class_key || m->n_classes > 0 || m->why_classes) {
		buf_adds(b, "  \"classes\": {\n    ");
		first = 1;
		kv_str(b, "attribute", m->class_key, &first);
		if (m->n_classes > 0) {
			buf_adds(b, first ? "\"values\": [" : ",\n    \"values\": [");
			first = 0;
			for (int i = 0; i < m->n_classes; i++) {
				buf_adds(b, i ? ", " : "");
				buf_add_json_str(b, m->classes[i], strlen(m->classes[i]));
			}
			buf_adds(b, "]");
			int any_mix = 0;
			for (int i = 0; m->class_mix && i < m->n_classes; i++)
				any_mix |= !isnan(m->class_mix[i]);
			if (any_mix) {
				buf_adds(b, ",\n    \"mix\": { ");
				int f2 = 1;
				for (int i = 0; i < m->n_classes; i++)
					if (!isnan(m->class_mix[i])) {
						buf_adds(b, f2 ? "" : ", ");
						f2 = 0;
						buf_add_json_str(b, m->classes[i], strlen(m->classes[i]));
						buf_printf(b, ": %.4g", m->class_mix[i]);
					}
				buf_adds(b, " }");
			}
		}
		if (m->why_classes) {
			buf_adds(b, first ? "" : ",\n    ");
			first = 1;
			kv_str(b, "why", m->why_classes, &first);
		}
		buf_adds(b, "\n  },\n");
	}
	buf_adds(b, "  \"nodes\": [");
	for (int i = 0; i < m->n_nodes; i++) {
		const ModelNode *n = &m->nodes[i];
		buf_adds(b, i ? ",\n    { " : "\n    { ");
		first = 1;
		kv_str(b, "service", n->service, &first);
		kv_str(b, "operation", n->operation, &first);
		kv_str(b, "label", n->label, &first);
		kv_tri(b, "mandatory", n->mandatory, &first);
		kv_tri(b, "core", n->core, &first);
		kv_str(b, "pool", n->pool, &first);
		kv_str(b, "why", n->why, &first);
		buf_adds(b, " }");
	}
	buf_adds(b, m->n_nodes ? "\n  ],\n" : "],\n");
	buf_adds(b, "  \"pools\": [");
	for (int i = 0; i < m->n_pools; i++) {
		const ModelPool *p = &m->pools[i];
		buf_adds(b, i ? ",\n    { " : "\n    { ");
		first = 1;
		kv_str(b, "name", p->name, &first);
		kv_str(b, "kind", p->kind, &first);
		kv_str(b, "node", p->node, &first);
		if (p->size > 0)
			kv_num(b, "size", (double)p->size, &first);
		if (p->used_metric || p->max_metric || p->pending_metric || p->wait_metric ||
		    p->label_key || p->label_value) {
			buf_adds(b, first ? "\"metrics\": { " : ",\n      \"metrics\": { ");
			first = 0;
			int f2 = 1;
			kv_str(b, "used", p->used_metric, &f2);
			kv_str(b, "max", p->max_metric, &f2);
			kv_str(b, "pending", p->pending_metric, &f2);
			kv_str(b, "wait", p->wait_metric, &f2);
			kv_str(b, "label_key", p->label_key, &f2);
			kv_str(b, "label_value", p->label_value, &f2);
			buf_adds(b, " }");
		}
		if (p->why) {
			buf_adds(b, first ? "" : ",\n      ");
			first = 1;
			kv_str(b, "why", p->why, &first);
		}
		buf_adds(b, " }");
	}
	buf_adds(b, m->n_pools ? "\n  ],\n" : "],\n");
	buf_adds(b, "  \"budgets\": [");
	for (int i = 0; i < m->n_budgets; i++) {
		const ModelBudget *x = &m->budgets[i];
		buf_adds(b, i ? ",\n    { " : "\n    { ");
		first = 1;
		kv_str(b, "id", x->id, &first);
		kv_str(b, "evidence", x->evidence, &first);
		kv_str(b, "op", x->op, &first);
		kv_num(b, "threshold", x->threshold, &first);
		kv_str(b, "unit", x->unit, &first);
		kv_str(b, "label", x->label, &first);
		buf_adds(b, " }");
	}
	buf_adds(b, m->n_budgets ? "\n  ]\n}\n" : "]\n}\n");
}

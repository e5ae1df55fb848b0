/* model.c - lookups and release for the plain endpoint model. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

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
	free(m);
}

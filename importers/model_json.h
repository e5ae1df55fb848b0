/*
 * model_json.h - read an endpoint model file (JSON, schema in
 * docs/model.md) into the plain Model of common/model.h.
 */
#ifndef TT_MODEL_JSON_H
#define TT_MODEL_JSON_H

#include "err.h"
#include "model.h"

/* Loads path. Returns 0 and *out (free with model_free) or a negative code
 * with a located message. */
int model_load(const char *path, Model **out, Err *err);

/* Parses a model from memory; name is used in messages. */
int model_parse(const char *name, const char *text, size_t len, Model **out, Err *err);

#endif

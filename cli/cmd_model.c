/*
 * cmd_model.c - `tailtriage model infer`: draft an endpoint model from the
 * data, with the reason for every field; `tailtriage model check`: where a
 * model file and the data disagree. analysis/model_infer.c does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "model_infer.h"
#include "sanitize.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage model infer [--db FILE] [--endpoint SERVICE ROUTE] [--window A..B]\n"
	      "                             [-o FILE]\n"
	      "       tailtriage model check --model FILE [--db FILE] [--window A..B]\n\n"
	      "infer: drafts an endpoint model from the traces and metrics in the database and\n"
	      "says why for every field: the ingress (the endpoint asked for, else the most\n"
	      "common one), the DAG nodes of that endpoint, mandatory or optional (how often\n"
	      "each branch is absent or cut short in that endpoint's requests),\n"
	      "the workload-class attribute, and the pools and executors found through\n"
	      "OpenTelemetry metric names (db.client.connection.*, http.client.open_connections,\n"
	      "executor.*, queue-age histograms), matched to services by their labels or by\n"
	      "the tokens of their names. Core nodes, the objective and budgets cannot be\n"
	      "inferred; edit them in. The file it writes is a model file (docs/model.md).\n\n"
	      "check: lists where a model file and the data disagree (pool size against the\n"
	      "metric max, a node absent from the traces, a declared class absent, a pool\n"
	      "selector that matches no series). Exit status 0 either way.\n\n"
	      "  --db FILE        database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --endpoint SERVICE ROUTE  (infer) the endpoint to describe, as 'tailtriage\n"
	      "                   endpoints' lists it (default: the most common one)\n"
	      "  --window A..B    range to read (RFC 3339 or epoch ms; default: all data)\n"
	      "  -o, --out FILE   write the model to FILE and print the reasons; without it\n"
	      "                   the model is printed on standard output\n"
	      "  --model FILE     (check) the model to compare with the data\n",
	      out);
}

/* The reasons, one field a line, for a person at a terminal. */
static void summary(const Model *m, Buf *o)
{
	char a[512], b[1024];
	san_clean(m->endpoint ? m->endpoint : "(none)", a, sizeof a);
	san_clean(m->why_root ? m->why_root : "", b, sizeof b);
	buf_printf(o, "endpoint  %s\n          why: %s\n", a, b);
	if (m->class_key) {
		san_clean(m->class_key, a, sizeof a);
		buf_printf(o, "classes   %s:", a);
		for (int i = 0; i < m->n_classes; i++) {
			san_clean(m->classes[i], a, sizeof a);
			buf_printf(o, " %s", a);
		}
		buf_adds(o, "\n");
	} else {
		buf_adds(o, "classes   (none)\n");
	}
	if (m->why_classes) {
		san_clean(m->why_classes, b, sizeof b);
		buf_printf(o, "          why: %s\n", b);
	}
	for (int i = 0; i < m->n_nodes; i++) {
		const ModelNode *n = &m->nodes[i];
		char s[256], op[256] = "", pool[256] = "";
		san_clean(n->service, s, sizeof s);
		if (n->operation)
			san_clean(n->operation, op, sizeof op);
		if (n->pool)
			san_clean(n->pool, pool, sizeof pool);
		buf_printf(o, "node      %s%s%s: %s%s%s\n", s, op[0] ? " " : "", op,
		           n->mandatory == MODEL_UNKNOWN ? "mandatory unknown"
		           : n->mandatory                ? "mandatory"
		                                         : "optional",
		           pool[0] ? ", pool " : "", pool);
		if (n->why) {
			san_clean(n->why, b, sizeof b);
			buf_printf(o, "          why: %s\n", b);
		}
	}
	for (int i = 0; i < m->n_pools; i++) {
		const ModelPool *p = &m->pools[i];
		char nm[256], nd[256] = "?";
		san_clean(p->name, nm, sizeof nm);
		if (p->node)
			san_clean(p->node, nd, sizeof nd);
		buf_printf(o, "pool      %s (%s) -> %s", nm, p->kind ? p->kind : "?", nd);
		if (p->size > 0)
			buf_printf(o, ", %lld slots", (long long)p->size);
		buf_adds(o, "\n");
		if (p->why) {
			san_clean(p->why, b, sizeof b);
			buf_printf(o, "          why: %s\n", b);
		}
	}
	if (m->n_pools == 0)
		buf_adds(o, "pools     (none: no pool or executor metrics by OpenTelemetry names)\n");
	san_clean(m->why_objective ? m->why_objective : "", b, sizeof b);
	buf_printf(o, "objective %s\n", b);
}

/* Writes b to path through a temporary file renamed over it, so a failed
 * write never leaves half a model behind. */
static int write_file(const char *path, const Buf *b)
{
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
		return cli_fail("%s: path too long", path);
	FILE *f = fopen(tmp, "w");
	if (f == NULL)
		return cli_fail("%s: cannot write: %s", path, strerror(errno));
	size_t w = fwrite(b->p, 1, b->len, f);
	int bad = w != b->len;
	if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
		int e = errno;
		remove(tmp);
		return cli_fail("%s: write failed: %s", path, strerror(e));
	}
	return 0;
}

int cmd_model(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"window", required_argument, NULL, 'w'},
		{"out", required_argument, NULL, 'o'},
		{"model", required_argument, NULL, 'm'},
		{"endpoint", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (cli_is_help(argv[1])) {
		usage(stdout);
		return 0;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "infer") != 0 && strcmp(verb, "check") != 0) {
		static const char *const verbs[] = {"infer", "check"};
		char word[256];
		san_clean(verb, word, sizeof word);
		Buf m;
		buf_init(&m);
		cli_suggest(&m, verb, verbs, 2, "");
		fprintf(stderr, "tailtriage model: unknown verb '%s'%s (infer or check)\n", word,
		        buf_str(&m));
		buf_fini(&m);
		usage(stderr);
		return 2;
	}
	const char *db = cli_default_db(), *window = NULL, *outp = NULL, *model_path = NULL;
	CliEndpoint ep = {0};
	int c;
	optind = 1;
	argc = 1 + cli_endpoint_argv(argc - 1, argv + 1);
	char who[16];
	snprintf(who, sizeof who, "model %s", verb); /* infer or check */
	while ((c = cli_getopt(who, argc - 1, argv + 1, "d:w:o:m:h", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'w': window = optarg; break;
		case 'o': outp = optarg; break;
		case 'm': model_path = optarg; break;
		case 'E':
			if (cli_endpoint_parse(optarg, &ep))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, "tailtriage model: unexpected argument '%s'\n", argv[optind + 1]);
		usage(stderr);
		return 2;
	}
	int check = strcmp(verb, "check") == 0;
	if (check && (model_path == NULL || outp)) {
		fprintf(stderr, "tailtriage model check: needs --model FILE (and takes no -o)\n");
		return 2;
	}
	if (!check && model_path) {
		fprintf(stderr, "tailtriage model infer: takes no --model\n");
		return 2;
	}
	if (check && ep.set) {
		fprintf(stderr, "tailtriage model check: takes no --endpoint (the model's root names it)\n");
		return 2;
	}
	Period rg;
	if (cli_ranges(window, NULL, &rg))
		return 2;
	if (access(db, F_OK) != 0)
		return cli_fail("%s: no such database (import data first)", db);
	Err err = {0};
	Store *st = NULL;
	if (store_open(db, STORE_READONLY, &st, &err))
		return cli_fail("%s", err.msg);
	Model *m = NULL;
	int rc = 1;
	Buf out;
	buf_init(&out);
	if (check) {
		ModelFinding *f = NULL;
		int n = 0;
		if (cli_model(model_path, NULL, rg.win.from, rg.win.to, &m))
			goto done;
		if (model_check(st, m, rg.win.from, rg.win.to, &f, &n, &err)) {
			cli_fail("%s", err.msg);
			goto done;
		}
		for (int i = 0; i < n; i++) {
			char t[1024];
			san_clean(f[i].text, t, sizeof t);
			buf_printf(&out, "%s\n", t);
		}
		if (n == 0)
			buf_adds(&out, "the model and the data agree on pools, nodes and classes\n");
		model_findings_free(f, n);
		fwrite(out.p, 1, out.len, stdout);
		rc = 0;
		goto done;
	}
	if (ep.set) {
		/* a name that is not in the data is refused, with the ones that are */
		Model *none = NULL;
		int erc = cli_model_endpoint("none", st, &rg, CLI_EP_MUST_EXIST, &ep, &none);
		model_free(none);
		if (erc) {
			rc = erc;
			goto done;
		}
	}
	if (model_infer_endpoint(st, rg.win.from, rg.win.to, ep.set ? ep.service : NULL,
	                         ep.set ? ep.route : NULL, &m, &err)) {
		cli_fail("%s", err.msg);
		goto done;
	}
	model_write_json(m, &out);
	if (outp) {
		if (write_file(outp, &out))
			goto done;
		buf_reset(&out);
		summary(m, &out);
		buf_printf(&out, "\nwrote %s: edit it, then pass it with --model\n", outp);
	}
	fwrite(out.p, 1, out.len, stdout);
	rc = 0;
done:
	buf_fini(&out);
	model_free(m);
	store_close(st);
	return rc;
}

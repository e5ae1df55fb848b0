/*
 * cli.h - subcommands. Each cmd_*.c implements one `tailtriage NAME`;
 * each returns the process exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef TT_CLI_H
#define TT_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "err.h"
#include "evidence.h"
#include "model.h"
#include "period.h"
#include "store.h"

int cmd_import(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_tui(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_drill(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_endpoints(int argc, char **argv);

/* Default database path: $TAILTRIAGE_DB or ./tailtriage.db. */
const char *cli_default_db(void);

/* Prints "tailtriage: msg" to stderr; returns 1. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses --window ("A..B", NULL: all data) and --baseline ("A..B", or
 * "before": the same length just before a closed window; NULL: none) into
 * r. Returns 0, or prints the error and returns 2 (a usage error). */
int cli_ranges(const char *window, const char *baseline, Period *r);

/* Parses --skew-tolerance: "ABS", "PCT%" or "ABS+PCT%" (ABS a duration
 * with a unit ns, us, ms or s; PCT a percentage of the shorter sibling,
 * 0 to 50), or "0" / "off" for none. Sets out->set. Returns 0, or prints
 * the error and returns 2 (a usage error). */
int cli_skew_tolerance(const char *arg, SkewTolerance *out);

/* --sample N: the most requests of a population read before a uniform
 * sample is taken instead; "all" (or 0) reads every request. 0 and *out
 * set, or prints why and returns 2. */
int cli_sample(const char *arg, int64_t *out);

/* --sampled S: how the traces were sampled, a share ("6%", "0.06",
 * "1/16"), "tail" or "all" (evidence_sampling_parse()). 0 and *out set,
 * or prints why and returns 2. */
int cli_sampled(const char *arg, EvSampling *out);

/* The --sampled lines of a usage text. */
#define CLI_SAMPLED_HELP                                                                  \
	"  --sampled S      how the traces were sampled, when the spans do not say\n"        \
	"                   (tracestate ot=th, Jaeger sampler tags): a head-sampled share\n" \
	"                   (6%, 0.06, 1/16) scales counts and rates back; 'tail' (slow\n"   \
	"                   and failed requests kept) takes no percentile from the traces,\n" \
	"                   only from complete metrics; 'all' says nothing was dropped\n"

/* The --sample lines of a usage text. */
#define CLI_SAMPLE_HELP                                                                   \
	"  --sample N       read at most N requests of the window and N of the baseline:\n"  \
	"                   beyond that, N evenly spaced in time (a uniform sample), whose\n"  \
	"                   size every figure and interval then carries (default 20000;\n"  \
	"                   'all' reads every request)\n"

/* 0 when format is "text" or "json"; else prints why and returns 2. */
int cli_text_or_json(const char *format);

/* Removes path and everything below it (a temporary folder that other
 * threads may still be writing into: tries until the folder is gone, for at
 * most about a second). Returns 0 when it is gone. */
int cli_remove_tree(const char *path);

/* 0 when wclass is NULL or a workload class the model declares or the
 * stored spans carry; else prints "unknown class 'C' (known: ...)" and
 * returns 2 (a usage error), or 1 when the classes cannot be read. */
int cli_check_class(Store *st, const Model *model, const char *wclass);

/* Warns on stderr when a receiver is to listen on an address other than
 * loopback (listen as --listen takes it) without a bearer token: anyone
 * who can reach it may then write into the database. */
void cli_warn_open_listener(const char *listen, const char *token);

/* Appends s to b as one word a POSIX shell reads back unchanged (in
 * single quotes when it holds anything but [A-Za-z0-9_./:=@%+,-]). */
struct Buf;
void cli_shell_word(struct Buf *b, const char *s);

/* getopt_long(argc, argv, shortopts, longopts, NULL) for `tailtriage WHO`
 * (e.g. "report", "drill train"), with the errors said here, once, in the
 * project's words: an unknown option with the closest known ones ("unknown
 * option '--windwo'; did you mean '--window'?"), an ambiguous abbreviation
 * with what it could be, a missing or unexpected value, then where the
 * options are listed. Returns what getopt_long returns; '?' after any
 * error (the caller returns 2, a usage error). */
struct option;
struct Buf;
int cli_getopt(const char *who, int argc, char **argv, const char *shortopts,
               const struct option *longopts);

/* Appends "; did you mean 'X'?" (or "'X' or 'Y'") to b when names[0 .. n)
 * holds names close to word (suggest_pick), each shown after dashes ("--"
 * for options, "" for commands). Returns how many were offered. */
int cli_suggest(struct Buf *b, const char *word, const char *const *names, int n,
                const char *dashes);

/* True when arg is "-h" or "--help". */
int cli_is_help(const char *arg);

/* Where the model named by --model is: a path as given when it names a
 * file (or holds a '/'), else a bundled model of the share folder by name
 * ("mercury-home" or "mercury-home.model.json" -> SHARE/models/
 * mercury-home.model.json). Writes the path into out; returns 1 when it
 * is a bundled model, 0 otherwise. */
int cli_model_path(const char *name, char *out, size_t n);

/* Loads a model file (path or bundled name, see cli_model_path) or returns
 * NULL with err set. path may be NULL (no model): then returns NULL with
 * err->code == 0. */
Model *cli_load_model(const char *path, Err *err);

/* The model a command uses (issue 12): the file at path; "none": no model;
 * NULL: a model inferred from st over [from, to) (analysis/model_infer.h),
 * announced on stderr in one line (st NULL, or no spans and no pool
 * metrics to infer from: no model, also said in one line). Returns 0 and *out
 * (NULL when none; free with model_free), or 1 after printing the error. */
int cli_model(const char *path, Store *st, int64_t from, int64_t to, Model **out);

/* --endpoint SERVICE ROUTE (cli/endpoint.c, docs/endpoints.md). */
typedef struct CliEndpoint {
	int set;                 /* an endpoint is named (or was chosen) */
	char service[256];
	char route[768];
	int from_model;          /* the model's root named it */
	int others;              /* chosen by default: the other endpoints listed */
} CliEndpoint;

/* The usage lines of --endpoint. */
#define CLI_ENDPOINT_HELP                                                                 \
	"  --endpoint SERVICE ROUTE  the endpoint to analyse, as 'tailtriage endpoints'\n"     \
	"                   lists it (one word or two); default: the model's root, else the\n" \
	"                   endpoint whose percentile rose the most significantly, else the\n" \
	"                   most common one\n"

/* Joins "--endpoint SERVICE ROUTE" (two words) into one argument in argv,
 * before getopt runs; returns the new argc (the words after it move up,
 * NULLs are left past the new end). */
int cli_endpoint_argv(int argc, char **argv);

/* --endpoint's value ("SERVICE ROUTE") into ep. 0, or prints why and
 * returns 2. */
int cli_endpoint_parse(const char *arg, CliEndpoint *ep);

enum {
	CLI_EP_QUIET = 1,        /* no line on stderr about the choice */
	CLI_EP_MUST_EXIST = 2,   /* --endpoint must name an endpoint of the data
	                          * (when the data has any): else an error */
};

/* The model and the endpoint of a command, decided together: the endpoint
 * is --endpoint (ep->set), else the root of the model file at model_path,
 * else the first of `tailtriage endpoints` over per (said on stderr with
 * why, and how many others there are, when there are others); a model file whose root names
 * another endpoint than --endpoint is a usage error; without model_path,
 * the model is drafted for the endpoint (cli_model_infer()), "none": no
 * model. Returns 0 with *out (NULL: none) and ep set (unless the data has
 * no request), 1 after printing an error, 2 for a usage error. */
int cli_model_endpoint(const char *model_path, Store *st, const Period *per, int flags,
                       CliEndpoint *ep, Model **out);

/* cli_model(NULL, ...) for endpoint ep (NULL: the most common one). */
int cli_model_infer(Store *st, int64_t from, int64_t to, const CliEndpoint *ep, Model **out);

/* Where the model of a command came from, for its output: "file",
 * "inferred" or "none". */
const char *cli_model_source(const Model *m);

struct ModelFinding;
struct Buf;

/* Appends "Model and data" lines (text) for the findings of model_check. */
void cli_model_findings_text(const struct ModelFinding *f, int n, const Model *m,
                             struct Buf *out);

/* Appends the member "name": value (JSON text) to the JSON object that
 * ends out (the last '}' of out). */
void cli_json_add_member(struct Buf *out, const char *name, const char *value);

/* Appends a "model" member to the JSON object that ends out (the last '}'
 * of out): {"source", "path", "findings": [{kind, subject, text}]}. */
void cli_model_findings_json(const struct ModelFinding *f, int n, const Model *m,
                             struct Buf *out);

#endif

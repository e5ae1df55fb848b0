/*
 * theme.h - semantic colour roles and the glyph set.
 *
 * Views never name a colour: they tag cells with a role (ROLE_BREACH,
 * ROLE_WAIT ...). One table (theme.c) maps each role to a colour pair and
 * attributes for colour terminals, and to attributes alone for monochrome
 * terminals and NO_COLOR. Meaning never rides on colour alone: every role
 * that matters also has a glyph or a label (bars use a different glyph per
 * split component, breaches carry a mark and the word, the selection has a
 * pointer).
 *
 * Glyphs come in two sets: Unicode (box drawing, blocks) and ASCII for
 * terminals without UTF-8 line drawing (--ascii).
 */
#ifndef TT_THEME_H
#define TT_THEME_H

#include <stdint.h>

typedef enum Role {
	ROLE_NORMAL = 0,
	ROLE_DIM,          /* secondary text, "no data" */
	ROLE_TITLE,        /* endpoint name, view titles */
	ROLE_HEADING,      /* column headings */
	ROLE_SELECTED,     /* the selected row */
	ROLE_BREACH,       /* objective or budget breached */
	ROLE_WARN,         /* thin sample, data-quality notes */
	ROLE_OK,           /* objective met */
	ROLE_QUEUE,        /* queue component */
	ROLE_WAIT,         /* client-wait component */
	ROLE_SERVICE,      /* service component */
	ROLE_UNKNOWN,      /* unknown split */
	ROLE_CRIT,         /* critical path */
	ROLE_TAB,          /* inactive tab */
	ROLE_TAB_ACTIVE,   /* active tab */
	ROLE_STATUS,       /* status line */
	ROLE_LIVE,         /* LIVE marker */
	ROLE_PAUSED,       /* PAUSED marker */
	ROLE_ERROR,        /* error message */
	ROLE_PROMPT,       /* input prompt */
	ROLE_KEY,          /* key names in help */
	ROLE_COUNT
} Role;

/* Colours as curses numbers (0..7), -1 = terminal default. */
typedef struct RoleStyle {
	const char *name;  /* "breach" ... (docs, debugging) */
	short fg, bg;      /* colour mode */
	unsigned attr;     /* THEME_A_* in colour mode */
	unsigned mono;     /* THEME_A_* without colour */
} RoleStyle;

enum {
	THEME_A_BOLD = 1u << 0,
	THEME_A_REVERSE = 1u << 1,
	THEME_A_UNDERLINE = 1u << 2,
	THEME_A_DIM = 1u << 3,
};

/* The theme table, indexed by Role. Static storage. */
const RoleStyle *theme_style(Role r);

typedef struct Glyphs {
	uint32_t tree_vert;     /* │  |  : an ancestor continues below */
	uint32_t tree_tee;      /* ├  |  : a sibling follows */
	uint32_t tree_last;     /* └  `  : last child */
	uint32_t edge_serial;   /* ─  -  : serial edge */
	uint32_t edge_parallel; /* ═  =  : parallel (fan-out) edge */
	uint32_t bar_queue;     /* ░  :  */
	uint32_t bar_wait;      /* ▒  ~  */
	uint32_t bar_service;   /* █  #  */
	uint32_t bar_unknown;   /* ?  ?  */
	uint32_t bar_span;      /* ▬  =  : a span without a split (waterfall) */
	uint32_t crit;          /* ◆  *  : on the critical path */
	uint32_t breach;        /* ✖  !  */
	uint32_t ok;            /* ✔  +  */
	uint32_t pointer;       /* ▶  >  : selected row */
	uint32_t hline;         /* ─  -  */
	uint32_t vline;         /* │  |  */
	uint32_t ellipsis;      /* …  ~  */
	uint32_t arrow;         /* →  >  */
	uint32_t delta_up;      /* ▲  ^  */
	uint32_t delta_down;    /* ▼  v  */
	uint32_t collapsed;     /* ▸  +  : subtree hidden */
	uint32_t spark[9];      /* " ▁▂▃▄▅▆▇█" / " .,:;+*#@" */
	uint32_t tick;          /* ┬  +  : axis tick */
	uint32_t marker;        /* ^ : percentile marker under a histogram */
	uint32_t corner[4];     /* ┌ ┐ └ ┘ / + + + + : box corners */
} Glyphs;

/* The glyph set; ascii != 0 selects the ASCII one. Static storage. */
const Glyphs *theme_glyphs(int ascii);

#endif

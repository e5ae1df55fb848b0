/*
 * theme.c - the one table of role styles and the two glyph sets.
 */
#include "theme.h"

enum { BLACK = 0, RED = 1, GREEN = 2, YELLOW = 3, BLUE = 4, MAGENTA = 5, CYAN = 6, WHITE = 7,
       DEF = -1 };

#define B THEME_A_BOLD
#define R THEME_A_REVERSE
#define U THEME_A_UNDERLINE
#define D THEME_A_DIM

static const RoleStyle styles[ROLE_COUNT] = {
	[ROLE_NORMAL] = {"normal", DEF, DEF, 0, 0},
	[ROLE_DIM] = {"dim", DEF, DEF, D, D},
	[ROLE_TITLE] = {"title", CYAN, DEF, B, B},
	[ROLE_HEADING] = {"heading", DEF, DEF, B, U},
	[ROLE_SELECTED] = {"selected", BLACK, CYAN, 0, R},
	[ROLE_BREACH] = {"breach", WHITE, RED, B, B | R},
	[ROLE_WARN] = {"warn", YELLOW, DEF, B, B},
	[ROLE_OK] = {"ok", GREEN, DEF, B, 0},
	[ROLE_QUEUE] = {"queue", MAGENTA, DEF, 0, 0},
	[ROLE_WAIT] = {"wait", YELLOW, DEF, 0, 0},
	[ROLE_SERVICE] = {"service", CYAN, DEF, 0, 0},
	[ROLE_UNKNOWN] = {"unknown", DEF, DEF, D, D},
	[ROLE_CRIT] = {"crit", RED, DEF, B, B},
	[ROLE_TAB] = {"tab", DEF, DEF, 0, 0},
	[ROLE_TAB_ACTIVE] = {"tab-active", BLACK, WHITE, B, R | B},
	[ROLE_STATUS] = {"status", BLACK, WHITE, 0, R},
	[ROLE_LIVE] = {"live", BLACK, GREEN, B, R | B},
	[ROLE_PAUSED] = {"paused", BLACK, YELLOW, B, R | B},
	[ROLE_ERROR] = {"error", WHITE, RED, B, R | B},
	[ROLE_PROMPT] = {"prompt", DEF, DEF, B, B},
	[ROLE_KEY] = {"key", CYAN, DEF, B, B},
};

const RoleStyle *theme_style(Role r)
{
	if ((int)r < 0 || r >= ROLE_COUNT)
		r = ROLE_NORMAL;
	return &styles[r];
}

static const Glyphs unicode = {
	.tree_vert = 0x2502, .tree_tee = 0x251C, .tree_last = 0x2514,
	.edge_serial = 0x2500, .edge_parallel = 0x2550,
	.bar_queue = 0x2591, .bar_wait = 0x2592, .bar_service = 0x2588, .bar_unknown = '?',
	.bar_span = 0x25AC,
	.crit = 0x25C6, .breach = 0x2716, .ok = 0x2714, .pointer = 0x25B6,
	.hline = 0x2500, .vline = 0x2502, .ellipsis = 0x2026, .arrow = 0x2192,
	.delta_up = 0x25B2, .delta_down = 0x25BC, .collapsed = 0x25B8,
	.spark = {' ', 0x2581, 0x2582, 0x2583, 0x2584, 0x2585, 0x2586, 0x2587, 0x2588},
	.tick = 0x252C, .marker = '^',
	.corner = {0x250C, 0x2510, 0x2514, 0x2518},
};

static const Glyphs ascii = {
	.tree_vert = '|', .tree_tee = '|', .tree_last = '`',
	.edge_serial = '-', .edge_parallel = '=',
	.bar_queue = ':', .bar_wait = '~', .bar_service = '#', .bar_unknown = '?',
	.bar_span = '=',
	.crit = '*', .breach = '!', .ok = '+', .pointer = '>',
	.hline = '-', .vline = '|', .ellipsis = '~', .arrow = '>',
	.delta_up = '^', .delta_down = 'v', .collapsed = '+',
	.spark = {' ', '.', ',', ':', ';', '+', '*', '#', '@'},
	.tick = '+', .marker = '^',
	.corner = {'+', '+', '+', '+'},
};

const Glyphs *theme_glyphs(int use_ascii)
{
	return use_ascii ? &ascii : &unicode;
}
